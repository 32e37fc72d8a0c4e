#include "src/core/memory_space.h"

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_compute.h"
#endif

namespace strata {

bool cudaAvailable() {
#ifdef STRATA_HAVE_CUDA
  static const bool available = [] {
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess) {
      cudaGetLastError();  // clear the sticky "no device" error
      return false;
    }
    return count > 0;
  }();
  return available;
#else
  return false;
#endif
}

MemorySpace classifyPointer(const void* ptr) {
#ifdef STRATA_HAVE_CUDA
  if (ptr == nullptr || !cudaAvailable()) return MemorySpace::kHost;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    cudaGetLastError();
    return MemorySpace::kHost;
  }
  return (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) ? MemorySpace::kDevice
                                                                                     : MemorySpace::kHost;
#else
  (void)ptr;
  return MemorySpace::kHost;
#endif
}

Status waitForStreamWork(cudaStream_t stream, const WaitPolicy& policy) {
#ifdef STRATA_HAVE_CUDA
  return waitForStream(stream, policy, "the work queued before this call on its stream");
#else
  return makeStatus(strataInvalidArgument, "a CUDA stream was given to a build without CUDA (pass 0)");
#endif
}

Status synchronizeStream(cudaStream_t stream, const WaitPolicy& policy) {
  if (stream == nullptr) return Status::Ok();
  STRATA_REQUIRE(cudaAvailable(), strataInvalidArgument, "a CUDA stream was given but no CUDA device is usable");
  return waitForStreamWork(stream, policy);
}

}  // namespace strata
