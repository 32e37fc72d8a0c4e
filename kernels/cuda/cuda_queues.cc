#include "kernels/cuda/cuda_queues.h"

#include <cuda_runtime.h>

#include <vector>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_compute.h"

namespace strata {
namespace {

size_t roundUpPow2(size_t bytes) {
  size_t n = size_t{1} << 20;
  while (n < bytes) n <<= 1;
  return n;
}

class CudaQueues final : public DeviceRuntime {
 public:
  CudaQueues(int device, double timeoutSeconds, bool poolScratch)
      : device_(device), timeoutSeconds_(timeoutSeconds), poolScratch_(poolScratch), compute_(nullptr, timeoutSeconds) {}
  ~CudaQueues() override {
    cudaSetDevice(device_);
    for (cudaStream_t s : streams_) {
      if (s != nullptr) cudaStreamSynchronize(s);
    }
    // Every queue is done with the scratch: freed on the first, which then finishes the free.
    if (scratch_ != nullptr && streamOrdered_ && cudaFreeAsync(scratch_, streams_[0]) == cudaSuccess) {
      cudaStreamSynchronize(streams_[0]);
    }
    for (cudaStream_t s : streams_) {
      if (s != nullptr) cudaStreamDestroy(s);
    }
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    if (staging_ != nullptr) cudaFreeHost(staging_);
    if (scratch_ != nullptr && !streamOrdered_) cudaFree(scratch_);
  }

  Status init() {
    STRATA_CHECK(cudaCheck(cudaSetDevice(device_), "cudaSetDevice", STRATA_WHERE));
    for (cudaStream_t& s : streams_) STRATA_CHECK(cudaCheck(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate", STRATA_WHERE));
    compute_.setStream(streams_[0]);
    int pools = 0;
    streamOrdered_ = poolScratch_ &&
                     cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device_) == cudaSuccess && pools == 1;
    cudaGetLastError();  // an attribute this driver does not know: not an error to keep
    return Status::Ok();
  }

  ComputeBackend& compute() override { return compute_; }

  Status copyAsync(DeviceQueue queue, void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return Status::Ok();
    return cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, streams_[static_cast<int>(queue)]),
                     "cudaMemcpyAsync (staging)", STRATA_WHERE);
  }
  Status record(DeviceQueue queue, DeviceMarker* marker) override {
    if (next_ == events_.size()) {
      cudaEvent_t e = nullptr;
      STRATA_CHECK(cudaCheck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate", STRATA_WHERE));
      events_.push_back(e);
    }
    STRATA_CHECK(cudaCheck(cudaEventRecord(events_[next_], streams_[static_cast<int>(queue)]), "cudaEventRecord", STRATA_WHERE));
    *marker = static_cast<DeviceMarker>(next_++);
    return Status::Ok();
  }
  Status waitOn(DeviceQueue queue, DeviceMarker marker) override {
    STRATA_REQUIRE(marker < next_, strataInternalError, "device queues: unknown marker %u", marker);
    return cudaCheck(cudaStreamWaitEvent(streams_[static_cast<int>(queue)], events_[marker], 0), "cudaStreamWaitEvent", STRATA_WHERE);
  }
  Status query(DeviceMarker marker, bool* done) override {
    STRATA_REQUIRE(marker < next_, strataInternalError, "device queues: unknown marker %u", marker);
    const cudaError_t rc = cudaEventQuery(events_[marker]);
    if (rc == cudaErrorNotReady) {
      *done = false;
      return Status::Ok();
    }
    *done = true;
    return cudaCheck(rc, "cudaEventQuery", STRATA_WHERE);
  }
  void resetMarkers() override { next_ = 0; }
  bool fits(size_t stagingBytes, size_t scratchBytes) const override {
    return stagingBytes <= stagingBytes_ && scratchBytes <= scratchBytes_;
  }
  Status reserve(size_t stagingBytes, size_t scratchBytes) override {
    STRATA_CHECK(grow(stagingBytes, &staging_, &stagingBytes_, true));
    return streamOrdered_ ? growInStreamOrder(scratchBytes) : grow(scratchBytes, &scratch_, &scratchBytes_, false);
  }
  bool growsScratchInStreamOrder() const override { return streamOrdered_; }
  Status staging(size_t bytes, char** base) override {
    STRATA_REQUIRE(bytes <= stagingBytes_, strataInternalError,
                   "device queues: %zu bytes of staging needed, %zu reserved", bytes, stagingBytes_);
    *base = static_cast<char*>(staging_);
    return Status::Ok();
  }
  Status scratch(size_t bytes, void** base) override {
    STRATA_REQUIRE(bytes <= scratchBytes_, strataInternalError,
                   "device queues: %zu bytes of scratch needed, %zu reserved", bytes, scratchBytes_);
    *base = scratch_;
    return Status::Ok();
  }

 private:
  // Pinned host memory of `bytes` (the staging pool: its size is fixed) or device memory of at
  // least `bytes` (power-of-two sizes, so a growing call sequence reallocates a few times at
  // most). Only between runs: nothing in flight uses it.
  static Status grow(size_t bytes, void** ptr, size_t* have, bool pinnedHost) {
    if (*have >= bytes || bytes == 0) return Status::Ok();
    if (*ptr != nullptr) pinnedHost ? cudaFreeHost(*ptr) : cudaFree(*ptr);
    *ptr = nullptr;
    *have = 0;
    const size_t want = pinnedHost ? bytes : roundUpPow2(bytes);
    STRATA_CHECK(pinnedHost ? cudaCheck(cudaHostAlloc(ptr, want, cudaHostAllocPortable), "cudaHostAlloc (pinned staging)", STRATA_WHERE)
                            : cudaCheck(cudaMalloc(ptr, want), "cudaMalloc (device scratch)", STRATA_WHERE));
    *have = want;
    return Status::Ok();
  }

  // The scratch through the stream-ordered allocator on the compute stream: neither call waits for
  // the device (cudaMalloc and cudaFree do, and would stall behind any stream of the process held
  // for a ticket). The old scratch is freed after whatever the other queues still have of it; the
  // other queues use the new one too, so it is complete (a bounded wait) before this returns.
  Status growInStreamOrder(size_t bytes) {
    if (scratchBytes_ >= bytes || bytes == 0) return Status::Ok();
    cudaEvent_t done[kNumDeviceQueues] = {nullptr, nullptr, nullptr};
    const Status grown = [&]() -> Status {
      for (cudaEvent_t& e : done) STRATA_CHECK(cudaCheck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate", STRATA_WHERE));
      if (scratch_ != nullptr) {
        for (int q = 1; q < kNumDeviceQueues; ++q) {
          STRATA_CHECK(cudaCheck(cudaEventRecord(done[q], streams_[q]), "cudaEventRecord", STRATA_WHERE));
          STRATA_CHECK(cudaCheck(cudaStreamWaitEvent(streams_[0], done[q], 0), "cudaStreamWaitEvent", STRATA_WHERE));
        }
        STRATA_CHECK(cudaCheck(cudaFreeAsync(scratch_, streams_[0]), "cudaFreeAsync (device scratch)", STRATA_WHERE));
        scratch_ = nullptr;
        scratchBytes_ = 0;
      }
      const size_t want = roundUpPow2(bytes);
      STRATA_CHECK(cudaCheck(cudaMallocAsync(&scratch_, want, streams_[0]), "cudaMallocAsync (device scratch)", STRATA_WHERE));
      STRATA_CHECK(cudaCheck(cudaEventRecord(done[0], streams_[0]), "cudaEventRecord", STRATA_WHERE));
      WaitPolicy bounded;
      bounded.timeoutSeconds = timeoutSeconds_;
      STRATA_CHECK(waitForEvent(done[0], bounded, "the device scratch's stream-ordered allocation"));
      scratchBytes_ = want;
      return Status::Ok();
    }();
    for (cudaEvent_t e : done) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    return grown;
  }

  int device_;
  double timeoutSeconds_;
  bool poolScratch_;            // the caller allows the scratch from the memory pool
  bool streamOrdered_ = false;  // ... and the device has the stream-ordered allocator
  CudaComputeBackend compute_;
  cudaStream_t streams_[kNumDeviceQueues] = {nullptr, nullptr, nullptr};
  std::vector<cudaEvent_t> events_;
  size_t next_ = 0;
  void* staging_ = nullptr;
  size_t stagingBytes_ = 0;
  void* scratch_ = nullptr;
  size_t scratchBytes_ = 0;
};

}  // namespace

Status makeCudaQueues(int device, double timeoutSeconds, bool poolScratch, std::unique_ptr<DeviceRuntime>* out) {
  auto queues = std::make_unique<CudaQueues>(device, timeoutSeconds, poolScratch);
  STRATA_CHECK(queues->init());
  *out = std::move(queues);
  return Status::Ok();
}

}  // namespace strata
