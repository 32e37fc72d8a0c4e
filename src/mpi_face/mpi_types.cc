#include "src/mpi_face/mpi_types.h"

namespace strata::mpi_face {

namespace {

int sizeOf(MPI_Datatype type) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return size;
}

}  // namespace

bool strataTypeOf(MPI_Datatype type, strataDataType_t* out) {
  if (type == MPI_DATATYPE_NULL) return false;
  if (type == MPI_FLOAT) {
    *out = strataFloat32;
    return true;
  }
  if (type == MPI_DOUBLE) {
    *out = strataFloat64;
    return true;
  }
  // Integers: every spelling MPI has, signed and unsigned, mapped by the size it has here.
  const MPI_Datatype signedTypes[] = {MPI_INT8_T,  MPI_SIGNED_CHAR, MPI_CHAR,      MPI_INT16_T, MPI_SHORT,
                                      MPI_INT32_T, MPI_INT,         MPI_INT64_T,   MPI_LONG,    MPI_LONG_LONG_INT,
                                      MPI_LONG_LONG};
  const MPI_Datatype unsignedTypes[] = {MPI_UINT8_T,  MPI_UNSIGNED_CHAR, MPI_UINT16_T,          MPI_UNSIGNED_SHORT,
                                        MPI_UINT32_T, MPI_UNSIGNED,      MPI_UINT64_T,          MPI_UNSIGNED_LONG,
                                        MPI_UNSIGNED_LONG_LONG};
  for (MPI_Datatype t : signedTypes) {
    if (type != t) continue;
    switch (sizeOf(type)) {
      case 1: *out = strataInt8; return true;
      case 4: *out = strataInt32; return true;
      case 8: *out = strataInt64; return true;
      default: return false;  // 16-bit integers have no Strata type
    }
  }
  for (MPI_Datatype t : unsignedTypes) {
    if (type != t) continue;
    switch (sizeOf(type)) {
      case 1: *out = strataUint8; return true;
      case 4: *out = strataUint32; return true;
      case 8: *out = strataUint64; return true;
      default: return false;
    }
  }
  return false;
}

bool strataOpOf(MPI_Op op, strataRedOp_t* out) {
  if (op == MPI_SUM) *out = strataSum;
  else if (op == MPI_PROD) *out = strataProd;
  else if (op == MPI_MAX) *out = strataMax;
  else if (op == MPI_MIN) *out = strataMin;
  else return false;
  return true;
}

Layout layoutOf(MPI_Datatype type) {
  Layout l;
  if (type == MPI_DATATYPE_NULL) return l;
  int size = 0;
  MPI_Aint lb = 0, extent = 0, trueLb = 0, trueExtent = 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS || PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(type, &trueLb, &trueExtent) != MPI_SUCCESS) {
    return l;
  }
  l.size = static_cast<size_t>(size);
  l.extent = static_cast<size_t>(extent);
  // No gaps inside an element, none between consecutive elements, nothing before the start.
  l.contiguous = size > 0 && lb == 0 && trueLb == 0 && trueExtent == size && extent == size;
  return l;
}

}  // namespace strata::mpi_face
