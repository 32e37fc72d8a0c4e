// How the MPI face reads MPI's arguments: which predefined datatypes and ops have a Strata
// equivalent, and which datatypes lay their data out contiguously (so a collective that only moves
// data can move it as bytes).
#pragma once

#include <mpi.h>
#include <strata/strata.h>

#include <cstddef>

namespace strata::mpi_face {

// The Strata type of a predefined MPI datatype, by its kind and size (MPI_LONG is 64-bit on LP64
// systems, 32-bit elsewhere). False for every other datatype (16-bit, logical, pair, derived ...).
bool strataTypeOf(MPI_Datatype type, strataDataType_t* out);
// MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN; false for every other op (user-defined, logical, bitwise,
// MINLOC/MAXLOC, REPLACE ...).
bool strataOpOf(MPI_Op op, strataRedOp_t* out);

// A datatype whose `count` elements are `count * size` bytes back to back from the buffer's start.
struct Layout {
  bool contiguous = false;
  size_t size = 0;    // bytes of one element
  size_t extent = 0;  // equal to size when contiguous
};
Layout layoutOf(MPI_Datatype type);

}  // namespace strata::mpi_face
