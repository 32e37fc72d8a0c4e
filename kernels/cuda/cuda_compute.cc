#include "kernels/cuda/cuda_compute.h"

#include <sched.h>

#include <atomic>
#include <chrono>

#include "kernels/cuda/cuda_kernels.h"

namespace strata {

Status CudaComputeBackend::reduce(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) {
  return cuda::launchReduce(dst, nullptr, srcs, n, count, type, op, 0, stream_);
}

Status CudaComputeBackend::copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return Status::Ok();
  const cudaError_t rc = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_);
  STRATA_REQUIRE(rc == cudaSuccess, strataUnhandledCudaError, "cudaMemcpyAsync of %zu bytes: %s", bytes,
                 cudaGetErrorString(rc));
  return Status::Ok();
}

Status CudaComputeBackend::divide(void* data, size_t count, DataType type, int divisor) {
  return cuda::launchDivide(data, count, type, divisor, stream_);
}

Status CudaComputeBackend::synchronize() {
  cudaEvent_t event = nullptr;
  cudaError_t rc = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  STRATA_REQUIRE(rc == cudaSuccess, strataUnhandledCudaError, "cudaEventCreate: %s", cudaGetErrorString(rc));
  rc = cudaEventRecord(event, stream_);
  Status s = rc == cudaSuccess ? waitForEvent(event, timeoutSeconds_, "the compute stream")
                               : makeStatus(strataUnhandledCudaError, "cudaEventRecord: %s", cudaGetErrorString(rc));
  cudaEventDestroy(event);
  return s;
}

Status waitForEvent(cudaEvent_t event, double timeoutSeconds, const char* what, const std::atomic<bool>* abortFlag) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (unsigned polls = 0;; ++polls) {
    const cudaError_t rc = cudaEventQuery(event);
    if (rc == cudaSuccess) return Status::Ok();
    if (rc != cudaErrorNotReady) {
      return makeStatus(strataUnhandledCudaError, "waiting for %s: %s", what, cudaGetErrorString(rc));
    }
    if ((polls & 63) == 63) {
      if (abortFlag != nullptr && abortFlag->load(std::memory_order_relaxed)) {
        return makeStatus(strataInvalidUsage, "the communicator was aborted while waiting for %s", what);
      }
      const double waited = std::chrono::duration<double>(Clock::now() - start).count();
      if (waited > timeoutSeconds) {
        return makeStatus(strataTimeout, "timed out after %.1f s waiting for %s on the device", waited, what);
      }
      sched_yield();
    }
  }
}

}  // namespace strata
