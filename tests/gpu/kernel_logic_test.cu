// The reduce kernel's logic on the host, no GPU needed (it runs in CI): every thread of a grid
// runs the same reduceAsThread the kernel runs (kernels/cuda/device_ops.cuh), over buffers with
// every alignment mode, and the result must equal the host twin's bit for bit. This checks the
// split into scalar head, 16-byte vectors and scalar tail, the grid stride, the fp32 accumulation
// of the 16-bit types, reduce-copy and the fused average. On a GPU, device_kernels_test.cu runs
// the kernels themselves.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/compute_backend.h"
#include "kernels/cuda/device_ops.cuh"

namespace strata::cuda {
namespace {

// A buffer whose data starts `misalignBytes` past a 16-byte boundary.
struct Aligned {
  std::vector<unsigned char> store;
  unsigned char* data;
  Aligned(size_t bytes, size_t misalignBytes) : store(bytes + 64, 0xAB) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(store.data());
    data = store.data() + ((16 - p % 16) % 16) + 16 + misalignBytes;  // 16 guard bytes before
  }
};

template <typename T, typename Op>
void runGrid(const ReduceArgs& a, size_t blocks, size_t threads) {
  const VectorSplit split = splitForVectors<T>(a);
  for (size_t b = 0; b < blocks; ++b) {
    for (size_t t = 0; t < threads; ++t) reduceAsThread<T, Op>(a, split, ThreadIndex{b, blocks, t, threads});
  }
}

template <typename T>
void runGridOp(const ReduceArgs& a, RedOp op, size_t blocks, size_t threads) {
  switch (op) {
    case strataSum:
    case strataAvg: runGrid<T, DevSum>(a, blocks, threads); break;
    case strataProd: runGrid<T, DevProd>(a, blocks, threads); break;
    case strataMax: runGrid<T, DevMax>(a, blocks, threads); break;
    case strataMin: runGrid<T, DevMin>(a, blocks, threads); break;
    default: break;
  }
}

void runGridTyped(DataType type, const ReduceArgs& a, RedOp op, size_t blocks, size_t threads) {
  switch (type) {
    case strataInt8: runGridOp<int8_t>(a, op, blocks, threads); break;
    case strataUint8: runGridOp<uint8_t>(a, op, blocks, threads); break;
    case strataInt32: runGridOp<int32_t>(a, op, blocks, threads); break;
    case strataUint32: runGridOp<uint32_t>(a, op, blocks, threads); break;
    case strataInt64: runGridOp<int64_t>(a, op, blocks, threads); break;
    case strataUint64: runGridOp<uint64_t>(a, op, blocks, threads); break;
    case strataFloat16: runGridOp<__half>(a, op, blocks, threads); break;
    case strataFloat32: runGridOp<float>(a, op, blocks, threads); break;
    case strataFloat64: runGridOp<double>(a, op, blocks, threads); break;
    case strataBfloat16: runGridOp<__nv_bfloat16>(a, op, blocks, threads); break;
  }
}

// Values valid in `type`, small enough that no sum or product overflows a float format.
void fillRandom(DataType type, void* dst, size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> real(-2.0f, 2.0f);
  const size_t es = dataTypeSize(type);
  for (size_t i = 0; i < count; ++i) {
    unsigned char* p = static_cast<unsigned char*>(dst) + i * es;
    const int small = static_cast<int>(rng() % 9) - 4;
    switch (type) {
      case strataInt8: case strataUint8: { const int8_t v = static_cast<int8_t>(small); std::memcpy(p, &v, 1); break; }
      case strataInt32: case strataUint32: { const int32_t v = small * 77777; std::memcpy(p, &v, 4); break; }
      case strataInt64: case strataUint64: { const int64_t v = static_cast<int64_t>(small) << 35; std::memcpy(p, &v, 8); break; }
      case strataFloat16: { const Half h = floatToHalf(real(rng)); std::memcpy(p, &h, 2); break; }
      case strataBfloat16: { const BFloat16 b = floatToBf16(real(rng)); std::memcpy(p, &b, 2); break; }
      case strataFloat32: { const float f = real(rng); std::memcpy(p, &f, 4); break; }
      case strataFloat64: { const double d = real(rng); std::memcpy(p, &d, 8); break; }
    }
  }
}

TEST(KernelLogic, EveryThreadOfTheGridMatchesTheHostTwin) {
  const size_t counts[] = {0, 1, 7, 31, 1031};
  const int inputs[] = {1, 2, 3, 5, 16};
  const size_t grids[][2] = {{1, 32}, {3, 32}, {2, 7}};
  unsigned seed = 1;
  size_t cases = 0;
  for (int t = 0; t < kNumDataTypes; ++t) {
    const DataType type = static_cast<DataType>(t);
    const size_t es = dataTypeSize(type);
    for (int o = 0; o < kNumRedOps; ++o) {
      const RedOp op = static_cast<RedOp>(o);
      for (int n : inputs) {
        for (size_t count : counts) {
          for (int mode = 0; mode < 3; ++mode) {
            // 0: all 16-byte aligned; 1: all one element off (scalar head, then vectors);
            // 2: the last input one element further off (no common alignment: scalars only).
            const size_t mis = mode == 0 ? 0 : es;
            std::vector<Aligned> in;
            std::vector<const void*> ptrs;
            for (int k = 0; k < n; ++k) {
              in.emplace_back(count * es, mis + (mode == 2 && k == n - 1 ? es : 0));
              fillRandom(type, in.back().data, count, seed++);
              ptrs.push_back(in.back().data);
            }
            std::vector<unsigned char> want(count * es + 1);
            ASSERT_TRUE(hostComputeBackend().reduce(want.data(), ptrs.data(), n, count, type, op).ok());
            const int divisor = op == strataAvg ? 3 : 0;
            if (divisor) ASSERT_TRUE(hostComputeBackend().divide(want.data(), count, type, divisor).ok());
            for (const auto& g : grids) {
              Aligned out(count * es + es, mis), copy(count * es + es, mis);
              ReduceArgs a;
              for (int k = 0; k < n; ++k) a.srcs[k] = ptrs[static_cast<size_t>(k)];
              a.dst0 = out.data;
              a.dst1 = copy.data;
              a.n = n;
              a.divisor = divisor;
              a.count = count;
              runGridTyped(type, a, op, g[0], g[1]);
              ASSERT_EQ(std::memcmp(out.data, want.data(), count * es), 0)
                  << dataTypeName(type) << " " << redOpName(op) << " n=" << n << " count=" << count << " mode=" << mode
                  << " grid " << g[0] << "x" << g[1];
              ASSERT_EQ(std::memcmp(copy.data, want.data(), count * es), 0) << "reduce-copy's second output";
              ASSERT_EQ(out.data[count * es], 0xAB) << "wrote past the output";
              ASSERT_EQ(*(out.data - 1), 0xAB) << "wrote before the output";
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, size_t{10 * 5 * 5 * 5 * 3 * 3});
}

TEST(KernelLogic, VectorsAreUsedOnlyWithACommonAlignment) {
  Aligned a0(256, 0), a1(256, 4), b0(256, 0), b1(256, 4), c(256, 8);
  ReduceArgs a;
  a.n = 2;
  a.count = 60;
  a.srcs[0] = a0.data;
  a.srcs[1] = b0.data;
  a.dst0 = c.data;  // 8 bytes off while the inputs are aligned: scalars only
  EXPECT_EQ(splitForVectors<float>(a).vecs, 0u);
  a.dst0 = a0.data;
  VectorSplit s = splitForVectors<float>(a);
  EXPECT_EQ(s.head, 0u);
  EXPECT_EQ(s.vecs, 15u);
  a.srcs[0] = a1.data;
  a.srcs[1] = b1.data;
  a.dst0 = a1.data;  // all 4 bytes off: 3 scalars, then vectors, then a tail
  s = splitForVectors<float>(a);
  EXPECT_EQ(s.head, 3u);
  EXPECT_EQ(s.vecs, 14u);  // (60 - 3) / 4
}

}  // namespace
}  // namespace strata::cuda
