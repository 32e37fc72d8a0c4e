// 16-bit float conversions against an independent oracle (the nearest representable value found
// by search over all 65536 encodings), and the datatype/op tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/common/datatype.h"

namespace strata {
namespace {

// Decodes binary16 by its definition, in double.
double decodeHalf(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double v;
  if (exponent == 0x1f) v = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (exponent == 0) v = std::ldexp(mantissa, -24);
  else v = std::ldexp(1024 + mantissa, exponent - 25);
  return sign ? -v : v;
}

// Round to nearest, ties to even mantissa, among all finite halves; beyond 65520 -> infinity.
uint16_t oracleHalf(float f) {
  static std::vector<std::pair<double, uint16_t>> table = [] {
    std::vector<std::pair<double, uint16_t>> t;
    for (uint32_t h = 0; h < 0x7c00; ++h) t.push_back({decodeHalf(static_cast<uint16_t>(h)), static_cast<uint16_t>(h)});
    return t;
  }();
  const double x = std::fabs(static_cast<double>(f));
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (x >= 65520.0) return sign | 0x7c00;
  auto it = std::lower_bound(table.begin(), table.end(), std::make_pair(x, uint16_t{0}));
  if (it == table.end()) return sign | 0x7bff;
  if (it->first == x || it == table.begin()) return sign | it->second;
  auto below = std::prev(it);
  const double dHi = it->first - x, dLo = x - below->first;
  if (dLo < dHi) return sign | below->second;
  if (dHi < dLo) return sign | it->second;
  return sign | ((below->second & 1) == 0 ? below->second : it->second);
}

TEST(Half, DecodeMatchesDefinitionForAllEncodings) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const double want = decodeHalf(static_cast<uint16_t>(h));
    const float got = halfToFloat(Half{static_cast<uint16_t>(h)});
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "half 0x" << std::hex << h;
    } else {
      ASSERT_EQ(static_cast<double>(got), want) << "half 0x" << std::hex << h;
    }
  }
}

TEST(Half, EncodeRoundTripsEveryHalf) {
  for (uint32_t h = 0; h < 65536; ++h) {
    if (((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff)) continue;  // nan payloads
    ASSERT_EQ(floatToHalf(halfToFloat(Half{static_cast<uint16_t>(h)})).bits, h) << "half 0x" << std::hex << h;
  }
}

TEST(Half, EncodeRoundsToNearestEvenLikeTheOracle) {
  std::mt19937 rng(12345);
  std::vector<float> values = {0.0f, -0.0f, 1.0f, 65504.0f, 65519.99f, 65520.0f, 1e-8f, 2.9802322e-8f, 5.9604645e-8f,
                               8.940697e-8f, 6.1035156e-5f, 6.1e-5f, 1.0009766f, 1.0004883f, 1.0014648f, 3e38f};
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-30, 17);
  for (int i = 0; i < 200000; ++i) values.push_back(std::ldexp(unit(rng), exponent(rng)));
  for (float f : values) {
    ASSERT_EQ(floatToHalf(f).bits, oracleHalf(f)) << "float " << f;
  }
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()).bits, 0x7c00);
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(floatToBf16(1.0f).bits, 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(floatToBf16(1.00390625f).bits, 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: to even (1 + 2^-6).
  EXPECT_EQ(floatToBf16(1.01171875f).bits, 0x3f82);
  EXPECT_EQ(floatToBf16(bitsFloat(0x3f808001u)).bits, 0x3f81);  // just above the tie
  for (uint32_t b = 0; b < 65536; ++b) {
    if (((b >> 7) & 0xff) == 0xff && (b & 0x7f)) continue;
    ASSERT_EQ(floatToBf16(bf16ToFloat(BFloat16{static_cast<uint16_t>(b)})).bits, b);
  }
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(DataType, SizesNamesAndParsing) {
  const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  for (int t = 0; t < kNumDataTypes; ++t) {
    const DataType type = static_cast<DataType>(t);
    EXPECT_EQ(dataTypeSize(type), sizes[t]) << dataTypeName(type);
    DataType parsed;
    ASSERT_TRUE(parseDataType(dataTypeName(type), &parsed));
    EXPECT_EQ(parsed, type);
  }
  DataType t;
  EXPECT_TRUE(parseDataType("bf16", &t));
  EXPECT_EQ(t, strataBfloat16);
  EXPECT_FALSE(parseDataType("complex", &t));
  EXPECT_FALSE(isValidDataType(10));
  EXPECT_FALSE(isValidDataType(-1));
  RedOp op;
  EXPECT_TRUE(parseRedOp("avg", &op));
  EXPECT_EQ(op, strataAvg);
  EXPECT_FALSE(parseRedOp("xor", &op));
  EXPECT_FALSE(isValidRedOp(5));
}

}  // namespace
}  // namespace strata
