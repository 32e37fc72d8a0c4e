// GPU tier, no MPI: the device kernels against their host twin (kernels/host), bit for bit, for
// every type, op, input count, length (0, 1, odd, prime, large) and misalignment, in place and
// reduce-copy; the copy, divide and check kernels; the block reduction. Skips without a device.
// Inputs are allocations that end where the data ends, so under the simulator (which checks every
// access against its allocation) a vector load past an input's end is an error.
#include <gtest/gtest.h>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/compute_backend.h"
#include "kernels/cuda/cuda_compute.h"
#include "kernels/cuda/cuda_kernels.h"
#include "tests/gpu/device_buffer.h"
#include "tests/gpu/kernel_cases.h"

namespace strata {
namespace {

bool haveDevice() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
}

#define SKIP_WITHOUT_DEVICE() \
  if (!haveDevice()) GTEST_SKIP() << "no CUDA device"

using test::DeviceBytes;
using test::randomValues;

TEST(DeviceKernels, ReduceMatchesHostTwinBitForBit) {
  SKIP_WITHOUT_DEVICE();
  unsigned seed = 1;
  test::forEachReduceCase({0, 1, 7, 31, 1031, 65537}, {1, 2, 3, 5, 8, 16}, [&](DataType type, RedOp op, int n,
                                                                                size_t count, int mode) -> bool {
    const size_t es = dataTypeSize(type), misalign = test::outputMisalignment(mode, es);
    std::vector<std::vector<uint8_t>> host(static_cast<size_t>(n));
    std::vector<DeviceBytes> dev;
    std::vector<const void*> hostPtrs(static_cast<size_t>(n)), devPtrs(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) {
      host[k] = randomValues(type, count, seed++);
      std::vector<uint8_t> padded(test::inputMisalignment(mode, k, n, es) + count * es, 0);
      std::memcpy(padded.data() + test::inputMisalignment(mode, k, n, es), host[k].data(), host[k].size());
      dev.emplace_back(padded);
      hostPtrs[k] = host[k].data();
    }
    for (int k = 0; k < n; ++k) devPtrs[k] = dev[k].ptr(test::inputMisalignment(mode, k, n, es));
    DeviceBytes out(misalign + (count + 2) * es), copyOut(misalign + (count + 2) * es);
    std::vector<uint8_t> want(count * es);
    EXPECT_TRUE(hostComputeBackend().reduce(want.data(), hostPtrs.data(), n, count, type, op).ok());
    // Mode 3 puts the second output at another alignment than the first (written by a copy).
    const size_t misalign2 = mode == 3 ? (misalign + es) % 16 : misalign;
    EXPECT_TRUE(cuda::launchReduce(out.ptr(misalign), copyOut.ptr(misalign2), devPtrs.data(), n, count, type, op, 0,
                                   nullptr).ok());
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<uint8_t> got = out.host(), got2 = copyOut.host();
    bool ok = std::memcmp(got.data() + misalign, want.data(), want.size()) == 0 &&
              std::memcmp(got2.data() + misalign2, want.data(), want.size()) == 0;
    for (size_t b = 0; b < misalign; ++b) ok &= got[b] == 0xAB;
    for (size_t b = misalign + count * es; b < got.size(); ++b) ok &= got[b] == 0xAB;
    for (size_t b = 0; b < misalign2; ++b) ok &= got2[b] == 0xAB;
    for (size_t b = misalign2 + count * es; b < got2.size(); ++b) ok &= got2[b] == 0xAB;
    EXPECT_TRUE(ok) << dataTypeName(type) << " " << redOpName(op) << " n=" << n << " count=" << count
                    << " alignment mode " << mode << ": wrong values, or bytes written outside the outputs";
    return ok;
  });
}

TEST(DeviceKernels, InPlaceAndFusedAverage) {
  SKIP_WITHOUT_DEVICE();
  for (DataType type : {strataInt32, strataFloat32, strataFloat16, strataBfloat16, strataInt64}) {
    const size_t count = 100003, es = dataTypeSize(type);
    std::vector<uint8_t> a = randomValues(type, count, 7), b = randomValues(type, count, 8);
    DeviceBytes da(a), db(b);
    const void* hp[2] = {a.data(), b.data()};
    std::vector<uint8_t> want(count * es);
    ASSERT_TRUE(hostComputeBackend().reduce(want.data(), hp, 2, count, type, strataSum).ok());
    ASSERT_TRUE(hostComputeBackend().divide(want.data(), count, type, 3).ok());
    const void* dp[2] = {da.ptr(), db.ptr()};
    ASSERT_TRUE(cuda::launchReduce(da.ptr(), nullptr, dp, 2, count, type, strataAvg, 3, nullptr).ok());  // in place
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(da.host(), want) << dataTypeName(type);
    // The separate divide kernel agrees with the fused one.
    DeviceBytes dc(b);
    std::vector<uint8_t> wantDiv = b;
    ASSERT_TRUE(hostComputeBackend().divide(wantDiv.data(), count, type, 7).ok());
    ASSERT_TRUE(cuda::launchDivide(dc.ptr(), count, type, 7, nullptr).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(dc.host(), wantDiv) << dataTypeName(type);
  }
}

// strataAvg over more ranks than an 8-bit type holds, fused and as the separate divide kernel.
TEST(DeviceKernels, AverageOfBytesOverManyRanks) {
  SKIP_WITHOUT_DEVICE();
  for (DataType type : {strataInt8, strataUint8}) {
    std::vector<uint8_t> values(256);
    for (int v = 0; v < 256; ++v) values[static_cast<size_t>(v)] = static_cast<uint8_t>(v);
    for (int divisor : {128, 200, 300}) {
      std::vector<uint8_t> want = values;
      ASSERT_TRUE(hostComputeBackend().divide(want.data(), want.size(), type, divisor).ok());
      DeviceBytes fused(values), out(values.size()), separate(values);
      const void* in[1] = {fused.ptr()};
      ASSERT_TRUE(cuda::launchReduce(out.ptr(), nullptr, in, 1, values.size(), type, strataAvg, divisor, nullptr).ok());
      ASSERT_TRUE(cuda::launchDivide(separate.ptr(), values.size(), type, divisor, nullptr).ok());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_EQ(out.host(), want) << dataTypeName(type) << " / " << divisor << " (fused)";
      EXPECT_EQ(separate.host(), want) << dataTypeName(type) << " / " << divisor << " (divide kernel)";
    }
  }
}

TEST(DeviceKernels, CopyAnyAlignment) {
  SKIP_WITHOUT_DEVICE();
  const std::vector<uint8_t> src = randomValues(strataUint8, 70001, 3);
  DeviceBytes ds(src);
  for (size_t so : {0, 1, 5, 16}) {
    for (size_t dst : {0, 3, 16}) {
      for (size_t bytes : {size_t{0}, size_t{1}, size_t{15}, size_t{17}, size_t{65536}}) {
        DeviceBytes dd(70100);
        ASSERT_TRUE(cuda::launchCopy(dd.ptr(dst), ds.ptr(so), bytes, nullptr).ok());
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const std::vector<uint8_t> got = dd.host();
        ASSERT_EQ(std::memcmp(got.data() + dst, src.data() + so, bytes), 0) << so << " " << dst << " " << bytes;
        if (dst > 0) ASSERT_EQ(got[dst - 1], 0xAB);
        ASSERT_EQ(got[dst + bytes], 0xAB);
      }
    }
  }
}

TEST(DeviceKernels, CountMismatchesUsesBlockReductions) {
  SKIP_WITHOUT_DEVICE();
  const size_t count = 1 << 20;
  std::vector<float> ha(count), hb(count);
  std::iota(ha.begin(), ha.end(), 0.0f);
  std::iota(hb.begin(), hb.end(), 0.0f);
  for (size_t i : {size_t{0}, size_t{513}, size_t{777777}, count - 1}) hb[i] = -1.0f;
  DeviceBytes a(ha), b(hb), n(sizeof(unsigned long long), 0);
  ASSERT_TRUE(cuda::launchCountMismatches(a.as<float>(), b.as<float>(), count, strataFloat32, 1e-6,
                                          n.as<unsigned long long>(), nullptr)
                  .ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(n.hostAs<unsigned long long>()[0], 4u);
}

TEST(DeviceKernels, BackendRunsOnItsStreamAndSynchronizes) {
  SKIP_WITHOUT_DEVICE();
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  CudaComputeBackend backend(s, 30.0);
  DeviceBytes x(std::vector<int>(1000, 2)), y(std::vector<int>(1000, 5));
  const void* in[2] = {x.ptr(), y.ptr()};
  ASSERT_TRUE(backend.reduce(x.ptr(), in, 2, 1000, strataInt32, strataProd).ok());
  ASSERT_TRUE(backend.synchronize().ok());
  EXPECT_EQ(x.hostAs<int>()[999], 10);
  cudaStreamDestroy(s);
}

// The fallback stream wait must not let the stream run on when its flag never comes: the data it
// guards is incomplete. It traps, so the context reports an error (a child process: the error is
// sticky).
TEST(DeviceKernelsDeathTest, WaitFlagKernelTrapsOnTimeout) {
  SKIP_WITHOUT_DEVICE();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        void* mapped = nullptr;
        if (cudaHostAlloc(&mapped, 2 * sizeof(uint32_t), cudaHostAllocMapped) != cudaSuccess) std::exit(2);
        auto* words = static_cast<uint32_t*>(mapped);
        words[0] = 0;  // the flag: never reaches 1
        words[1] = 0;  // set on timeout
        cudaStream_t s = nullptr;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        if (!cuda::launchWaitFlag(words, 1, 0.05, words + 1, s).ok()) std::exit(3);
        const cudaError_t rc = cudaStreamSynchronize(s);
        std::exit(rc != cudaSuccess && words[1] == 1 ? 0 : 4);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace strata
