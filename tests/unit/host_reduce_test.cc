// The host compute backend against scalar references written here: every type x op, 1 to 16
// inputs, awkward counts, in place and out of place.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/common/datatype.h"
#include "kernels/compute_backend.h"

namespace strata {
namespace {

// Reference arithmetic, independent of kernels/host: integers modulo 2^bits, floats in double
// and rounded to the storage type once at the end (the backend rounds 16-bit types once per
// N-input reduce); the inputs keep every intermediate exact, so the two must agree bit for bit.
struct Ref {
  DataType type;
  RedOp op;

  // Reads element i of a buffer as double (integers exactly, within 2^53).
  double get(const void* buf, size_t i) const {
    switch (type) {
      case strataInt8: return static_cast<const int8_t*>(buf)[i];
      case strataUint8: return static_cast<const uint8_t*>(buf)[i];
      case strataInt32: return static_cast<const int32_t*>(buf)[i];
      case strataUint32: return static_cast<const uint32_t*>(buf)[i];
      case strataInt64: return static_cast<double>(static_cast<const int64_t*>(buf)[i]);
      case strataUint64: return static_cast<double>(static_cast<const uint64_t*>(buf)[i]);
      case strataFloat16: return halfToFloat(static_cast<const Half*>(buf)[i]);
      case strataFloat32: return static_cast<const float*>(buf)[i];
      case strataFloat64: return static_cast<const double*>(buf)[i];
      case strataBfloat16: return bf16ToFloat(static_cast<const BFloat16*>(buf)[i]);
      default: return 0;
    }
  }
  void set(void* buf, size_t i, double v) const {
    switch (type) {
      case strataInt8: static_cast<int8_t*>(buf)[i] = static_cast<int8_t>(static_cast<int64_t>(v)); break;
      case strataUint8: static_cast<uint8_t*>(buf)[i] = static_cast<uint8_t>(static_cast<int64_t>(v)); break;
      case strataInt32: static_cast<int32_t*>(buf)[i] = static_cast<int32_t>(static_cast<int64_t>(v)); break;
      case strataUint32: static_cast<uint32_t*>(buf)[i] = static_cast<uint32_t>(static_cast<int64_t>(v)); break;
      case strataInt64: static_cast<int64_t*>(buf)[i] = static_cast<int64_t>(v); break;
      case strataUint64: static_cast<uint64_t*>(buf)[i] = static_cast<uint64_t>(static_cast<int64_t>(v)); break;
      case strataFloat16: static_cast<Half*>(buf)[i] = floatToHalf(static_cast<float>(v)); break;
      case strataFloat32: static_cast<float*>(buf)[i] = static_cast<float>(v); break;
      case strataFloat64: static_cast<double*>(buf)[i] = v; break;
      case strataBfloat16: static_cast<BFloat16*>(buf)[i] = floatToBf16(static_cast<float>(v)); break;
      default: break;
    }
  }
  // Integer results reduced modulo 2^bits (wrap), as two's complement storage does.
  double wrap(double v) const {
    if (isFloatingType(type)) return v;
    const int bits = static_cast<int>(dataTypeSize(type)) * 8;
    if (bits == 64) return v;  // inputs keep 64-bit results small
    const double mod = std::ldexp(1.0, bits);
    double w = std::fmod(v, mod);
    if (w < 0) w += mod;
    const bool isSigned = type == strataInt8 || type == strataInt32;
    if (isSigned && w >= mod / 2) w -= mod;
    return w;
  }
  double combine(double a, double b) const {
    switch (op) {
      case strataSum:
      case strataAvg: return a + b;
      case strataProd: return a * b;
      case strataMax: return std::max(a, b);
      case strataMin: return std::min(a, b);
      default: return 0;
    }
  }
};

// Small integer-valued inputs keep every intermediate exact in every type.
double inputValue(DataType type, RedOp op, int input, size_t i) {
  const bool isUnsigned = type == strataUint8 || type == strataUint32 || type == strataUint64;
  const int v = static_cast<int>((i * 7 + static_cast<size_t>(input) * 13 + 3) % 5);
  if (op == strataProd) {
    // Products stay exact in fp32 accumulation (powers of two) and wrap exactly in integers.
    static const double kFloat[5] = {-1, 1, 2, 1, 2};
    static const double kSigned[5] = {-1, 1, 2, 3, 1};
    return isFloatingType(type) ? kFloat[v] : isUnsigned ? 1 + v % 3 : kSigned[v];
  }
  return isUnsigned ? v : v - 2;
}

struct Param {
  DataType type;
  RedOp op;
};

class HostReduceTest : public ::testing::TestWithParam<Param> {};

TEST_P(HostReduceTest, MatchesScalarReference) {
  const Param param = GetParam();
  const Ref ref{param.type, param.op};
  const size_t elem = dataTypeSize(param.type);
  ComputeBackend& be = hostComputeBackend();
  for (int n : {1, 2, 3, 5, 8, 16}) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{513}, size_t{1031}}) {
      for (bool inPlace : {false, true}) {
        SCOPED_TRACE(::testing::Message() << dataTypeName(param.type) << " " << redOpName(param.op) << " inputs=" << n
                                          << " count=" << count << " inPlace=" << inPlace);
        std::vector<std::vector<unsigned char>> in(static_cast<size_t>(n), std::vector<unsigned char>(count * elem + 8));
        for (int k = 0; k < n; ++k) {
          for (size_t i = 0; i < count; ++i) ref.set(in[static_cast<size_t>(k)].data(), i, inputValue(param.type, param.op, k, i));
        }
        std::vector<unsigned char> out(count * elem + 8, 0xAB);
        std::vector<const void*> srcs;
        for (auto& b : in) srcs.push_back(b.data());
        void* dst = inPlace ? in[0].data() : out.data();
        // expected before the call (in place overwrites input 0)
        std::vector<double> want(count);
        for (size_t i = 0; i < count; ++i) {
          double acc = ref.get(in[0].data(), i);
          for (int k = 1; k < n; ++k) acc = ref.wrap(ref.combine(acc, ref.get(in[static_cast<size_t>(k)].data(), i)));
          want[i] = acc;
        }
        ASSERT_TRUE(be.reduce(dst, srcs.data(), n, count, param.type, param.op).ok());
        std::vector<unsigned char> expect(count * elem);
        for (size_t i = 0; i < count; ++i) ref.set(expect.data(), i, want[i]);
        if (count != 0) ASSERT_EQ(std::memcmp(dst, expect.data(), count * elem), 0);  // no null to memcmp
        if (!inPlace) {
          for (size_t b = count * elem; b < out.size(); ++b) ASSERT_EQ(out[b], 0xAB) << "wrote past the end";
        }
      }
    }
  }
}

class HostDivideTest : public ::testing::TestWithParam<int> {};

TEST_P(HostDivideTest, TruncatesTowardZeroForIntegers) {
  const Param param{static_cast<DataType>(GetParam()), strataAvg};
  const Ref ref{param.type, param.op};
  const size_t elem = dataTypeSize(param.type);
  const bool isUnsigned = param.type == strataUint8 || param.type == strataUint32 || param.type == strataUint64;
  std::vector<unsigned char> buf(17 * elem);
  std::vector<double> vals;
  for (int i = 0; i < 17; ++i) vals.push_back(isUnsigned ? i * 3 : i * 3 - 24);
  for (size_t i = 0; i < vals.size(); ++i) ref.set(buf.data(), i, vals[i]);
  for (int divisor : {1, 3, 8}) {
    std::vector<unsigned char> work = buf;
    ASSERT_TRUE(hostComputeBackend().divide(work.data(), vals.size(), param.type, divisor).ok());
    for (size_t i = 0; i < vals.size(); ++i) {
      double want = vals[i] / divisor;
      if (!isFloatingType(param.type)) want = std::trunc(want);
      std::vector<unsigned char> expect(elem);
      ref.set(expect.data(), 0, want);
      ASSERT_EQ(std::memcmp(work.data() + i * elem, expect.data(), elem), 0)
          << dataTypeName(param.type) << " " << vals[i] << " / " << divisor;
    }
  }
}

std::vector<Param> allParams() {
  std::vector<Param> out;
  for (int t = 0; t < kNumDataTypes; ++t) {
    for (int op = 0; op < kNumRedOps; ++op) out.push_back({static_cast<DataType>(t), static_cast<RedOp>(op)});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, HostDivideTest, ::testing::Range(0, kNumDataTypes),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(dataTypeName(static_cast<DataType>(info.param)));
                         });

INSTANTIATE_TEST_SUITE_P(AllTypesAndOps, HostReduceTest, ::testing::ValuesIn(allParams()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return std::string(dataTypeName(info.param.type)) + "_" + redOpName(info.param.op);
                         });

TEST(HostReduce, SixteenBitTypesAccumulateInFp32) {
  // 2048 + 1 + 1 in fp16: pairwise rounding would lose both ones (2049 is not representable);
  // one fp32 accumulation over the three inputs gives 2050 exactly.
  const Half a[1] = {floatToHalf(2048.0f)}, b[1] = {floatToHalf(1.0f)}, c[1] = {floatToHalf(1.0f)};
  const void* srcs[3] = {a, b, c};
  Half out[1];
  ASSERT_TRUE(hostComputeBackend().reduce(out, srcs, 3, 1, strataFloat16, strataSum).ok());
  EXPECT_EQ(halfToFloat(out[0]), 2050.0f);
}

// strataAvg over more ranks than an 8-bit type holds: the divisor must not be cast to the type.
TEST(HostReduce, AverageOfBytesOverManyRanks) {
  for (int divisor : {128, 200, 256, 300, 1000}) {
    std::vector<int8_t> s(256);
    std::vector<uint8_t> u(256);
    for (int v = 0; v < 256; ++v) s[static_cast<size_t>(v)] = static_cast<int8_t>(v - 128), u[static_cast<size_t>(v)] = static_cast<uint8_t>(v);
    ASSERT_TRUE(hostComputeBackend().divide(s.data(), s.size(), strataInt8, divisor).ok());
    ASSERT_TRUE(hostComputeBackend().divide(u.data(), u.size(), strataUint8, divisor).ok());
    for (int v = 0; v < 256; ++v) {
      ASSERT_EQ(s[static_cast<size_t>(v)], (v - 128) / divisor) << "int8 " << v - 128 << " / " << divisor;
      ASSERT_EQ(u[static_cast<size_t>(v)], v / divisor) << "uint8 " << v << " / " << divisor;
    }
  }
}

TEST(HostReduce, RejectsBadArguments) {
  float x[1] = {1};
  const void* srcs[1] = {x};
  EXPECT_EQ(hostComputeBackend().reduce(x, srcs, 0, 1, strataFloat32, strataSum).code(), strataInternalError);
  EXPECT_EQ(hostComputeBackend().reduce(x, srcs, 17, 1, strataFloat32, strataSum).code(), strataInternalError);
  EXPECT_EQ(hostComputeBackend().reduce(x, srcs, 1, 1, static_cast<DataType>(12), strataSum).code(), strataInternalError);
  EXPECT_EQ(hostComputeBackend().divide(x, 1, strataFloat32, 0).code(), strataInternalError);
}

}  // namespace
}  // namespace strata
