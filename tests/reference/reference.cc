#include "tests/reference/reference.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "kernels/common/datatype.h"

namespace strata::test {

size_t typeSize(strataDataType_t t) { return dataTypeSize(t); }
const char* typeName(strataDataType_t t) { return dataTypeName(t); }
const char* opName(strataRedOp_t op) { return redOpName(op); }
bool isFloat(strataDataType_t t) { return isFloatingType(t); }

namespace {

bool isUnsignedType(strataDataType_t t) { return t == strataUint8 || t == strataUint32 || t == strataUint64; }

// Integers wrap modulo 2^bits like two's complement storage.
double wrapTo(strataDataType_t t, double v) {
  if (isFloat(t)) return v;
  const int bits = static_cast<int>(typeSize(t)) * 8;
  if (bits == 64) return v;
  const double mod = std::ldexp(1.0, bits);
  double w = std::fmod(v, mod);
  if (w < 0) w += mod;
  if (!isUnsignedType(t) && w >= mod / 2) w -= mod;
  return w;
}

uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

}  // namespace

double inputValue(strataDataType_t t, strataRedOp_t op, int rank, size_t i, unsigned seed) {
  const uint32_t h = mix(static_cast<uint32_t>(i) * 2654435761U ^ static_cast<uint32_t>(rank) * 40503U ^ seed);
  switch (op) {
    case strataProd: {
      if (isFloat(t)) {
        static const double kF[4] = {1, -1, 2, 1};
        return kF[h % 4];
      }
      return isUnsignedType(t) ? 1 + h % 3 : static_cast<double>(static_cast<int>(h % 4)) - 1;  // {-1,0,1,2}
    }
    case strataMax:
    case strataMin: return isUnsignedType(t) ? h % 100 : static_cast<double>(static_cast<int>(h % 100)) - 50;
    default: return isUnsignedType(t) ? h % 16 : static_cast<double>(static_cast<int>(h % 16)) - 8;
  }
}

void writeValue(strataDataType_t t, void* buf, size_t i, double v) {
  switch (t) {
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

double readValue(strataDataType_t t, const void* buf, size_t i) {
  switch (t) {
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

void fillInput(strataDataType_t t, strataRedOp_t op, int rank, void* buf, size_t first, size_t n, unsigned seed) {
  for (size_t k = 0; k < n; ++k) writeValue(t, buf, k, inputValue(t, op, rank, first + k, seed));
}

double reduceRange(strataDataType_t t, strataRedOp_t op, int firstRank, int lastRank, size_t i, unsigned seed) {
  double acc = inputValue(t, op, firstRank, i, seed);
  for (int r = firstRank + 1; r <= lastRank; ++r) {
    const double v = inputValue(t, op, r, i, seed);
    switch (op) {
      case strataProd: acc = wrapTo(t, acc * v); break;
      case strataMax: acc = std::max(acc, v); break;
      case strataMin: acc = std::min(acc, v); break;
      default: acc = wrapTo(t, acc + v); break;
    }
  }
  return acc;
}

double reduceReference(strataDataType_t t, strataRedOp_t op, int p, size_t i, unsigned seed, int firstRank) {
  const double acc = reduceRange(t, op, firstRank, firstRank + p - 1, i, seed);
  if (op != strataAvg) return acc;
  if (!isFloat(t)) return std::trunc(acc / p);  // C integer division truncates toward zero
  if (t == strataFloat64) return acc / p;
  return static_cast<double>(static_cast<float>(acc) / static_cast<float>(p));  // fp32 accumulation
}

GuardedBuffer::GuardedBuffer(size_t bytes, unsigned char fill) : storage_(bytes + 2 * kGuard, fill), bytes_(bytes) {
  std::memset(storage_.data(), 0xA5, kGuard);
  std::memset(storage_.data() + kGuard + bytes, 0x5A, kGuard);
}

bool GuardedBuffer::guardsIntact() const {
  for (size_t i = 0; i < kGuard; ++i) {
    if (storage_[i] != 0xA5 || storage_[kGuard + bytes_ + i] != 0x5A) return false;
  }
  return true;
}

void GuardedBuffer::fill(unsigned char byte) { std::memset(storage_.data() + kGuard, byte, bytes_); }

std::string compareElements(strataDataType_t t, const void* got, const void* want, size_t n) {
  const size_t es = typeSize(t);
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(static_cast<const char*>(got) + i * es, static_cast<const char*>(want) + i * es, es) != 0) {
      if (wrong++ == 0) first = i;
    }
  }
  if (wrong == 0) return "";
  std::ostringstream os;
  os << wrong << " of " << n << " elements wrong; first at " << first << ": got " << readValue(t, got, first)
     << ", expected " << readValue(t, want, first);
  return os.str();
}

}  // namespace strata::test
