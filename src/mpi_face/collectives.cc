// The MPI collectives through MPI's profiling interface: each runs on Strata when it can and calls
// its PMPI_ version otherwise (face.h counts which and why). MPI's argument rules are translated
// here: int counts, v-variants' counts and displacements in units of the datatype, MPI_IN_PLACE
// where MPI allows it, and send and receive types that differ but have the same type signature
// (collectives that only move data move contiguous data as bytes).
#include <mpi.h>
#include <strata/strata.h>

#include <cstring>
#include <vector>

#include "src/mpi_face/face.h"
#include "src/mpi_face/mpi_types.h"

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace strata::mpi_face {
namespace {

// Reductions: a predefined type and op with a Strata equivalent, a valid count.
bool reduction(Call c, MPI_Comm comm, int count, MPI_Datatype type, MPI_Op op, strataDataType_t* t, strataRedOp_t* o,
               strataComm_t* sc) {
  const char* why = nullptr;
  if (!mayServe(c, comm, &why)) return countPassed(c, why), false;
  if (count < 0) return countPassed(c, "negative count (MPI reports it)"), false;
  if (!strataTypeOf(type, t)) return countPassed(c, "datatype without a Strata type"), false;
  if (!strataOpOf(op, o)) return countPassed(c, "op without a Strata op"), false;
  *sc = strataCommOf(comm, &why);
  if (*sc == nullptr) return countPassed(c, why), false;
  return true;
}

// Data movement: every datatype significant here is contiguous.
bool movement(Call c, MPI_Comm comm, std::initializer_list<MPI_Datatype> types, strataComm_t* sc) {
  const char* why = nullptr;
  if (!mayServe(c, comm, &why)) return countPassed(c, why), false;
  for (MPI_Datatype t : types) {
    if (!layoutOf(t).contiguous) return countPassed(c, "non-contiguous datatype"), false;
  }
  *sc = strataCommOf(comm, &why);
  if (*sc == nullptr) return countPassed(c, why), false;
  return true;
}

// Rooted data movement: the root's types are known at the root only, so the ranks agree per call.
bool rootedMovement(Call c, MPI_Comm comm, bool usable, strataComm_t* sc) {
  const char* why = nullptr;
  if (!mayServe(c, comm, &why)) return countPassed(c, why), false;
  int mine = usable ? 1 : 0, all = 0;
  {
    Guard guard;
    PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  }
  if (all != 1) return countPassed(c, "non-contiguous datatype or invalid count on some rank"), false;
  *sc = strataCommOf(comm, &why);
  if (*sc == nullptr) return countPassed(c, why), false;
  return true;
}

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
size_t bytesOf(int count, MPI_Datatype type) { return static_cast<size_t>(count) * layoutOf(type).size; }
char* at(void* base, size_t bytes) { return static_cast<char*>(base) + bytes; }
const char* at(const void* base, size_t bytes) { return static_cast<const char*>(base) + bytes; }

std::vector<size_t> scaled(const int* v, int n, size_t unit) {
  std::vector<size_t> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out[static_cast<size_t>(i)] = static_cast<size_t>(v[i]) * unit;
  return out;
}
bool nonNegative(const int* v, int n) {
  for (int i = 0; i < n; ++i) {
    if (v[i] < 0) return false;
  }
  return true;
}

// The root's arrays of gatherv and scatterv: usable when valid and over a contiguous type; in
// bytes at the root, empty elsewhere (they are significant at the root only).
bool rootArraysUsable(const int* counts, const int* displs, int p, MPI_Datatype type) {
  return counts != nullptr && displs != nullptr && nonNegative(counts, p) && nonNegative(displs, p) &&
         layoutOf(type).contiguous;
}
struct RootArrays {
  std::vector<size_t> counts, offsets;
  RootArrays(bool isRoot, const int* c, const int* d, int p, MPI_Datatype type) {
    if (!isRoot) return;
    const size_t es = layoutOf(type).size;
    counts = scaled(c, p, es);
    offsets = scaled(d, p, es);
  }
  const size_t* countsOrNull() const { return counts.empty() ? nullptr : counts.data(); }
  const size_t* offsetsOrNull() const { return offsets.empty() ? nullptr : offsets.data(); }
};

// Moves `bytes` within one buffer (host or device) from `src` to `dst`, which may overlap.
bool moveWithin(void* dst, const void* src, size_t bytes) {
  if (dst == src || bytes == 0) return true;
#ifdef STRATA_HAVE_CUDA
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, dst) == cudaSuccess && attr.type == cudaMemoryTypeDevice) {
    void* tmp = nullptr;
    if (cudaMalloc(&tmp, bytes) != cudaSuccess) return false;
    const bool ok = cudaMemcpy(tmp, src, bytes, cudaMemcpyDeviceToDevice) == cudaSuccess &&
                    cudaMemcpy(dst, tmp, bytes, cudaMemcpyDeviceToDevice) == cudaSuccess;
    cudaFree(tmp);
    return ok;
  }
#endif
  std::memmove(dst, src, bytes);
  return true;
}

}  // namespace
}  // namespace strata::mpi_face

using namespace strata::mpi_face;

extern "C" {

int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  strataDataType_t t;
  strataRedOp_t o;
  strataComm_t sc = nullptr;
  if (!reduction(Call::kAllreduce, comm, count, type, op, &t, &o, &sc)) return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
  Guard guard;
  const void* send = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
  return finishServed(Call::kAllreduce, comm, sc, strataAllReduce(send, rbuf, static_cast<size_t>(count), t, o, sc, nullptr), rbuf);
}

int MPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  strataDataType_t t;
  strataRedOp_t o;
  strataComm_t sc = nullptr;
  if (!reduction(Call::kReduce, comm, count, type, op, &t, &o, &sc)) return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
  Guard guard;
  const bool isRoot = rankOf(comm) == root;
  const void* send = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
  void* recv = isRoot ? rbuf : nullptr;
  return finishServed(Call::kReduce, comm, sc, strataReduce(send, recv, static_cast<size_t>(count), t, o, root, sc, nullptr), send);
}

int MPI_Scan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  strataDataType_t t;
  strataRedOp_t o;
  strataComm_t sc = nullptr;
  if (!reduction(Call::kScan, comm, count, type, op, &t, &o, &sc)) return PMPI_Scan(sbuf, rbuf, count, type, op, comm);
  Guard guard;
  const void* send = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
  return finishServed(Call::kScan, comm, sc, strataScan(send, rbuf, static_cast<size_t>(count), t, o, sc, nullptr), rbuf);
}

int MPI_Exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  strataDataType_t t;
  strataRedOp_t o;
  strataComm_t sc = nullptr;
  if (!reduction(Call::kExscan, comm, count, type, op, &t, &o, &sc)) return PMPI_Exscan(sbuf, rbuf, count, type, op, comm);
  Guard guard;
  const void* send = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
  return finishServed(Call::kExscan, comm, sc, strataExscan(send, rbuf, static_cast<size_t>(count), t, o, sc, nullptr), rbuf);
}

// MPI_IN_PLACE: the input is the whole receive buffer and the result its first block; Strata's
// in-place result is the rank's own block, moved to the front afterwards.
int MPI_Reduce_scatter_block(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  strataDataType_t t;
  strataRedOp_t o;
  strataComm_t sc = nullptr;
  if (!reduction(Call::kReduceScatterBlock, comm, count, type, op, &t, &o, &sc)) {
    return PMPI_Reduce_scatter_block(sbuf, rbuf, count, type, op, comm);
  }
  Guard guard;
  if (sbuf != MPI_IN_PLACE) {
    return finishServed(Call::kReduceScatterBlock, comm, sc,
                        strataReduceScatter(sbuf, rbuf, static_cast<size_t>(count), t, o, sc, nullptr), rbuf);
  }
  const size_t block = bytesOf(count, type);
  char* mine = at(rbuf, static_cast<size_t>(rankOf(comm)) * block);
  const int rc = finishServed(Call::kReduceScatterBlock, comm, sc,
                              strataReduceScatter(rbuf, mine, static_cast<size_t>(count), t, o, sc, nullptr), rbuf);
  if (rc == MPI_SUCCESS && !moveWithin(rbuf, mine, block)) return MPI_ERR_OTHER;
  return rc;
}

int MPI_Reduce_scatter(const void* sbuf, void* rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  strataDataType_t t;
  strataRedOp_t o;
  strataComm_t sc = nullptr;
  const int p = sizeOf(comm);
  if (rcounts == nullptr || !nonNegative(rcounts, p)) {
    countPassed(Call::kReduceScatter, "invalid counts (MPI reports them)");
    return PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
  }
  if (!reduction(Call::kReduceScatter, comm, 0, type, op, &t, &o, &sc)) {
    return PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
  }
  Guard guard;
  const std::vector<size_t> counts = scaled(rcounts, p, 1);
  if (sbuf != MPI_IN_PLACE) {
    return finishServed(Call::kReduceScatter, comm, sc, strataReduceScatterv(sbuf, rbuf, counts.data(), t, o, sc, nullptr),
                        rbuf);
  }
  const int me = rankOf(comm);
  size_t prefix = 0;
  for (int j = 0; j < me; ++j) prefix += counts[static_cast<size_t>(j)];
  const size_t es = layoutOf(type).size;
  char* mine = at(rbuf, prefix * es);
  const int rc = finishServed(Call::kReduceScatter, comm, sc, strataReduceScatterv(rbuf, mine, counts.data(), t, o, sc, nullptr),
                              rbuf);
  if (rc == MPI_SUCCESS && !moveWithin(rbuf, mine, counts[static_cast<size_t>(me)] * es)) return MPI_ERR_OTHER;
  return rc;
}

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  strataComm_t sc = nullptr;
  if (count < 0 || !movement(Call::kBcast, comm, {type}, &sc)) {
    if (count < 0) countPassed(Call::kBcast, "negative count (MPI reports it)");
    return PMPI_Bcast(buf, count, type, root, comm);
  }
  Guard guard;
  return finishServed(Call::kBcast, comm, sc, strataBroadcast(buf, buf, bytesOf(count, type), strataUint8, root, sc, nullptr),
                      buf);
}

int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  strataComm_t sc = nullptr;
  const bool inPlace = sbuf == MPI_IN_PLACE;
  if (rcount < 0 || (!inPlace && scount < 0) ||
      !movement(Call::kAllgather, comm, inPlace ? std::initializer_list<MPI_Datatype>{rtype}
                                                : std::initializer_list<MPI_Datatype>{stype, rtype}, &sc)) {
    if (rcount < 0 || (!inPlace && scount < 0)) countPassed(Call::kAllgather, "negative count (MPI reports it)");
    return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  }
  Guard guard;
  const size_t block = bytesOf(rcount, rtype);
  const void* send = inPlace ? at(rbuf, static_cast<size_t>(rankOf(comm)) * block) : sbuf;
  return finishServed(Call::kAllgather, comm, sc, strataAllGather(send, rbuf, block, strataUint8, sc, nullptr), rbuf);
}

int MPI_Allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
                   MPI_Datatype rtype, MPI_Comm comm) {
  strataComm_t sc = nullptr;
  const bool inPlace = sbuf == MPI_IN_PLACE;
  const int p = sizeOf(comm);
  const bool valid = rcounts != nullptr && displs != nullptr && nonNegative(rcounts, p) && nonNegative(displs, p) &&
                     (inPlace || scount >= 0);
  if (!valid || !movement(Call::kAllgatherv, comm, inPlace ? std::initializer_list<MPI_Datatype>{rtype}
                                                           : std::initializer_list<MPI_Datatype>{stype, rtype}, &sc)) {
    if (!valid) countPassed(Call::kAllgatherv, "invalid counts (MPI reports them)");
    return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  }
  Guard guard;
  const size_t es = layoutOf(rtype).size;
  const std::vector<size_t> counts = scaled(rcounts, p, es), offsets = scaled(displs, p, es);
  const int me = rankOf(comm);
  const void* send = inPlace ? at(rbuf, offsets[static_cast<size_t>(me)]) : sbuf;
  const size_t sendBytes = inPlace ? counts[static_cast<size_t>(me)] : bytesOf(scount, stype);
  return finishServed(Call::kAllgatherv, comm, sc,
                      strataAllGatherv(send, sendBytes, rbuf, counts.data(), offsets.data(), strataUint8, sc, nullptr), rbuf);
}

int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  strataComm_t sc = nullptr;
  const bool inPlace = sbuf == MPI_IN_PLACE;
  if (rcount < 0 || (!inPlace && scount < 0) ||
      !movement(Call::kAlltoall, comm, inPlace ? std::initializer_list<MPI_Datatype>{rtype}
                                               : std::initializer_list<MPI_Datatype>{stype, rtype}, &sc)) {
    if (rcount < 0 || (!inPlace && scount < 0)) countPassed(Call::kAlltoall, "negative count (MPI reports it)");
    return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  }
  Guard guard;
  const void* send = inPlace ? rbuf : sbuf;
  return finishServed(Call::kAlltoall, comm, sc, strataAlltoAll(send, rbuf, bytesOf(rcount, rtype), strataUint8, sc, nullptr),
                      rbuf);
}

int MPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  strataComm_t sc = nullptr;
  const bool inPlace = sbuf == MPI_IN_PLACE;
  const int p = sizeOf(comm);
  const bool valid = rcounts != nullptr && rdispls != nullptr && nonNegative(rcounts, p) && nonNegative(rdispls, p) &&
                     (inPlace || (scounts != nullptr && sdispls != nullptr && nonNegative(scounts, p) &&
                                  nonNegative(sdispls, p)));
  if (!valid || !movement(Call::kAlltoallv, comm, inPlace ? std::initializer_list<MPI_Datatype>{rtype}
                                                          : std::initializer_list<MPI_Datatype>{stype, rtype}, &sc)) {
    if (!valid) countPassed(Call::kAlltoallv, "invalid counts (MPI reports them)");
    return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  }
  Guard guard;
  const size_t res = layoutOf(rtype).size;
  const std::vector<size_t> rc = scaled(rcounts, p, res), rd = scaled(rdispls, p, res);
  if (inPlace) {
    return finishServed(Call::kAlltoallv, comm, sc,
                        strataAlltoAllv(rbuf, rc.data(), rd.data(), rbuf, rc.data(), rd.data(), strataUint8, sc, nullptr),
                        rbuf);
  }
  const size_t ses = layoutOf(stype).size;
  const std::vector<size_t> scv = scaled(scounts, p, ses), sd = scaled(sdispls, p, ses);
  return finishServed(Call::kAlltoallv, comm, sc,
                      strataAlltoAllv(sbuf, scv.data(), sd.data(), rbuf, rc.data(), rd.data(), strataUint8, sc, nullptr),
                      rbuf);
}

int MPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm) {
  strataComm_t sc = nullptr;
  const bool isRoot = rankOf(comm) == root;
  const bool inPlace = isRoot && sbuf == MPI_IN_PLACE;
  bool usable = inPlace || (scount >= 0 && layoutOf(stype).contiguous);
  if (isRoot) usable = usable && rcount >= 0 && layoutOf(rtype).contiguous;
  if (!rootedMovement(Call::kGather, comm, usable, &sc)) return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  Guard guard;
  const size_t block = isRoot ? bytesOf(rcount, rtype) : bytesOf(scount, stype);
  const void* send = inPlace ? at(rbuf, static_cast<size_t>(root) * block) : sbuf;
  return finishServed(Call::kGather, comm, sc,
                      strataGather(send, isRoot ? rbuf : nullptr, block, strataUint8, root, sc, nullptr), send);
}

int MPI_Gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  strataComm_t sc = nullptr;
  const int p = sizeOf(comm);
  const bool isRoot = rankOf(comm) == root;
  const bool inPlace = isRoot && sbuf == MPI_IN_PLACE;
  bool usable = inPlace || (scount >= 0 && layoutOf(stype).contiguous);
  if (isRoot) usable = usable && rootArraysUsable(rcounts, displs, p, rtype);
  if (!rootedMovement(Call::kGatherv, comm, usable, &sc)) {
    return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
  }
  Guard guard;
  const RootArrays arrays(isRoot, rcounts, displs, p, rtype);
  const void* send = inPlace ? at(rbuf, arrays.offsets[static_cast<size_t>(root)]) : sbuf;
  const size_t sendBytes = inPlace ? arrays.counts[static_cast<size_t>(root)] : bytesOf(scount, stype);
  return finishServed(Call::kGatherv, comm, sc,
                      strataGatherv(send, sendBytes, isRoot ? rbuf : nullptr, arrays.countsOrNull(),
                                    arrays.offsetsOrNull(), strataUint8, root, sc, nullptr),
                      isRoot ? rbuf : send);
}

int MPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm) {
  strataComm_t sc = nullptr;
  const bool isRoot = rankOf(comm) == root;
  const bool inPlace = isRoot && rbuf == MPI_IN_PLACE;
  bool usable = inPlace || (rcount >= 0 && layoutOf(rtype).contiguous);
  if (isRoot) usable = usable && scount >= 0 && layoutOf(stype).contiguous;
  if (!rootedMovement(Call::kScatter, comm, usable, &sc)) {
    return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  }
  Guard guard;
  const size_t block = isRoot ? bytesOf(scount, stype) : bytesOf(rcount, rtype);
  void* recv = inPlace ? const_cast<char*>(at(sbuf, static_cast<size_t>(root) * block)) : rbuf;
  return finishServed(Call::kScatter, comm, sc,
                      strataScatter(isRoot ? sbuf : nullptr, recv, block, strataUint8, root, sc, nullptr), recv);
}

int MPI_Scatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void* rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm) {
  strataComm_t sc = nullptr;
  const int p = sizeOf(comm);
  const bool isRoot = rankOf(comm) == root;
  const bool inPlace = isRoot && rbuf == MPI_IN_PLACE;
  bool usable = inPlace || (rcount >= 0 && layoutOf(rtype).contiguous);
  if (isRoot) usable = usable && rootArraysUsable(scounts, displs, p, stype);
  if (!rootedMovement(Call::kScatterv, comm, usable, &sc)) {
    return PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
  }
  Guard guard;
  const RootArrays arrays(isRoot, scounts, displs, p, stype);
  void* recv = inPlace ? const_cast<char*>(at(sbuf, arrays.offsets[static_cast<size_t>(root)])) : rbuf;
  const size_t recvBytes = inPlace ? arrays.counts[static_cast<size_t>(root)] : bytesOf(rcount, rtype);
  return finishServed(Call::kScatterv, comm, sc,
                      strataScatterv(isRoot ? sbuf : nullptr, arrays.countsOrNull(), arrays.offsetsOrNull(), recv,
                                     recvBytes, strataUint8, root, sc, nullptr),
                      recv);
}

int MPI_Barrier(MPI_Comm comm) {
  const char* why = nullptr;
  if (!mayServe(Call::kBarrier, comm, &why)) {
    countPassed(Call::kBarrier, why);
    return PMPI_Barrier(comm);
  }
  strataComm_t sc = strataCommOf(comm, &why);
  if (sc == nullptr) {
    countPassed(Call::kBarrier, why);
    return PMPI_Barrier(comm);
  }
  Guard guard;
  return finishServed(Call::kBarrier, comm, sc, strataBarrier(sc, nullptr), nullptr);
}

}  // extern "C"
