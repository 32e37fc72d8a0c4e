#include "kernels/host/emulated_device.h"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace strata {

const char* deviceLaneName(DeviceLane lane) {
  switch (lane) {
    case DeviceLane::kCompute: return "compute";
    case DeviceLane::kToHost: return "to-host";
    case DeviceLane::kToDevice: return "to-device";
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;

// One in-order queue and the thread that drains it.
class Lane {
 public:
  Lane(unsigned jitter, unsigned seed) : jitter_(jitter), rng_(seed) { thread_ = std::thread([this] { loop(); }); }
  ~Lane() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void push(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      if (jitter_ != 0) std::this_thread::sleep_for(std::chrono::microseconds(rng_() % (jitter_ + 1)));
      task();
    }
  }
  unsigned jitter_;
  std::minstd_rand rng_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::thread thread_;
};

class EmulatedDevice;

// Compute steps queued on the compute lane, run by the host backend when their turn comes.
class QueuedCompute final : public ComputeBackend {
 public:
  explicit QueuedCompute(EmulatedDevice* dev) : dev_(dev) {}
  MemorySpace space() const override { return MemorySpace::kDevice; }
  Status reduce(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) override;
  Status copy(void* dst, const void* src, size_t bytes) override;
  Status divide(void* data, size_t count, DataType type, int divisor) override;
  Status synchronize() override;

 private:
  EmulatedDevice* dev_;
};

class EmulatedDevice final : public DeviceRuntime {
 public:
  explicit EmulatedDevice(const EmulatedDeviceOptions& o) : options_(o), compute_(this) {
    for (int l = 0; l < kNumDeviceLanes; ++l) lanes_.push_back(std::make_unique<Lane>(o.jitterMicros, o.seed * 3 + l));
  }
  ~EmulatedDevice() override { lanes_.clear(); }

  ComputeBackend& compute() override { return compute_; }

  Status copyAsync(DeviceLane lane, void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return Status::Ok();
    lanes_[static_cast<int>(lane)]->push([dst, src, bytes] { std::memcpy(dst, src, bytes); });
    return Status::Ok();
  }
  Status record(DeviceLane lane, DeviceMarker* marker) override {
    const DeviceMarker m = newMarker();
    std::atomic<bool>* flag = markers_[m].get();
    lanes_[static_cast<int>(lane)]->push([flag] { flag->store(true, std::memory_order_release); });
    *marker = m;
    return Status::Ok();
  }
  Status waitOn(DeviceLane lane, DeviceMarker marker) override {
    STRATA_REQUIRE(marker < next_, strataInternalError, "emulated device: unknown marker %u", marker);
    std::atomic<bool>* flag = markers_[marker].get();
    const double timeout = options_.timeoutSeconds;
    std::atomic<int>* failed = &failed_;
    lanes_[static_cast<int>(lane)]->push([flag, timeout, failed] {
      const auto start = Clock::now();
      while (!flag->load(std::memory_order_acquire)) {
        if (std::chrono::duration<double>(Clock::now() - start).count() > timeout) {
          failed->store(1);
          return;
        }
        sched_yield();
      }
    });
    return Status::Ok();
  }
  Status query(DeviceMarker marker, bool* done) override {
    STRATA_REQUIRE(marker < next_, strataInternalError, "emulated device: unknown marker %u", marker);
    STRATA_REQUIRE(failed_.load() == 0, strataTimeout, "emulated device: a lane timed out waiting for a marker");
    *done = markers_[marker]->load(std::memory_order_acquire);
    return Status::Ok();
  }
  void resetMarkers() override { next_ = 0; }
  Status staging(size_t bytes, char** base) override {
    if (staging_.size() < bytes) staging_.resize(bytes);
    *base = staging_.data();
    return Status::Ok();
  }
  Status scratch(size_t bytes, void** base) override {
    if (scratch_.size() < bytes) scratch_.resize(bytes);
    *base = scratch_.data();
    return Status::Ok();
  }

  void enqueueCompute(std::function<void()> task) { lanes_[0]->push(std::move(task)); }
  double timeoutSeconds() const { return options_.timeoutSeconds; }
  void fail() { failed_.store(1); }

 private:
  DeviceMarker newMarker() {
    if (next_ == markers_.size()) markers_.push_back(std::make_unique<std::atomic<bool>>(false));
    markers_[next_]->store(false);
    return next_++;
  }

  EmulatedDeviceOptions options_;
  QueuedCompute compute_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<std::unique_ptr<std::atomic<bool>>> markers_;
  DeviceMarker next_ = 0;
  std::atomic<int> failed_{0};
  std::vector<char> staging_, scratch_;
};

Status QueuedCompute::reduce(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) {
  STRATA_REQUIRE(n >= 1 && n <= kMaxReduceInputs, strataInternalError, "emulated reduce: %d inputs", n);
  std::vector<const void*> inputs(srcs, srcs + n);
  EmulatedDevice* dev = dev_;
  dev_->enqueueCompute([dev, dst, inputs, count, type, op] {
    if (!hostComputeBackend().reduce(dst, inputs.data(), static_cast<int>(inputs.size()), count, type, op).ok()) dev->fail();
  });
  return Status::Ok();
}
Status QueuedCompute::copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return Status::Ok();
  dev_->enqueueCompute([dst, src, bytes] { std::memcpy(dst, src, bytes); });
  return Status::Ok();
}
Status QueuedCompute::divide(void* data, size_t count, DataType type, int divisor) {
  EmulatedDevice* dev = dev_;
  dev_->enqueueCompute([dev, data, count, type, divisor] {
    if (!hostComputeBackend().divide(data, count, type, divisor).ok()) dev->fail();
  });
  return Status::Ok();
}
Status QueuedCompute::synchronize() {
  DeviceMarker m = kNoMarker;
  STRATA_CHECK(dev_->record(DeviceLane::kCompute, &m));
  const auto start = Clock::now();
  for (bool done = false; !done;) {
    STRATA_CHECK(dev_->query(m, &done));
    if (done) break;
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    STRATA_REQUIRE(waited <= dev_->timeoutSeconds(), strataTimeout,
                   "timed out after %.1f s waiting for the emulated device's compute lane", waited);
    sched_yield();
  }
  return Status::Ok();
}

}  // namespace

std::unique_ptr<DeviceRuntime> makeEmulatedDevice(const EmulatedDeviceOptions& options) {
  return std::make_unique<EmulatedDevice>(options);
}

}  // namespace strata
