// How the MPI face reads MPI's arguments: which predefined datatypes and ops have a Strata
// equivalent, and how a datatype lays out its data (contiguous, so a collective that only moves data
// can move it as bytes straight from the buffer, or to be packed first: src/mpi_face/packed_blocks.h).
#pragma once

#include <mpi.h>
#include <strata/strata.h>

#include <cstddef>

namespace strata::mpi_face {

// The Strata type of a predefined MPI datatype that MPI allows in MPI_SUM/PROD/MAX/MIN reductions
// (its C, fixed-width and Fortran integer and floating-point spellings), by its kind and size
// (MPI_LONG is 64-bit on LP64 systems, 32-bit elsewhere). False for every other datatype: 16-bit,
// MPI_CHAR (not a reduction type in MPI; its signedness varies), MPI_BYTE, logical, complex,
// pair and derived types.
bool strataTypeOf(MPI_Datatype type, strataDataType_t* out);
// MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN; false for every other op (user-defined, logical, bitwise,
// MINLOC/MAXLOC, REPLACE ...).
bool strataOpOf(MPI_Op op, strataRedOp_t* out);

struct Layout {
  bool valid = false;       // MPI answered for it (not MPI_DATATYPE_NULL or freed)
  bool contiguous = false;  // `count` elements are `count * size` bytes back to back from the buffer's start
  size_t size = 0;          // bytes of data in one element
  MPI_Aint extent = 0;      // the stride between consecutive elements
  MPI_Aint trueLb = 0;      // where an element's data starts and ends, relative to its start
  MPI_Aint trueExtent = 0;
};
// Contiguous means predefined (or a duplicate, or a contiguous repetition, of a contiguous type)
// with no gap inside an element or between elements: the bytes MPI would move are the bytes in
// memory, in order. An element with overlapping or permuted parts is not contiguous even when its
// size and extent agree.
Layout layoutOf(MPI_Datatype type);

// Whether this MPI library packs data (MPI_Pack) as the plain bytes of its type map, in order, so a
// rank may pack a non-contiguous datatype and exchange the bytes with a rank that moves the same
// type signature straight from a contiguous buffer. Checked once per process; the same on every rank.
bool packsAsPlainBytes();

}  // namespace strata::mpi_face
