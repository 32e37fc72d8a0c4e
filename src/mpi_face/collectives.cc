// The MPI collectives through MPI's profiling interface: each runs on Strata when it can and calls
// its PMPI_ version otherwise (face.h counts which and why). MPI's argument rules are translated
// here: int counts, v-variants' counts and displacements in units of the datatype's extent (negative
// displacements included), MPI_IN_PLACE where MPI allows it, and send and receive datatypes that
// differ but have the same type signature. Collectives that only move data move bytes: contiguous
// datatypes straight from the user's buffers, any other datatype packed (packed_blocks.h).
//
// Whether a call goes to Strata or to the MPI library must be decided alike on every rank, or some
// ranks would wait in one library for ranks that are in the other. So the decision reads only what
// MPI requires to be the same on every rank (the collective, the communicator, the root, a
// reduction's datatype, count and op); the Strata communicator is created before any check of
// arguments that may differ between ranks. An argument that only some ranks get wrong (an erroneous
// program) goes to the MPI library on those ranks, which reports it; their peers' Strata call then
// ends with Strata's timeout, naming the rank it waited for.
#include <mpi.h>
#include <strata/strata.h>

#include <cstring>
#include <utility>
#include <vector>

#include "src/mpi_face/face.h"
#include "src/mpi_face/mpi_types.h"
#include "src/mpi_face/packed_blocks.h"

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace strata::mpi_face {
namespace {

constexpr const char* kInvalidArguments = "invalid arguments on this rank (MPI reports them)";

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

// The Strata communicator for a call that may go to Strata, or null (counted as passed to MPI).
strataComm_t servable(Call c, MPI_Comm comm) {
  const char* why = nullptr;
  if (!mayServe(c, comm, &why)) return countPassed(c, why), nullptr;
  strataComm_t sc = strataCommOf(comm, &why);
  if (sc == nullptr) countPassed(c, why);
  return sc;
}

// Reductions: a predefined type and op with a Strata equivalent (the same on every rank, as MPI
// requires of a reduction's datatype and op).
strataComm_t reduction(Call c, MPI_Comm comm, MPI_Datatype type, MPI_Op op, strataDataType_t* t, strataRedOp_t* o) {
  const char* why = nullptr;
  if (!mayServe(c, comm, &why)) return countPassed(c, why), nullptr;
  if (!strataTypeOf(type, t)) return countPassed(c, "datatype without a Strata type"), nullptr;
  if (!strataOpOf(op, o)) return countPassed(c, "op without a Strata op"), nullptr;
  return servable(c, comm);
}

// Allreduce, scan and exscan: one count on every rank, MPI_IN_PLACE meaning the receive buffer.
using StrataElementwise = strataResult_t (*)(const void*, void*, size_t, strataDataType_t, strataRedOp_t, strataComm_t,
                                             cudaStream_t);
using MpiElementwise = int (*)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
int elementwise(Call c, StrataElementwise strata, MpiElementwise pmpi, const void* sbuf, void* rbuf, int count,
                MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  strataDataType_t t;
  strataRedOp_t o;
  strataComm_t sc = reduction(c, comm, type, op, &t, &o);
  if (sc == nullptr || count < 0) {
    if (sc != nullptr) countPassed(c, kInvalidArguments);
    return pmpi(sbuf, rbuf, count, type, op, comm);
  }
  Guard guard;
  const void* send = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
  return finishServed(c, comm, sc, strata(send, rbuf, static_cast<size_t>(count), t, o, sc, nullptr), rbuf);
}

// Data movement: any datatype (packed when not contiguous), provided MPI packs as plain bytes.
strataComm_t movement(Call c, MPI_Comm comm) {
  const char* why = nullptr;
  if (!mayServe(c, comm, &why)) return countPassed(c, why), nullptr;
  if (!packsAsPlainBytes()) return countPassed(c, "this MPI does not pack datatypes as their plain bytes"), nullptr;
  return servable(c, comm);
}

// A root MPI would reject goes to MPI on every rank (every rank passes the same root).
bool rootInRange(Call c, MPI_Comm comm, int root) {
  if (root >= 0 && root < sizeOf(comm)) return true;
  countPassed(c, "root out of range (MPI reports it)");
  return false;
}

// An int array of p entries, widened; false when it is missing or has a negative entry (for counts).
bool widened(const int* v, int p, bool nonNegative, std::vector<int64_t>* out) {
  if (v == nullptr) return false;
  out->resize(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) {
    if (nonNegative && v[i] < 0) return false;
    (*out)[static_cast<size_t>(i)] = v[i];
  }
  return true;
}

// After a served call: its result unpacked into the user's buffer where it was packed.
int unpacked(Call c, MPI_Comm comm, int rc, PackedBlocks* out) {
  if (rc != MPI_SUCCESS || out == nullptr || out->unpackOut()) return rc;
  return failServed(c, comm, out->error());
}

// `bytes` of scratch in the memory space of `like` (host or device).
class ScratchLike {
 public:
  ScratchLike(const void* like, size_t bytes) {
#ifdef STRATA_HAVE_CUDA
    cudaPointerAttributes attr{};
    // Even when empty: the call's buffers must all be in one memory space.
    if (cudaPointerGetAttributes(&attr, like) == cudaSuccess && attr.type == cudaMemoryTypeDevice) {
      if (cudaMalloc(&device_, bytes == 0 ? 1 : bytes) != cudaSuccess) {
        cudaGetLastError();
        device_ = nullptr;
        failed_ = true;
      }
      return;
    }
    cudaGetLastError();
#else
    (void)like;
#endif
    host_.resize(bytes == 0 ? 1 : bytes);
  }
  ~ScratchLike() {
#ifdef STRATA_HAVE_CUDA
    if (device_ != nullptr) cudaFree(device_);
#endif
  }
  ScratchLike(const ScratchLike&) = delete;
  ScratchLike& operator=(const ScratchLike&) = delete;
  bool ok() const { return !failed_; }
  char* data() { return device_ != nullptr ? static_cast<char*>(device_) : host_.data(); }

 private:
  std::vector<char> host_;
  void* device_ = nullptr;
  bool failed_ = false;
};

// Copies `bytes` between two buffers of one memory space; done when it returns.
bool copyBytes(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return true;
#ifdef STRATA_HAVE_CUDA
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, dst) == cudaSuccess && attr.type == cudaMemoryTypeDevice) {
    return cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess;
  }
  cudaGetLastError();
#endif
  std::memcpy(dst, src, bytes);
  return true;
}

// MPI_IN_PLACE reduce-scatter: the input is the whole receive buffer and the result goes to its
// front; the rest keeps its input, as MPI libraries leave it (and programs check). Strata reduces
// out of place into scratch, which is then copied to the front.
template <typename Reduce>
int reducedToFront(Call c, MPI_Comm comm, strataComm_t sc, void* rbuf, size_t bytes, Reduce reduce) {
  ScratchLike result(rbuf, bytes);
  if (!result.ok()) return failServed(c, comm, "no scratch for the in-place result");
  const int rc = finishServed(c, comm, sc, reduce(result.data()), rbuf);
  if (rc != MPI_SUCCESS || copyBytes(rbuf, result.data(), bytes)) return rc;
  return failServed(c, comm, "copying the in-place result to the front of the receive buffer failed");
}

size_t typeSize(MPI_Datatype type) { return layoutOf(type).size; }

}  // namespace
}  // namespace strata::mpi_face

using namespace strata::mpi_face;

extern "C" {

// ---- Reductions ---------------------------------------------------------------------------------

int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return elementwise(Call::kAllreduce, strataAllReduce, PMPI_Allreduce, sbuf, rbuf, count, type, op, comm);
}
int MPI_Scan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return elementwise(Call::kScan, strataScan, PMPI_Scan, sbuf, rbuf, count, type, op, comm);
}
int MPI_Exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return elementwise(Call::kExscan, strataExscan, PMPI_Exscan, sbuf, rbuf, count, type, op, comm);
}

int MPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  strataDataType_t t;
  strataRedOp_t o;
  const Call c = Call::kReduce;
  strataComm_t sc = reduction(c, comm, type, op, &t, &o);
  if (sc == nullptr || !rootInRange(c, comm, root) || count < 0) {
    if (sc != nullptr && count < 0) countPassed(c, kInvalidArguments);
    return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
  }
  Guard guard;
  const bool isRoot = rankOf(comm) == root;
  const void* send = sbuf == MPI_IN_PLACE ? rbuf : sbuf;  // MPI_IN_PLACE: the root's only
  void* recv = isRoot ? rbuf : nullptr;
  return finishServed(c, comm, sc, strataReduce(send, recv, static_cast<size_t>(count), t, o, root, sc, nullptr), send);
}

// MPI_IN_PLACE: the input is the whole receive buffer and the result its first block; Strata's
// in-place result is the rank's own block, moved to the front afterwards.
int MPI_Reduce_scatter_block(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  strataDataType_t t;
  strataRedOp_t o;
  const Call c = Call::kReduceScatterBlock;
  strataComm_t sc = reduction(c, comm, type, op, &t, &o);
  if (sc == nullptr || count < 0) {
    if (sc != nullptr) countPassed(c, kInvalidArguments);
    return PMPI_Reduce_scatter_block(sbuf, rbuf, count, type, op, comm);
  }
  Guard guard;
  const size_t n = static_cast<size_t>(count);
  if (sbuf != MPI_IN_PLACE) {
    return finishServed(c, comm, sc, strataReduceScatter(sbuf, rbuf, n, t, o, sc, nullptr), rbuf);
  }
  return reducedToFront(c, comm, sc, rbuf, n * typeSize(type),
                        [&](void* result) { return strataReduceScatter(rbuf, result, n, t, o, sc, nullptr); });
}

int MPI_Reduce_scatter(const void* sbuf, void* rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  strataDataType_t t;
  strataRedOp_t o;
  const Call c = Call::kReduceScatter;
  strataComm_t sc = reduction(c, comm, type, op, &t, &o);
  const int p = sc == nullptr ? 0 : sizeOf(comm);
  std::vector<int64_t> counts;
  if (sc == nullptr || !widened(rcounts, p, true, &counts)) {
    if (sc != nullptr) countPassed(c, kInvalidArguments);
    return PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
  }
  Guard guard;
  const std::vector<size_t> n(counts.begin(), counts.end());
  if (sbuf != MPI_IN_PLACE) {
    return finishServed(c, comm, sc, strataReduceScatterv(sbuf, rbuf, n.data(), t, o, sc, nullptr), rbuf);
  }
  return reducedToFront(c, comm, sc, rbuf, n[static_cast<size_t>(rankOf(comm))] * typeSize(type),
                        [&](void* result) { return strataReduceScatterv(rbuf, result, n.data(), t, o, sc, nullptr); });
}

// ---- Data movement ------------------------------------------------------------------------------

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const Call c = Call::kBcast;
  strataComm_t sc = movement(c, comm);
  if (sc == nullptr || !rootInRange(c, comm, root)) return PMPI_Bcast(buf, count, type, root, comm);
  PackedBlocks b;
  if (count < 0 || !b.describe(buf, 1, count, type)) {
    countPassed(c, kInvalidArguments);
    return PMPI_Bcast(buf, count, type, root, comm);
  }
  Guard guard;
  const bool isRoot = rankOf(comm) == root;
  if (isRoot && !b.packIn()) return failServed(c, comm, b.error());
  const int rc = finishServed(c, comm, sc, strataBroadcast(b.data(), b.data(), b.bytes(0), strataUint8, root, sc, nullptr),
                              b.data());
  return unpacked(c, comm, rc, isRoot ? nullptr : &b);
}

int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  const Call c = Call::kAllgather;
  strataComm_t sc = movement(c, comm);
  if (sc == nullptr) return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  const int p = sizeOf(comm), me = rankOf(comm);
  const bool inPlace = sbuf == MPI_IN_PLACE;
  PackedBlocks recv, send;
  const bool ok = rcount >= 0 && recv.describe(rbuf, static_cast<size_t>(p), rcount, rtype) &&
                  (inPlace || (scount >= 0 && send.describe(sbuf, 1, scount, stype) && send.bytes(0) == recv.bytes(0)));
  if (!ok) {
    countPassed(c, kInvalidArguments);
    return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  }
  Guard guard;
  if (!(inPlace ? recv.packIn(me, me + 1) : send.packIn())) return failServed(c, comm, inPlace ? recv.error() : send.error());
  const void* s = inPlace ? recv.block(me) : send.data();
  const int rc = finishServed(c, comm, sc, strataAllGather(s, recv.data(), recv.bytes(0), strataUint8, sc, nullptr),
                              recv.data());
  return unpacked(c, comm, rc, &recv);
}

int MPI_Allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
                   MPI_Datatype rtype, MPI_Comm comm) {
  const Call c = Call::kAllgatherv;
  strataComm_t sc = movement(c, comm);
  if (sc == nullptr) return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  const int p = sizeOf(comm), me = rankOf(comm);
  const bool inPlace = sbuf == MPI_IN_PLACE;
  std::vector<int64_t> counts, offsets;
  PackedBlocks recv, send;
  const bool ok = widened(rcounts, p, true, &counts) && widened(displs, p, false, &offsets) &&
                  recv.describe(rbuf, std::move(counts), std::move(offsets), rtype) &&
                  (inPlace || (scount >= 0 && send.describe(sbuf, 1, scount, stype) &&
                               send.bytes(0) == recv.bytes(static_cast<size_t>(me))));
  if (!ok) {
    countPassed(c, kInvalidArguments);
    return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  }
  Guard guard;
  const size_t m = static_cast<size_t>(me);
  if (!(inPlace ? recv.packIn(m, m + 1) : send.packIn())) return failServed(c, comm, inPlace ? recv.error() : send.error());
  const void* s = inPlace ? recv.block(m) : send.data();
  const int rc = finishServed(
      c, comm, sc,
      strataAllGatherv(s, recv.bytes(m), recv.data(), recv.bytes().data(), recv.offsets().data(), strataUint8, sc, nullptr),
      recv.data());
  return unpacked(c, comm, rc, &recv);
}

int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  const Call c = Call::kAlltoall;
  strataComm_t sc = movement(c, comm);
  if (sc == nullptr) return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  const int p = sizeOf(comm);
  const bool inPlace = sbuf == MPI_IN_PLACE;
  PackedBlocks recv, send;
  const bool ok = rcount >= 0 && recv.describe(rbuf, static_cast<size_t>(p), rcount, rtype) &&
                  (inPlace || (scount >= 0 && send.describe(sbuf, static_cast<size_t>(p), scount, stype) &&
                               send.bytes(0) == recv.bytes(0)));
  if (!ok) {
    countPassed(c, kInvalidArguments);
    return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  }
  Guard guard;
  PackedBlocks& in = inPlace ? recv : send;
  if (!in.packIn()) return failServed(c, comm, in.error());
  const int rc = finishServed(c, comm, sc, strataAlltoAll(in.data(), recv.data(), recv.bytes(0), strataUint8, sc, nullptr),
                              recv.data());
  return unpacked(c, comm, rc, &recv);
}

int MPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  const Call c = Call::kAlltoallv;
  strataComm_t sc = movement(c, comm);
  if (sc == nullptr) return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  const int p = sizeOf(comm);
  const bool inPlace = sbuf == MPI_IN_PLACE;
  std::vector<int64_t> rc64, rd64, sc64, sd64;
  PackedBlocks recv, send;
  const bool ok = widened(rcounts, p, true, &rc64) && widened(rdispls, p, false, &rd64) &&
                  recv.describe(rbuf, std::move(rc64), std::move(rd64), rtype) &&
                  (inPlace || (widened(scounts, p, true, &sc64) && widened(sdispls, p, false, &sd64) &&
                               send.describe(sbuf, std::move(sc64), std::move(sd64), stype)));
  if (!ok) {
    countPassed(c, kInvalidArguments);
    return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  }
  Guard guard;
  PackedBlocks& in = inPlace ? recv : send;
  if (!in.packIn()) return failServed(c, comm, in.error());
  const int rc = finishServed(c, comm, sc,
                              strataAlltoAllv(in.data(), in.bytes().data(), in.offsets().data(), recv.data(),
                                              recv.bytes().data(), recv.offsets().data(), strataUint8, sc, nullptr),
                              recv.data());
  return unpacked(c, comm, rc, &recv);
}

int MPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm) {
  const Call c = Call::kGather;
  strataComm_t sc = movement(c, comm);
  if (sc == nullptr || !rootInRange(c, comm, root)) return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  const int p = sizeOf(comm);
  const bool isRoot = rankOf(comm) == root;
  const bool inPlace = isRoot && sbuf == MPI_IN_PLACE;
  PackedBlocks recv, send;
  bool ok = !isRoot || (rcount >= 0 && recv.describe(rbuf, static_cast<size_t>(p), rcount, rtype));
  ok = ok && (inPlace || (scount >= 0 && send.describe(sbuf, 1, scount, stype) &&
                          (!isRoot || send.bytes(0) == recv.bytes(0))));
  if (!ok) {
    countPassed(c, kInvalidArguments);
    return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  }
  Guard guard;
  const size_t r = static_cast<size_t>(root);
  if (!(inPlace ? recv.packIn(r, r + 1) : send.packIn())) return failServed(c, comm, inPlace ? recv.error() : send.error());
  const void* s = inPlace ? recv.block(r) : send.data();
  const size_t block = isRoot ? recv.bytes(0) : send.bytes(0);
  const int rc = finishServed(c, comm, sc,
                              strataGather(s, isRoot ? recv.data() : nullptr, block, strataUint8, root, sc, nullptr),
                              isRoot ? recv.data() : send.data());
  return unpacked(c, comm, rc, isRoot ? &recv : nullptr);
}

int MPI_Gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  const Call c = Call::kGatherv;
  strataComm_t sc = movement(c, comm);
  if (sc == nullptr || !rootInRange(c, comm, root)) {
    return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
  }
  const int p = sizeOf(comm);
  const bool isRoot = rankOf(comm) == root;
  const bool inPlace = isRoot && sbuf == MPI_IN_PLACE;
  const size_t r = static_cast<size_t>(root);
  std::vector<int64_t> counts, offsets;
  PackedBlocks recv, send;
  bool ok = !isRoot || (widened(rcounts, p, true, &counts) && widened(displs, p, false, &offsets) &&
                        recv.describe(rbuf, std::move(counts), std::move(offsets), rtype));
  ok = ok && (inPlace || (scount >= 0 && send.describe(sbuf, 1, scount, stype) &&
                          (!isRoot || send.bytes(0) == recv.bytes(r))));
  if (!ok) {
    countPassed(c, kInvalidArguments);
    return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
  }
  Guard guard;
  if (!(inPlace ? recv.packIn(r, r + 1) : send.packIn())) return failServed(c, comm, inPlace ? recv.error() : send.error());
  const void* s = inPlace ? recv.block(r) : send.data();
  const size_t sendBytes = inPlace ? recv.bytes(r) : send.bytes(0);
  const int rc = finishServed(c, comm, sc,
                              strataGatherv(s, sendBytes, isRoot ? recv.data() : nullptr,
                                            isRoot ? recv.bytes().data() : nullptr,
                                            isRoot ? recv.offsets().data() : nullptr, strataUint8, root, sc, nullptr),
                              isRoot ? recv.data() : send.data());
  return unpacked(c, comm, rc, isRoot ? &recv : nullptr);
}

int MPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm) {
  const Call c = Call::kScatter;
  strataComm_t sc = movement(c, comm);
  if (sc == nullptr || !rootInRange(c, comm, root)) return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  const int p = sizeOf(comm);
  const bool isRoot = rankOf(comm) == root;
  const bool inPlace = isRoot && rbuf == MPI_IN_PLACE;
  PackedBlocks send, recv;
  bool ok = !isRoot || (scount >= 0 && send.describe(sbuf, static_cast<size_t>(p), scount, stype));
  ok = ok && (inPlace || (rcount >= 0 && recv.describe(rbuf, 1, rcount, rtype) &&
                          (!isRoot || recv.bytes(0) == send.bytes(0))));
  if (!ok) {
    countPassed(c, kInvalidArguments);
    return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  }
  Guard guard;
  const size_t r = static_cast<size_t>(root);
  if (isRoot && !send.packIn()) return failServed(c, comm, send.error());
  void* d = inPlace ? send.block(r) : recv.data();
  const size_t block = isRoot ? send.bytes(0) : recv.bytes(0);
  const int rc = finishServed(c, comm, sc, strataScatter(isRoot ? send.data() : nullptr, d, block, strataUint8, root, sc, nullptr),
                              d);
  return unpacked(c, comm, rc, inPlace ? nullptr : &recv);
}

int MPI_Scatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void* rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm) {
  const Call c = Call::kScatterv;
  strataComm_t sc = movement(c, comm);
  if (sc == nullptr || !rootInRange(c, comm, root)) {
    return PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
  }
  const int p = sizeOf(comm);
  const bool isRoot = rankOf(comm) == root;
  const bool inPlace = isRoot && rbuf == MPI_IN_PLACE;
  const size_t r = static_cast<size_t>(root);
  std::vector<int64_t> counts, offsets;
  PackedBlocks send, recv;
  bool ok = !isRoot || (widened(scounts, p, true, &counts) && widened(displs, p, false, &offsets) &&
                        send.describe(sbuf, std::move(counts), std::move(offsets), stype));
  ok = ok && (inPlace || (rcount >= 0 && recv.describe(rbuf, 1, rcount, rtype) &&
                          (!isRoot || recv.bytes(0) == send.bytes(r))));
  if (!ok) {
    countPassed(c, kInvalidArguments);
    return PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
  }
  Guard guard;
  if (isRoot && !send.packIn()) return failServed(c, comm, send.error());
  void* d = inPlace ? send.block(r) : recv.data();
  const size_t recvBytes = inPlace ? send.bytes(r) : recv.bytes(0);
  const int rc = finishServed(c, comm, sc,
                              strataScatterv(isRoot ? send.data() : nullptr, isRoot ? send.bytes().data() : nullptr,
                                             isRoot ? send.offsets().data() : nullptr, d, recvBytes, strataUint8, root,
                                             sc, nullptr),
                              d);
  return unpacked(c, comm, rc, inPlace ? nullptr : &recv);
}

int MPI_Barrier(MPI_Comm comm) {
  strataComm_t sc = servable(Call::kBarrier, comm);
  if (sc == nullptr) return PMPI_Barrier(comm);
  Guard guard;
  return finishServed(Call::kBarrier, comm, sc, strataBarrier(sc, nullptr), nullptr);
}

}  // extern "C"
