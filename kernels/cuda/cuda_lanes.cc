#include "kernels/cuda/cuda_lanes.h"

#include <cuda_runtime.h>

#include <vector>

#include "kernels/cuda/cuda_compute.h"

namespace strata {
namespace {

Status cudaStatus(cudaError_t rc, const char* what) {
  STRATA_REQUIRE(rc == cudaSuccess, strataUnhandledCudaError, "%s: %s", what, cudaGetErrorString(rc));
  return Status::Ok();
}

size_t roundUpPow2(size_t bytes) {
  size_t n = size_t{1} << 20;
  while (n < bytes) n <<= 1;
  return n;
}

class CudaLanes final : public DeviceRuntime {
 public:
  CudaLanes(int device, double timeoutSeconds) : device_(device), compute_(nullptr, timeoutSeconds) {}
  ~CudaLanes() override {
    cudaSetDevice(device_);
    for (cudaStream_t s : lanes_) {
      if (s != nullptr) {
        cudaStreamSynchronize(s);
        cudaStreamDestroy(s);
      }
    }
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    if (staging_ != nullptr) cudaFreeHost(staging_);
    if (scratch_ != nullptr) cudaFree(scratch_);
  }

  Status init() {
    STRATA_CHECK(cudaStatus(cudaSetDevice(device_), "cudaSetDevice"));
    for (cudaStream_t& s : lanes_) STRATA_CHECK(cudaStatus(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"));
    compute_.setStream(lanes_[0]);
    return Status::Ok();
  }

  ComputeBackend& compute() override { return compute_; }

  Status copyAsync(DeviceLane lane, void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return Status::Ok();
    return cudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, lanes_[static_cast<int>(lane)]),
                      "cudaMemcpyAsync (staging)");
  }
  Status record(DeviceLane lane, DeviceMarker* marker) override {
    if (next_ == events_.size()) {
      cudaEvent_t e = nullptr;
      STRATA_CHECK(cudaStatus(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate"));
      events_.push_back(e);
    }
    STRATA_CHECK(cudaStatus(cudaEventRecord(events_[next_], lanes_[static_cast<int>(lane)]), "cudaEventRecord"));
    *marker = static_cast<DeviceMarker>(next_++);
    return Status::Ok();
  }
  Status waitOn(DeviceLane lane, DeviceMarker marker) override {
    STRATA_REQUIRE(marker < next_, strataInternalError, "device lanes: unknown marker %u", marker);
    return cudaStatus(cudaStreamWaitEvent(lanes_[static_cast<int>(lane)], events_[marker], 0), "cudaStreamWaitEvent");
  }
  Status query(DeviceMarker marker, bool* done) override {
    STRATA_REQUIRE(marker < next_, strataInternalError, "device lanes: unknown marker %u", marker);
    const cudaError_t rc = cudaEventQuery(events_[marker]);
    if (rc == cudaErrorNotReady) {
      *done = false;
      return Status::Ok();
    }
    *done = true;
    return cudaStatus(rc, "cudaEventQuery");
  }
  void resetMarkers() override { next_ = 0; }
  bool fits(size_t stagingBytes, size_t scratchBytes) const override {
    return stagingBytes <= stagingBytes_ && scratchBytes <= scratchBytes_;
  }
  Status reserve(size_t stagingBytes, size_t scratchBytes) override {
    STRATA_CHECK(grow(stagingBytes, &staging_, &stagingBytes_, true));
    return grow(scratchBytes, &scratch_, &scratchBytes_, false);
  }
  Status staging(size_t bytes, char** base) override {
    STRATA_REQUIRE(bytes <= stagingBytes_, strataInternalError,
                   "device lanes: %zu bytes of staging needed, %zu reserved", bytes, stagingBytes_);
    *base = static_cast<char*>(staging_);
    return Status::Ok();
  }
  Status scratch(size_t bytes, void** base) override {
    STRATA_REQUIRE(bytes <= scratchBytes_, strataInternalError,
                   "device lanes: %zu bytes of scratch needed, %zu reserved", bytes, scratchBytes_);
    *base = scratch_;
    return Status::Ok();
  }

 private:
  // Pinned host or device memory of at least `bytes` (power-of-two sizes, so a growing call
  // sequence reallocates a few times at most). Only between runs: nothing in flight uses it.
  static Status grow(size_t bytes, void** ptr, size_t* have, bool pinnedHost) {
    if (*have >= bytes || bytes == 0) return Status::Ok();
    if (*ptr != nullptr) pinnedHost ? cudaFreeHost(*ptr) : cudaFree(*ptr);
    *ptr = nullptr;
    *have = 0;
    const size_t want = roundUpPow2(bytes);
    STRATA_CHECK(pinnedHost ? cudaStatus(cudaHostAlloc(ptr, want, cudaHostAllocPortable), "cudaHostAlloc (pinned staging)")
                            : cudaStatus(cudaMalloc(ptr, want), "cudaMalloc (device scratch)"));
    *have = want;
    return Status::Ok();
  }

  int device_;
  CudaComputeBackend compute_;
  cudaStream_t lanes_[kNumDeviceLanes] = {nullptr, nullptr, nullptr};
  std::vector<cudaEvent_t> events_;
  size_t next_ = 0;
  void* staging_ = nullptr;
  size_t stagingBytes_ = 0;
  void* scratch_ = nullptr;
  size_t scratchBytes_ = 0;
};

}  // namespace

Status makeCudaLanes(int device, double timeoutSeconds, std::unique_ptr<DeviceRuntime>* out) {
  auto lanes = std::make_unique<CudaLanes>(device, timeoutSeconds);
  STRATA_CHECK(lanes->init());
  *out = std::move(lanes);
  return Status::Ok();
}

}  // namespace strata
