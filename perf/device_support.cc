#include "perf/device_support.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime.h>
#endif
#ifdef STRATA_CUDA_SIM
#include <cuda_sim/cuda_sim.h>
#endif
#ifdef STRATA_PERF_NCCL
#include <nccl.h>
#endif

namespace strata::perf {

#ifdef STRATA_HAVE_CUDA
namespace {
cudaStream_t gStream = nullptr;
void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    std::fprintf(stderr, "strata-perf: %s: %s\n", what, cudaGetErrorString(rc));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}
}  // namespace

std::string selectDevice(int localRank) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    cudaGetLastError();
    return "no CUDA device";
  }
  check(cudaSetDevice(localRank % n), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&gStream, cudaStreamNonBlocking), "cudaStreamCreate");
  return "";
}
std::string deviceName() {
  int d = 0;
  cudaDeviceProp p{};
  if (cudaGetDevice(&d) != cudaSuccess || cudaGetDeviceProperties(&p, d) != cudaSuccess) return "?";
  return p.name;
}
void* deviceAlloc(size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, std::max<size_t>(bytes, 256)), "cudaMalloc");
  return p;
}
void deviceFree(void* p) { cudaFree(p); }
void copyToDevice(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
  // From pageable memory cudaMemcpy returns once the source is staged, before the device is
  // written, and the calls run on a non-blocking stream that does not wait for the legacy one: wait
  // for the copy to land (without this, in-place checks read the previous call's data).
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after a copy to the device");
}
void copyToHost(void* dst, const void* src, size_t bytes) {
  if (bytes) check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
}
cudaStream_t perfStream() { return gStream; }
void syncStream() { check(cudaStreamSynchronize(gStream), "cudaStreamSynchronize"); }
double deviceCopyBandwidth(size_t bytes) {
  void* a = deviceAlloc(bytes);
  void* b = deviceAlloc(bytes);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<double> t;
  for (int i = 0; i < 11; ++i) {
    cudaEventRecord(e0, gStream);
    cudaMemcpyAsync(a, b, bytes, cudaMemcpyDeviceToDevice, gStream);
    cudaEventRecord(e1, gStream);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (i > 0) t.push_back(ms * 1e-3);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  deviceFree(a);
  deviceFree(b);
  std::sort(t.begin(), t.end());
  return 2.0 * static_cast<double>(bytes) / t[t.size() / 2] / 1e9;
}
#else
std::string selectDevice(int) { return "this build has no CUDA"; }
std::string deviceName() { return "none"; }
void* deviceAlloc(size_t) { return nullptr; }
void deviceFree(void*) {}
void copyToDevice(void*, const void*, size_t) {}
void copyToHost(void*, const void*, size_t) {}
cudaStream_t perfStream() { return nullptr; }
void syncStream() {}
double deviceCopyBandwidth(size_t) { return 0; }
#endif

#ifdef STRATA_CUDA_SIM
bool deviceCounts(DeviceCounts* out) {
  cudaSimCounters c{};
  if (cudaSimGetProcessCounters(&c) != cudaSuccess) return false;
  const double kernelLink = static_cast<double>(c.kernelBytesReadPeer + c.kernelBytesWrittenPeer);
  const double kernelHost = static_cast<double>(c.kernelBytesReadHost + c.kernelBytesWrittenHost);
  out->linkBytes = kernelLink + static_cast<double>(c.bytesPeerToPeer);
  out->hostBytes = kernelHost + static_cast<double>(c.bytesHostToDevice + c.bytesDeviceToHost);
  out->localBytes = static_cast<double>(c.kernelBytesRead + c.kernelBytesWritten) - kernelLink - kernelHost +
                    2.0 * static_cast<double>(c.bytesDeviceToDevice - c.bytesPeerToPeer);
  out->launches = static_cast<double>(c.kernelLaunches);
  return true;
}
void resetDeviceCounts() { cudaSimResetCounters(); }
#else
bool deviceCounts(DeviceCounts*) { return false; }
void resetDeviceCounts() {}
#endif

#ifdef STRATA_PERF_NCCL
namespace {
ncclComm_t gNccl = nullptr;
}
std::string ncclVersionText() {
  int v = 0;
  ncclGetVersion(&v);
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}
std::string ncclStart() {
  ncclUniqueId id{};
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  const ncclResult_t rc = ncclCommInitRank(&gNccl, size, id, rank);
  int ok = rc == ncclSuccess ? 1 : 0, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) {
    std::string why = ncclVersionText() + " refused this configuration";
    if (rc != ncclSuccess) why += std::string(": ") + ncclGetErrorString(rc) + " (" + ncclGetLastError(gNccl) + ")";
    if (gNccl != nullptr) ncclCommAbort(gNccl);
    gNccl = nullptr;
    return why;
  }
  return "";
}
void ncclStop() {
  if (gNccl != nullptr) ncclCommDestroy(gNccl);
  gNccl = nullptr;
}
bool ncclSupports(const CollectiveDescriptor& d, std::string* why) {
  switch (d.coll) {
    case Collective::kAllReduce: case Collective::kBroadcast: case Collective::kReduce: case Collective::kAllGather:
    case Collective::kReduceScatter: return true;
    default: *why = "NCCL has no such collective"; return false;
  }
}
int runNccl(const CollectiveDescriptor& d, const CallShape& s, const CallArgs& a, const void* send, void* recv) {
  // strata's datatype and op enums have NCCL's values.
  const auto t = static_cast<ncclDataType_t>(a.type);
  const auto op = static_cast<ncclRedOp_t>(a.op);
  ncclResult_t rc = ncclInvalidUsage;
  switch (d.coll) {
    case Collective::kAllReduce: rc = ncclAllReduce(send, recv, s.count, t, op, gNccl, gStream); break;
    case Collective::kBroadcast: rc = ncclBroadcast(send, recv, s.count, t, a.root, gNccl, gStream); break;
    case Collective::kReduce: rc = ncclReduce(send, recv, s.count, t, op, a.root, gNccl, gStream); break;
    case Collective::kAllGather: rc = ncclAllGather(send, recv, s.count, t, gNccl, gStream); break;
    case Collective::kReduceScatter: rc = ncclReduceScatter(send, recv, s.count, t, op, gNccl, gStream); break;
    default: break;
  }
  if (rc != ncclSuccess) return 1;
  syncStream();
  return 0;
}
#else
std::string ncclVersionText() { return "NCCL (not built in)"; }
std::string ncclStart() { return "this build has no NCCL"; }
void ncclStop() {}
bool ncclSupports(const CollectiveDescriptor&, std::string* why) {
  *why = "no NCCL in this build";
  return false;
}
int runNccl(const CollectiveDescriptor&, const CallShape&, const CallArgs&, const void*, void*) { return 1; }
#endif

}  // namespace strata::perf
