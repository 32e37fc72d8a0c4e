// The MPI face's reductions: MPI_Allreduce, MPI_Reduce, MPI_Scan, MPI_Exscan,
// MPI_Reduce_scatter_block, MPI_Reduce_scatter, on Strata for the predefined types and ops it has
// (src/mpi_face/mpi_types.h), through PMPI otherwise. A reduction's datatype, op and count are the
// same on every rank (MPI requires it), so every rank decides alike.
#include <mpi.h>
#include <strata/strata.h>

#include <cstring>
#include <new>
#include <vector>

#include "src/mpi_face/mpi_types.h"
#include "src/mpi_face/serve.h"

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace strata::mpi_face {
namespace {

// A reduction of one count per rank (`count`, the receive buffer `rbuf`) that Strata serves: its
// communicator, or null where the call goes to MPI (an erroneous count or MPI_IN_PLACE receive
// buffer, refused in Strata first: refuseInvalid).
strataComm_t servedWithCount(Call c, MPI_Comm comm, MPI_Datatype type, MPI_Op op, int count, const void* rbuf,
                             strataDataType_t* t, strataRedOp_t* o) {
  strataComm_t sc = reduction(c, comm, type, op, t, o);
  if (sc != nullptr && (count < 0 || rbuf == MPI_IN_PLACE)) {
    refuseInvalid(c, comm, sc, kInvalidArguments);
    return nullptr;
  }
  return sc;
}

// Allreduce, scan and exscan: one count on every rank, MPI_IN_PLACE meaning the receive buffer.
using StrataElementwise = strataResult_t (*)(const void*, void*, size_t, strataDataType_t, strataRedOp_t, strataComm_t,
                                             cudaStream_t);
using MpiElementwise = int (*)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
int elementwise(Call c, StrataElementwise strata, MpiElementwise pmpi, const void* sbuf, void* rbuf, int count,
                MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  strataDataType_t t;
  strataRedOp_t o;
  strataComm_t sc = servedWithCount(c, comm, type, op, count, rbuf, &t, &o);
  if (sc == nullptr) return pmpi(sbuf, rbuf, count, type, op, comm);
  Guard guard;
  const void* send = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
  // Exscan's receive buffer is not significant on rank 0 (MPI-3.1 5.11.2): unless it holds the
  // input (MPI_IN_PLACE), it may be null or shorter than count, and Strata gets none.
  void* recv = c == Call::kExscan && sbuf != MPI_IN_PLACE && rankOf(comm) == 0 ? nullptr : rbuf;
  return finishServed(c, comm, sc, strata(send, recv, static_cast<size_t>(count), t, o, sc, nullptr),
                      recv != nullptr ? recv : send);
}

// `bytes` of scratch in the memory space of `like` (host or device).
class ScratchLike {
 public:
  ScratchLike(const void* like, size_t bytes) {
#ifdef STRATA_HAVE_CUDA
    // Even when empty: the call's buffers must all be in one memory space.
    if (onDevice(like)) {
      if (cudaMalloc(&device_, bytes == 0 ? 1 : bytes) != cudaSuccess) {
        cudaGetLastError();
        device_ = nullptr;
        failed_ = true;
      }
      return;
    }
#else
    (void)like;
#endif
    try {
      host_.resize(bytes == 0 ? 1 : bytes);
    } catch (const std::bad_alloc&) {
      failed_ = true;
    }
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
  if (onDevice(dst)) {
    return cudaMemcpy(dst, src, bytes, cudaMemcpyDefault) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess;
  }
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
  if (!result.ok()) return refuseServed(c, comm, MPI_ERR_NO_MEM, "no scratch for the in-place result");
  const int rc = finishServed(c, comm, sc, reduce(result.data()), rbuf);
  if (rc != MPI_SUCCESS || copyBytes(rbuf, result.data(), bytes)) return rc;
  return failServed(c, comm, MPI_ERR_OTHER, "copying the in-place result to the front of the receive buffer failed");
}

size_t typeSize(MPI_Datatype type) { return layoutOf(type).size; }

}  // namespace
}  // namespace strata::mpi_face

using namespace strata::mpi_face;

extern "C" {

// ---- Reductions ---------------------------------------------------------------------------------

int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return entryPoint(Call::kAllreduce, comm, [&] {
    return elementwise(Call::kAllreduce, strataAllReduce, PMPI_Allreduce, sbuf, rbuf, count, type, op, comm);
  });
}
int MPI_Scan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return entryPoint(Call::kScan, comm, [&] {
    return elementwise(Call::kScan, strataScan, PMPI_Scan, sbuf, rbuf, count, type, op, comm);
  });
}
int MPI_Exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return entryPoint(Call::kExscan, comm, [&] {
    return elementwise(Call::kExscan, strataExscan, PMPI_Exscan, sbuf, rbuf, count, type, op, comm);
  });
}

int MPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  const Call c = Call::kReduce;
  return entryPoint(c, comm, [&] {
    strataDataType_t t;
    strataRedOp_t o;
    strataComm_t sc = reduction(c, comm, type, op, &t, &o);
    if (sc == nullptr || !rootInRange(c, comm, sc, root)) return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
    const bool isRoot = rankOf(comm) == root;
    // MPI_IN_PLACE is the root's send buffer only (MPI-3.1 5.9.1); elsewhere MPI reports it.
    if (count < 0 || (sbuf == MPI_IN_PLACE && !isRoot) || (rbuf == MPI_IN_PLACE && isRoot)) {
      refuseInvalid(c, comm, sc, kInvalidArguments);
      return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
    }
    Guard guard;
    const void* send = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void* recv = isRoot ? rbuf : nullptr;
    return finishServed(c, comm, sc, strataReduce(send, recv, static_cast<size_t>(count), t, o, root, sc, nullptr), send);
  });
}

// MPI_IN_PLACE: the input is the whole receive buffer and the result its first block; Strata's
// in-place result is the rank's own block, moved to the front afterwards.
int MPI_Reduce_scatter_block(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const Call c = Call::kReduceScatterBlock;
  return entryPoint(c, comm, [&] {
    strataDataType_t t;
    strataRedOp_t o;
    strataComm_t sc = servedWithCount(c, comm, type, op, count, rbuf, &t, &o);
    if (sc == nullptr) return PMPI_Reduce_scatter_block(sbuf, rbuf, count, type, op, comm);
    Guard guard;
    const size_t n = static_cast<size_t>(count);
    if (sbuf != MPI_IN_PLACE) {
      return finishServed(c, comm, sc, strataReduceScatter(sbuf, rbuf, n, t, o, sc, nullptr), rbuf);
    }
    return reducedToFront(c, comm, sc, rbuf, n * typeSize(type),
                          [&](void* result) { return strataReduceScatter(rbuf, result, n, t, o, sc, nullptr); });
  });
}

int MPI_Reduce_scatter(const void* sbuf, void* rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const Call c = Call::kReduceScatter;
  return entryPoint(c, comm, [&] {
    strataDataType_t t;
    strataRedOp_t o;
    strataComm_t sc = reduction(c, comm, type, op, &t, &o);
    const int p = sc == nullptr ? 0 : sizeOf(comm);
    std::vector<size_t> n;
    const int widening = sc == nullptr || rbuf == MPI_IN_PLACE ? MPI_SUCCESS : widened(rcounts, p, true, &n);
    if (widening == MPI_ERR_NO_MEM) return refuseServed(c, comm, widening, "no host memory for the receive counts");
    if (sc == nullptr || widening != MPI_SUCCESS || rbuf == MPI_IN_PLACE) {
      refuseInvalid(c, comm, sc, kInvalidArguments);
      return PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
    }
    Guard guard;
    if (sbuf != MPI_IN_PLACE) {
      return finishServed(c, comm, sc, strataReduceScatterv(sbuf, rbuf, n.data(), t, o, sc, nullptr), rbuf);
    }
    return reducedToFront(c, comm, sc, rbuf, n[static_cast<size_t>(rankOf(comm))] * typeSize(type),
                          [&](void* result) { return strataReduceScatterv(rbuf, result, n.data(), t, o, sc, nullptr); });
  });
}

}  // extern "C"
