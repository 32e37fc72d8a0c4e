// The device queues' ordering guarantees (what the executor's device mode relies on): a queue runs
// in order, a marker completes after everything queued before it on its queue, waitOn holds a
// queue until another queue's marker; memory is reserved, never grown by a run. And the staging
// chunk size: the same for sender and receiver, within its bounds.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "inter_node/executor.h"
#include "src/core/config.h"
#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_queues.h"
#endif

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

#ifdef STRATA_HAVE_CUDA
// On the GPU, or in CI on the CUDA simulator, whose streams complete in randomised order.
TEST(CudaQueues, RunInOrderAndWaitForEachOther) {
  std::unique_ptr<DeviceRuntime> dev;
  ASSERT_TRUE(makeCudaQueues(0, 60, true, &dev).ok());
  const size_t n = 4096, bytes = n * sizeof(int);
  ASSERT_FALSE(dev->fits(2 * bytes, bytes));
  ASSERT_TRUE(dev->reserve(2 * bytes, bytes).ok());
  ASSERT_TRUE(dev->fits(2 * bytes, bytes));
  char* staging = nullptr;
  void* scratch = nullptr;
  ASSERT_TRUE(dev->staging(2 * bytes, &staging).ok());
  ASSERT_TRUE(dev->scratch(bytes, &scratch).ok());
  EXPECT_FALSE(dev->scratch(size_t{1} << 40, &scratch).ok()) << "a run never allocates: more than reserved is an error";
  int* a = reinterpret_cast<int*>(staging);
  int* c = reinterpret_cast<int*>(staging + bytes);
  int* b = static_cast<int*>(scratch);
  for (int trial = 0; trial < 20; ++trial) {
    dev->resetMarkers();
    for (size_t i = 0; i < n; ++i) a[i] = trial, c[i] = -1;
    // to-host copies a into b; compute waits for that, then doubles b in place; to-device copies
    // the result into c after compute's marker.
    ASSERT_TRUE(dev->copyAsync(DeviceQueue::kToHost, b, a, bytes).ok());
    DeviceMarker copied = kNoMarker, doubled = kNoMarker, last = kNoMarker;
    ASSERT_TRUE(dev->record(DeviceQueue::kToHost, &copied).ok());
    ASSERT_TRUE(dev->waitOn(DeviceQueue::kCompute, copied).ok());
    const void* in[2] = {b, b};
    ASSERT_TRUE(dev->compute().reduce(b, in, 2, n, strataInt32, strataSum).ok());
    ASSERT_TRUE(dev->record(DeviceQueue::kCompute, &doubled).ok());
    ASSERT_TRUE(dev->waitOn(DeviceQueue::kToDevice, doubled).ok());
    ASSERT_TRUE(dev->copyAsync(DeviceQueue::kToDevice, c, b, bytes).ok());
    ASSERT_TRUE(dev->record(DeviceQueue::kToDevice, &last).ok());
    ASSERT_TRUE(waitDone(*dev, last));
    bool done = false;
    ASSERT_TRUE(dev->query(copied, &done).ok());
    EXPECT_TRUE(done) << "a marker the finished lanes waited for is complete";
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], 2 * trial) << "element " << i << ", trial " << trial;
  }
}

// The scratch from the device's memory pool where the caller allows it (it grows without waiting for
// the device), and from cudaMalloc where it does not: a pool's memory has no CUDA IPC handle, which
// a device-aware MPI sending from the scratch may need. Both hold what is written, across growth.
TEST(CudaQueues, ScratchComesFromThePoolOnlyWhereAllowed) {
  for (bool pool : {true, false}) {
    std::unique_ptr<DeviceRuntime> dev;
    ASSERT_TRUE(makeCudaQueues(0, 60, pool, &dev).ok());
    EXPECT_EQ(dev->growsScratchInStreamOrder(), pool) << "pool allowed: " << pool;
    for (size_t bytes : {size_t{4096}, size_t{3} << 20}) {  // the second grows it
      ASSERT_TRUE(dev->reserve(0, bytes).ok()) << "pool allowed: " << pool << ", " << bytes << " bytes";
      void* scratch = nullptr;
      ASSERT_TRUE(dev->scratch(bytes, &scratch).ok());
      std::vector<unsigned char> in(bytes, static_cast<unsigned char>(bytes % 251)), out(bytes, 0);
      ASSERT_EQ(cudaMemcpy(scratch, in.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(out.data(), scratch, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(out, in) << "pool allowed: " << pool << ", " << bytes << " bytes";
      cudaIpcMemHandle_t handle;
      const cudaError_t exported = cudaIpcGetMemHandle(&handle, scratch);
      cudaGetLastError();
      EXPECT_EQ(exported == cudaSuccess, !pool) << "pool allowed: " << pool << ": " << cudaGetErrorString(exported);
    }
  }
}
#endif

TEST(StagingChunks, SizeFollowsTheModelWithinTheSlot) {
  const size_t slot = size_t{2} << 20;
  EXPECT_EQ(stagingChunkBytes(0, slot), size_t{64} << 10);
  EXPECT_EQ(stagingChunkBytes(1 << 20, slot), size_t{248} << 10);  // sqrt(2^20 * 62500) = 256000, down to 4 KiB
  const size_t c16 = stagingChunkBytes(size_t{16} << 20, slot);
  EXPECT_GT(c16, size_t{512} << 10);
  EXPECT_LT(c16, size_t{1} << 20);
  EXPECT_EQ(c16 % 4096, 0u);
  EXPECT_EQ(stagingChunkBytes(size_t{64} << 20, slot), size_t{2048000}) << "sqrt(64 MiB x 62500) = 2 MB";
  EXPECT_EQ(stagingChunkBytes(size_t{256} << 20, slot), slot) << "4 MB, capped at the slot";
  EXPECT_EQ(stagingChunkBytes(size_t{1} << 40, slot), slot);
  EXPECT_EQ(stagingChunkBytes(size_t{1} << 20, 4096), 4096u) << "never beyond a slot, even below 64 KiB";
}

TEST(StagingChunks, PoolFromTheConfiguration) {
  setenv("STRATA_STAGE_CHUNK", "5000", 1);
  setenv("STRATA_STAGE_SLOTS", "3", 1);
  Config c;
  const Status s = resolveConfig(nullptr, &c);
  unsetenv("STRATA_STAGE_CHUNK");
  unsetenv("STRATA_STAGE_SLOTS");
  ASSERT_TRUE(s.ok()) << s.message();
  const StagingPool p = StagingPool::sized(c.stageChunkBytes, c.stageSlots);
  EXPECT_EQ(p.slotBytes, 8192u) << "rounded up to 4 KiB";
  EXPECT_EQ(p.slots, 3);
  EXPECT_TRUE(p.fixedChunks);
  EXPECT_EQ(p.bytes(), 6u * 8192u) << "as many receive slots as send slots";
  ASSERT_TRUE(resolveConfig(nullptr, &c).ok());
  const StagingPool d = StagingPool::sized(c.stageChunkBytes, c.stageSlots);
  EXPECT_FALSE(d.fixedChunks);
  EXPECT_EQ(d.bytes(), 16u * (size_t{2} << 20));
}

}  // namespace
}  // namespace strata
