// GPU tier, no MPI: the device kernels against their host twin (kernels/host), bit for bit, for
// every type, op, input count, length (0, 1, odd, prime, large) and misalignment, in place and
// reduce-copy; the copy, divide and check kernels; the block reduction. Skips without a device.
#include <gtest/gtest.h>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/sequence.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/compute_backend.h"
#include "kernels/cuda/cuda_compute.h"
#include "kernels/cuda/cuda_kernels.h"

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

// Random bytes that are valid values of `type` (small integers, finite floats of mixed sign), so
// sums and products stay away from overflow-to-inf for the floating types and the host twin
// and the device must agree bit for bit.
std::vector<uint8_t> randomValues(DataType type, size_t count, unsigned seed) {
  std::vector<uint8_t> out(count * dataTypeSize(type));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-4, 4);
  std::uniform_real_distribution<float> real(-2.0f, 2.0f);
  for (size_t i = 0; i < count; ++i) {
    uint8_t* p = out.data() + i * dataTypeSize(type);
    switch (type) {
      case strataInt8: case strataUint8: { const int8_t v = static_cast<int8_t>(small(rng)); std::memcpy(p, &v, 1); break; }
      case strataInt32: case strataUint32: { const int32_t v = small(rng) * 1000 + static_cast<int32_t>(rng() % 7); std::memcpy(p, &v, 4); break; }
      case strataInt64: case strataUint64: { const int64_t v = static_cast<int64_t>(small(rng)) << 33; std::memcpy(p, &v, 8); break; }
      case strataFloat16: { const Half h = floatToHalf(real(rng)); std::memcpy(p, &h, 2); break; }
      case strataBfloat16: { const BFloat16 b = floatToBf16(real(rng)); std::memcpy(p, &b, 2); break; }
      case strataFloat32: { const float f = real(rng); std::memcpy(p, &f, 4); break; }
      case strataFloat64: { const double d = real(rng); std::memcpy(p, &d, 8); break; }
    }
  }
  return out;
}

struct DeviceBytes {
  thrust::device_vector<uint8_t> v;
  explicit DeviceBytes(const std::vector<uint8_t>& h) : v(h.begin(), h.end()) {}
  explicit DeviceBytes(size_t n) : v(n, 0xAB) {}
  uint8_t* ptr(size_t off = 0) { return thrust::raw_pointer_cast(v.data()) + off; }
  std::vector<uint8_t> host() const { thrust::host_vector<uint8_t> h = v; return std::vector<uint8_t>(h.begin(), h.end()); }
};

TEST(DeviceKernels, ReduceMatchesHostTwinBitForBit) {
  SKIP_WITHOUT_DEVICE();
  const size_t counts[] = {0, 1, 7, 31, 1031, 65537};
  const int inputs[] = {1, 2, 3, 5, 8, 16};
  unsigned seed = 1;
  for (int t = 0; t < kNumDataTypes; ++t) {
    const DataType type = static_cast<DataType>(t);
    const size_t es = dataTypeSize(type);
    for (int o = 0; o < kNumRedOps; ++o) {
      const RedOp op = static_cast<RedOp>(o);
      for (int n : inputs) {
        for (size_t count : counts) {
          for (int mode : {0, 1, 2}) {
            // 0: every buffer 16-byte aligned (vectors only); 1: every buffer one element off (a
            // scalar head, then vectors); 2: the last input one element further off (no common
            // alignment: scalars only).
            const size_t misalign = mode == 0 ? 0 : 1;
            std::vector<std::vector<uint8_t>> host(n);
            std::vector<DeviceBytes> dev;
            std::vector<const void*> hostPtrs(n), devPtrs(n);
            for (int k = 0; k < n; ++k) {
              host[k] = randomValues(type, count, seed++);
              std::vector<uint8_t> padded((count + 3) * es, 0);
              const size_t off = (misalign + (k == n - 1 && mode == 2 ? 1 : 0)) * es;
              std::memcpy(padded.data() + off, host[k].data(), host[k].size());
              dev.emplace_back(padded);
              hostPtrs[k] = host[k].data();
            }
            for (int k = 0; k < n; ++k) devPtrs[k] = dev[k].ptr((misalign + (k == n - 1 && mode == 2 ? 1 : 0)) * es);
            DeviceBytes out((count + 3) * es), copyOut((count + 3) * es);
            std::vector<uint8_t> want(count * es);
            ASSERT_TRUE(hostComputeBackend().reduce(want.data(), hostPtrs.data(), n, count, type, op).ok());
            ASSERT_TRUE(cuda::launchReduce(out.ptr(misalign * es), copyOut.ptr(misalign * es), devPtrs.data(), n, count,
                                           type, op, 0, nullptr).ok());
            ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
            const std::vector<uint8_t> got = out.host(), got2 = copyOut.host();
            ASSERT_EQ(std::memcmp(got.data() + misalign * es, want.data(), want.size()), 0)
                << dataTypeName(type) << " " << redOpName(op) << " n=" << n << " count=" << count << " alignment mode " << mode;
            ASSERT_EQ(std::memcmp(got2.data() + misalign * es, want.data(), want.size()), 0) << "reduce-copy's second output";
            for (size_t b = 0; b < misalign * es; ++b) ASSERT_EQ(got[b], 0xAB) << "wrote before the output";
            for (size_t b = (misalign + count) * es; b < got.size(); ++b) ASSERT_EQ(got[b], 0xAB) << "wrote past the output";
          }
        }
      }
    }
  }
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
  thrust::device_vector<float> a(count), b(count);
  thrust::sequence(a.begin(), a.end());
  thrust::sequence(b.begin(), b.end());
  for (size_t i : {size_t{0}, size_t{513}, size_t{777777}, count - 1}) b[i] = -1.0f;
  thrust::device_vector<unsigned long long> n(1, 0);
  ASSERT_TRUE(cuda::launchCountMismatches(thrust::raw_pointer_cast(a.data()), thrust::raw_pointer_cast(b.data()), count,
                                          strataFloat32, 1e-6, thrust::raw_pointer_cast(n.data()), nullptr)
                  .ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(static_cast<unsigned long long>(n[0]), 4u);
}

TEST(DeviceKernels, BackendRunsOnItsStreamAndSynchronizes) {
  SKIP_WITHOUT_DEVICE();
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  CudaComputeBackend backend(s, 30.0);
  thrust::device_vector<int> x(1000, 2), y(1000, 5);
  const void* in[2] = {thrust::raw_pointer_cast(x.data()), thrust::raw_pointer_cast(y.data())};
  ASSERT_TRUE(backend.reduce(thrust::raw_pointer_cast(x.data()), in, 2, 1000, strataInt32, strataProd).ok());
  ASSERT_TRUE(backend.synchronize().ok());
  EXPECT_EQ(static_cast<int>(x[999]), 10);
  cudaStreamDestroy(s);
}

}  // namespace
}  // namespace strata
