#include "kernels/cuda/cuda_compute.h"

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

Status CudaComputeBackend::synchronize() { return waitForStream(stream_, wait_, "the compute stream"); }

Status waitForStream(cudaStream_t stream, const WaitPolicy& policy, const char* what) {
  cudaEvent_t event = nullptr;
  STRATA_CHECK_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  Status s = cudaCheck(cudaEventRecord(event, stream), "cudaEventRecord", STRATA_WHERE);
  if (s.ok()) s = waitForEvent(event, policy, what);
  cudaEventDestroy(event);
  return s;
}

Status waitForEvent(cudaEvent_t event, const WaitPolicy& policy, const char* what) {
  cudaError_t rc = cudaSuccess;
  STRATA_CHECK(waitUntil(
      policy,
      [&] {
        rc = cudaEventQuery(event);
        return rc != cudaErrorNotReady;
      },
      [&] { return strformat("%s on the device", what); }));
  if (rc != cudaSuccess) return cudaCheck(rc, "cudaEventQuery", STRATA_WHERE).withContext(strformat("waiting for %s", what));
  return Status::Ok();
}

}  // namespace strata
