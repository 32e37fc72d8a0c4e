// The reduce kernel's logic on the host, no GPU needed (it runs in CI): every thread of a grid
// runs the same reduceAsThread the kernel runs (kernels/cuda/device_ops.cuh), over buffers with
// every alignment mode, and the result must equal the host twin's bit for bit. This checks the
// split into scalar head, 16-byte vectors and scalar tail, the shifted loads of inputs at another
// alignment, the tiles and the grid stride, the fp32 accumulation of the 16-bit types, the 8-bit
// SIMD words, reduce-copy and the fused average. On a GPU (or the simulator),
// device_kernels_test.cu runs the kernels themselves.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/compute_backend.h"
#include "kernels/cuda/device_ops.cuh"
#include "tests/gpu/kernel_cases.h"

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

TEST(KernelLogic, EveryThreadOfTheGridMatchesTheHostTwin) {
  const size_t grids[][2] = {{1, 32}, {3, 32}, {2, 7}};
  unsigned seed = 1;
  size_t cases = 0;
  test::forEachReduceCase({0, 1, 7, 31, 1031}, {1, 2, 3, 5, 16}, [&](DataType type, RedOp op, int n, size_t count,
                                                                     int mode) -> bool {
    const size_t es = dataTypeSize(type), mis = test::outputMisalignment(mode, es);
    std::vector<Aligned> in;
    std::vector<const void*> ptrs;
    for (int k = 0; k < n; ++k) {
      in.emplace_back(count * es, test::inputMisalignment(mode, k, n, es));
      const std::vector<uint8_t> values = test::randomValues(type, count, seed++);
      if (!values.empty()) std::memcpy(in.back().data, values.data(), values.size());
      ptrs.push_back(in.back().data);
    }
    std::vector<unsigned char> want(count * es + 1);
    EXPECT_TRUE(hostComputeBackend().reduce(want.data(), ptrs.data(), n, count, type, op).ok());
    const int divisor = op == strataAvg ? 3 : 0;
    if (divisor) EXPECT_TRUE(hostComputeBackend().divide(want.data(), count, type, divisor).ok());
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
      const bool ok = std::memcmp(out.data, want.data(), count * es) == 0 &&
                      std::memcmp(copy.data, want.data(), count * es) == 0 && out.data[count * es] == 0xAB &&
                      *(out.data - 1) == 0xAB;
      EXPECT_TRUE(ok) << dataTypeName(type) << " " << redOpName(op) << " n=" << n << " count=" << count
                      << " mode=" << mode << " grid " << g[0] << "x" << g[1]
                      << ": wrong values (either output), or bytes written outside the output";
      if (!ok) return false;
      ++cases;
    }
    return true;
  });
  EXPECT_EQ(cases, size_t{10 * 5 * 5 * 5 * test::kAlignmentModes * 3});
}

TEST(KernelLogic, ShiftedGranulesEqualAnUnalignedLoad) {
  unsigned char bytes[32];
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<unsigned char>(17 * i + 3);
  uint4 lo, hi;
  std::memcpy(&lo, bytes, 16);
  std::memcpy(&hi, bytes + 16, 16);
  for (unsigned m = 1; m < 16; ++m) {
    const uint4 got = shiftBytes(lo, hi, m);
    EXPECT_EQ(std::memcmp(&got, bytes + m, 16), 0) << "shift by " << m << " bytes";
  }
}

TEST(KernelLogic, SimdByteWordsMatchPerByteArithmetic) {
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {
    const uint32_t a = rng(), b = rng();
    uint32_t add = 0, maxs = 0, mins = 0, maxu = 0, minu = 0;
    for (int j = 0; j < 4; ++j) {
      const uint8_t x = static_cast<uint8_t>(a >> (8 * j)), y = static_cast<uint8_t>(b >> (8 * j));
      const int8_t sx = static_cast<int8_t>(x), sy = static_cast<int8_t>(y);
      add |= static_cast<uint32_t>(static_cast<uint8_t>(x + y)) << (8 * j);
      maxs |= static_cast<uint32_t>(static_cast<uint8_t>(sx < sy ? sy : sx)) << (8 * j);
      mins |= static_cast<uint32_t>(static_cast<uint8_t>(sy < sx ? sy : sx)) << (8 * j);
      maxu |= static_cast<uint32_t>(x < y ? y : x) << (8 * j);
      minu |= static_cast<uint32_t>(y < x ? y : x) << (8 * j);
    }
    ASSERT_EQ(simdAdd4(a, b), add);
    ASSERT_EQ(simdMaxS4(a, b), maxs);
    ASSERT_EQ(simdMinS4(a, b), mins);
    ASSERT_EQ(simdMaxU4(a, b), maxu);
    ASSERT_EQ(simdMinU4(a, b), minu);
  }
}

// For every element size, output offset, input offset and length: every 16-byte granule a vector
// reads lies inside its input, every vector's store lies inside the output on a 16-byte boundary,
// and the scalars left at the ends are fewer than two vectors' worth plus the alignment head.
TEST(KernelLogic, VectorsCoverEveryAlignmentAndNeverReadOutsideTheInputs) {
  size_t vectorised = 0;
  for (size_t es : {1, 2, 4, 8}) {
    for (size_t d = 0; d < 16; d += es) {
      for (size_t so = 0; so < 16; so += es) {
        for (size_t count = 0; count <= 200 / es; ++count) {
          const uintptr_t dst = 4096 + d, src = 8192 + so, in0 = 12288;  // in0: aligned second input
          ReduceArgs a;
          a.n = 2;
          a.count = count;
          a.srcs[0] = reinterpret_cast<const void*>(src);
          a.srcs[1] = reinterpret_cast<const void*>(in0);
          a.dst0 = reinterpret_cast<void*>(dst);
          VectorSplit s;
          switch (es) {
            case 1: s = splitForVectors<uint8_t>(a); break;
            case 2: s = splitForVectors<__half>(a); break;
            case 4: s = splitForVectors<float>(a); break;
            default: s = splitForVectors<double>(a); break;
          }
          const size_t bytes = count * es, head = s.head * es, end = head + s.vecs * 16;
          ASSERT_LE(end, bytes);
          if (s.vecs == 0) continue;
          ++vectorised;
          ASSERT_EQ((dst + head) % 16, 0u);
          for (uintptr_t base : {src, in0}) {
            const size_t m = (base + head) % 16;
            const size_t lastGranuleEnd = end - 16 - m + (m == 0 ? 16 : 32);
            ASSERT_LE(m, head) << "es " << es << " d " << d << " so " << so << " count " << count;
            ASSERT_LE(lastGranuleEnd, bytes) << "es " << es << " d " << d << " so " << so << " count " << count;
          }
          ASSERT_LT(head, size_t{2 * 16}) << "es " << es << " d " << d << " so " << so << " count " << count;
          ASSERT_LT(bytes - end, size_t{2 * 16}) << "es " << es << " d " << d << " so " << so << " count " << count;
        }
      }
    }
  }
  EXPECT_GT(vectorised, 10000u);
}

TEST(KernelLogic, SecondOutputAtAnotherAlignmentGetsNoVectors) {
  Aligned out(256, 0), copy(256, 4), in(256, 0);
  ReduceArgs a;
  a.n = 1;
  a.count = 60;
  a.srcs[0] = in.data;
  a.dst0 = out.data;
  a.dst1 = copy.data;  // launchReduce writes it with a copy kernel instead
  EXPECT_EQ(splitForVectors<float>(a).vecs, 0u);
  a.dst1 = nullptr;
  const VectorSplit s = splitForVectors<float>(a);
  EXPECT_EQ(s.head, 0u);
  EXPECT_EQ(s.vecs, 15u);
}

}  // namespace
}  // namespace strata::cuda
