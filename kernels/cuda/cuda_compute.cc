#include "kernels/cuda/cuda_compute.h"

#include <sched.h>

#include <atomic>
#include <chrono>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"

namespace strata {

Status CudaComputeBackend::reduce(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) {
  return cuda::launchReduce(dst, nullptr, srcs, n, count, type, op, 0, stream_);
}

Status CudaComputeBackend::copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return Status::Ok();
  return cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_), "cudaMemcpyAsync", STRATA_WHERE);
}

Status CudaComputeBackend::divide(void* data, size_t count, DataType type, int divisor) {
  return cuda::launchDivide(data, count, type, divisor, stream_);
}

Status CudaComputeBackend::synchronize() {
  cudaEvent_t event = nullptr;
  STRATA_CHECK_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  Status s = cudaCheck(cudaEventRecord(event, stream_), "cudaEventRecord", STRATA_WHERE);
  if (s.ok()) s = waitForEvent(event, timeoutSeconds_, "the compute stream");
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
      return cudaCheck(rc, "cudaEventQuery", STRATA_WHERE).withContext(strformat("waiting for %s", what));
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
