// What the two kernel tests (device_kernels_test.cu on a GPU, kernel_logic_test.cu on the host)
// share: the inputs and the matrix of cases.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <random>
#include <vector>

#include "kernels/common/datatype.h"

namespace strata::test {

// Random bytes that are valid values of `type` (small integers, finite floats of mixed sign), so
// sums and products of up to 16 inputs stay finite and the host twin and the kernel must agree
// bit for bit.
inline std::vector<uint8_t> randomValues(DataType type, size_t count, unsigned seed) {
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

// Calls f(type, op, inputs, count, mode) for every type, op, input count, length and alignment
// mode. Modes: 0, every buffer 16-byte aligned (aligned vectors only); 1, every buffer one element
// off (a scalar head, then aligned vectors); 2, the last input one element further off (that input
// is read through shifted granules); 3, every input at its own offset and the outputs at a third
// (most inputs shifted). Stops at the first case for which f returns false.
// STRATA_TEST_SAMPLE=k runs every k-th case only, for compute-sanitizer, under which each launch
// is many times slower (perf/device_suite.sh): a k prime to the matrix's dimensions still reaches
// every type, op, input count, length and mode.
constexpr int kAlignmentModes = 4;
inline size_t caseSample() {
  const char* e = std::getenv("STRATA_TEST_SAMPLE");
  const long k = e != nullptr ? std::strtol(e, nullptr, 10) : 1;
  return k > 1 ? static_cast<size_t>(k) : 1;
}
template <typename F>
void forEachReduceCase(std::initializer_list<size_t> counts, std::initializer_list<int> inputs, F&& f) {
  const size_t sample = caseSample();
  size_t index = 0;
  for (int t = 0; t < kNumDataTypes; ++t) {
    for (int o = 0; o < kNumRedOps; ++o) {
      for (int n : inputs) {
        for (size_t count : counts) {
          for (int mode = 0; mode < kAlignmentModes; ++mode) {
            if (index++ % sample != 0) continue;
            if (!f(static_cast<DataType>(t), static_cast<RedOp>(o), n, count, mode)) return;
          }
        }
      }
    }
  }
}

// The byte offset of input k (of n) from a 16-byte boundary in `mode`, elements of `es` bytes.
inline size_t inputMisalignment(int mode, int k, int n, size_t es) {
  if (mode == 3) return (static_cast<size_t>(5 * k + 1) * es) % 16;
  return mode == 0 ? 0 : (1 + (mode == 2 && k == n - 1 ? 1 : 0)) * es;
}
// The outputs' byte offset from a 16-byte boundary in `mode`.
inline size_t outputMisalignment(int mode, size_t es) {
  if (mode == 3) return (3 * es) % 16;
  return mode == 0 ? 0 : es;
}

}  // namespace strata::test
