#include "src/mpi_face/serve.h"

#include <cstdio>

#include "src/mpi_face/mpi_types.h"

namespace strata::mpi_face {

int rankOf(MPI_Comm comm) {
  int r = 0;
  PMPI_Comm_rank(comm, &r);
  return r;
}
int sizeOf(MPI_Comm comm) {
  int p = 1;
  PMPI_Comm_size(comm, &p);
  return p;
}

strataComm_t servable(Call c, MPI_Comm comm) {
  const char* why = nullptr;
  if (!mayServe(c, comm, &why)) return countPassed(c, why), nullptr;
  strataComm_t sc = strataCommOf(comm, &why);
  if (sc == nullptr) countPassed(c, why);
  return sc;
}

strataComm_t reduction(Call c, MPI_Comm comm, MPI_Datatype type, MPI_Op op, strataDataType_t* t, strataRedOp_t* o) {
  const char* why = nullptr;
  if (!mayServe(c, comm, &why)) return countPassed(c, why), nullptr;
  if (!strataTypeOf(type, t)) return countPassed(c, "datatype without a Strata type"), nullptr;
  if (!strataOpOf(op, o)) return countPassed(c, "op without a Strata op"), nullptr;
  return servable(c, comm);
}

strataComm_t movement(Call c, MPI_Comm comm) {
  const char* why = nullptr;
  if (!mayServe(c, comm, &why)) return countPassed(c, why), nullptr;
  if (!packsAsPlainBytes()) return countPassed(c, "this MPI does not pack datatypes as their plain bytes"), nullptr;
  return servable(c, comm);
}

void refuseInvalid(Call c, MPI_Comm comm, strataComm_t sc, const char* why, const char* detail) {
  if (sc == nullptr) return;  // not Strata's call on any rank: counted as passed already
  countPassed(c, why);
  Guard guard;  // the refusal's notices are Strata's own MPI calls
  char reason[160];
  std::snprintf(reason, sizeof reason, "MPI_%s: %s", callName(c), detail != nullptr ? detail : why);
  (void)strataCommRefuseCall(sc, reason);  // where it fails, comm is unusable already; MPI reports the arguments
}

bool rootInRange(Call c, MPI_Comm comm, strataComm_t sc, int root) {
  if (root >= 0 && root < sizeOf(comm)) return true;
  refuseInvalid(c, comm, sc, "root out of range (MPI reports it)");
  return false;
}

int unpacked(Call c, MPI_Comm comm, int rc, PackedBlocks* out) {
  if (rc != MPI_SUCCESS || out == nullptr || out->unpackOut()) return rc;
  return failPacking(c, comm, *out);
}

}  // namespace strata::mpi_face
