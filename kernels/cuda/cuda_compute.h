// The CUDA ComputeBackend: reduce, copy and divide steps enqueued as kernels on one stream.
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "kernels/common/bounded_wait.h"
#include "kernels/compute_backend.h"

namespace strata {

class CudaComputeBackend final : public ComputeBackend {
 public:
  explicit CudaComputeBackend(cudaStream_t stream, double timeoutSeconds = 300.0) : stream_(stream) {
    wait_.timeoutSeconds = timeoutSeconds;
  }
  MemorySpace space() const override { return MemorySpace::kDevice; }
  Status reduce(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) override;
  Status copy(void* dst, const void* src, size_t bytes) override;
  Status divide(void* data, size_t count, DataType type, int divisor) override;
  // Waits for the stream, polling an event with the timeout as the bound.
  Status synchronize() override;

  void setStream(cudaStream_t stream) { stream_ = stream; }

 private:
  cudaStream_t stream_;
  WaitPolicy wait_;  // no spin: device work takes its time
};

// Polls `event` until it completes (the library's bounded wait: a timeout names `what`, the abort
// flag ends it). Never blocks inside the CUDA runtime.
Status waitForEvent(cudaEvent_t event, const WaitPolicy& policy, const char* what);
// The same for the work queued on `stream` so far (an event recorded after it).
Status waitForStream(cudaStream_t stream, const WaitPolicy& policy, const char* what);

}  // namespace strata
