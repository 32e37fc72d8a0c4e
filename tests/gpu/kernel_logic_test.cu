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
    const size_t es = dataTypeSize(type), mis = mode == 0 ? 0 : es;
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
