// The emulated device's ordering guarantees (what the executor's device mode relies on, and what
// the CUDA lanes give): a lane runs its queue in order, a marker completes after everything queued
// before it on its lane, waitOn holds a lane until another lane's marker. And the staging chunk
// size: the same for sender and receiver, within its bounds.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "inter_node/executor.h"
#include "kernels/host/emulated_device.h"

namespace strata {
namespace {

// Polls until the marker completes, yielding the core (the lanes are threads that need it), for at
// most 60 s.
bool waitDone(DeviceRuntime& dev, DeviceMarker m) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    bool done = false;
    if (!dev.query(m, &done).ok()) return false;
    if (done) return true;
    std::this_thread::yield();
  }
  return false;
}

TEST(EmulatedDevice, LanesRunInOrderAndWaitForEachOther) {
  EmulatedDeviceOptions o;
  o.jitterMicros = 50;
  auto dev = makeEmulatedDevice(o);
  for (int trial = 0; trial < 20; ++trial) {
    dev->resetMarkers();
    std::vector<int> a(4096, trial), b(4096, -1), c(4096, -1);
    // to-host copies a into b; compute waits for that, then doubles b in place (a 1-input reduce
    // is a copy, so add b to itself); to-device copies the result into c after compute's marker.
    ASSERT_TRUE(dev->copyAsync(DeviceLane::kToHost, b.data(), a.data(), a.size() * sizeof(int)).ok());
    DeviceMarker copied = kNoMarker, doubled = kNoMarker, last = kNoMarker;
    ASSERT_TRUE(dev->record(DeviceLane::kToHost, &copied).ok());
    ASSERT_TRUE(dev->waitOn(DeviceLane::kCompute, copied).ok());
    const void* in[2] = {b.data(), b.data()};
    ASSERT_TRUE(dev->compute().reduce(b.data(), in, 2, b.size(), strataInt32, strataSum).ok());
    ASSERT_TRUE(dev->record(DeviceLane::kCompute, &doubled).ok());
    ASSERT_TRUE(dev->waitOn(DeviceLane::kToDevice, doubled).ok());
    ASSERT_TRUE(dev->copyAsync(DeviceLane::kToDevice, c.data(), b.data(), b.size() * sizeof(int)).ok());
    ASSERT_TRUE(dev->record(DeviceLane::kToDevice, &last).ok());
    ASSERT_TRUE(waitDone(*dev, last));
    bool done = false;
    ASSERT_TRUE(dev->query(copied, &done).ok());
    EXPECT_TRUE(done) << "a marker the finished lanes waited for is complete";
    for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], 2 * trial) << "element " << i << ", trial " << trial;
  }
}

TEST(EmulatedDevice, StagingAndScratchGrow) {
  auto dev = makeEmulatedDevice({});
  char* s = nullptr;
  void* d = nullptr;
  ASSERT_TRUE(dev->staging(100, &s).ok());
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(dev->staging(1 << 20, &s).ok());
  std::memset(s, 1, 1 << 20);
  ASSERT_TRUE(dev->scratch(1 << 20, &d).ok());
  std::memset(d, 2, 1 << 20);
}

TEST(StagingChunks, SizeFollowsTheModelWithinBounds) {
  EXPECT_EQ(stagingChunkBytes(0), size_t{64} << 10);
  EXPECT_EQ(stagingChunkBytes(1 << 20), size_t{248} << 10);  // sqrt(2^20 * 62500) = 256000, down to 4 KiB
  const size_t c64 = stagingChunkBytes(size_t{64} << 20);
  EXPECT_GT(c64, size_t{1} << 20);
  EXPECT_LT(c64, size_t{4} << 20);
  EXPECT_EQ(c64 % 4096, 0u);
  EXPECT_EQ(stagingChunkBytes(size_t{1} << 40), size_t{16} << 20);
}

}  // namespace
}  // namespace strata
