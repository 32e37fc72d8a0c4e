// Datatypes and reduction operators: sizes, names, and the host representation of the 16-bit
// floating types. Names follow nccl-tests (`-d float`, `-o sum`).
#pragma once

#include <strata/strata.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace strata {

using DataType = strataDataType_t;
using RedOp = strataRedOp_t;

constexpr int kNumDataTypes = 10;
constexpr int kNumRedOps = 5;

inline bool isValidDataType(int t) { return t >= 0 && t < kNumDataTypes; }
inline bool isValidRedOp(int op) { return op >= 0 && op < kNumRedOps; }

size_t dataTypeSize(DataType t);
const char* dataTypeName(DataType t);  // "int8", ..., "half", "float", "double", "bfloat16"
const char* redOpName(RedOp op);       // "sum", "prod", "max", "min", "avg"
bool isFloatingType(DataType t);
// Accepts the names above and common aliases (fp16, bf16, float32, int, ...). Returns false if unknown.
bool parseDataType(const char* name, DataType* out);
bool parseRedOp(const char* name, RedOp* out);

// Storage types of the 16-bit floating formats on the host. Arithmetic happens in fp32.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// IEEE binary16 -> binary32, exact.
inline float halfToFloat(Half h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  const uint32_t exponent = (h.bits >> 10) & 0x1fu;
  const uint32_t mantissa = h.bits & 0x3ffu;
  if (exponent == 0x1f) return bitsFloat(sign | 0x7f800000u | (mantissa << 13));  // inf, nan
  if (exponent == 0) {
    // zero or subnormal: mantissa * 2^-24, exact in fp32
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return bitsFloat(floatBits(magnitude) | sign);
  }
  return bitsFloat(sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13));
}

// binary32 -> binary16, round to nearest even; overflow goes to infinity, nan stays nan.
inline Half floatToHalf(float f) {
  uint32_t x = floatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) {  // inf or nan
    const uint16_t nan = x > 0x7f800000u ? static_cast<uint16_t>(0x200u | ((x >> 13) & 0x3ffu)) : 0;
    return Half{static_cast<uint16_t>(sign | 0x7c00u | nan)};
  }
  if (x >= 0x477ff000u) return Half{static_cast<uint16_t>(sign | 0x7c00u)};  // rounds to >= 65520: inf
  if (x < 0x38800000u) {
    // Result is subnormal or zero. Adding 0.5 puts the half's subnormal unit (2^-24) at the last
    // mantissa bit of the sum, so the FPU's own round-to-nearest-even does the rounding.
    const float sum = bitsFloat(x) + 0.5f;
    return Half{static_cast<uint16_t>(sign | (floatBits(sum) - 0x3f000000u))};
  }
  const uint32_t odd = (x >> 13) & 1u;
  x += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + odd;
  return Half{static_cast<uint16_t>(sign | (x >> 13))};
}

inline float bf16ToFloat(BFloat16 b) { return bitsFloat(static_cast<uint32_t>(b.bits) << 16); }

// binary32 -> bfloat16, round to nearest even; nan stays (quiet) nan.
inline BFloat16 floatToBf16(float f) {
  const uint32_t x = floatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return BFloat16{static_cast<uint16_t>((x >> 16) | 0x40u)};
  const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return BFloat16{static_cast<uint16_t>(rounded >> 16)};
}

}  // namespace strata
