#include "tests/reference/reference.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <type_traits>

#include "kernels/common/datatype.h"

namespace strata::test {

size_t typeSize(strataDataType_t t) { return dataTypeSize(t); }
const char* typeName(strataDataType_t t) { return dataTypeName(t); }
const char* opName(strataRedOp_t op) { return redOpName(op); }
bool isFloat(strataDataType_t t) { return isFloatingType(t); }

namespace {

bool isUnsignedType(strataDataType_t t) { return t == strataUint8 || t == strataUint32 || t == strataUint64; }

// What the oracle needs of a type, looked up once per buffer filled or element reduced rather than
// once per rank per element (the MPI matrix's 1 MiB cases on 8 ranks evaluate tens of millions of
// elements per call).
struct Kind {
  bool floating;
  bool isUnsigned;
  int bits;
};
Kind kindOf(strataDataType_t t) { return {isFloat(t), isUnsignedType(t), static_cast<int>(typeSize(t)) * 8}; }

// Integers wrap modulo 2^bits like two's complement storage. The values are whole numbers far
// inside int64's range (wrapped partials times or plus inputs below 100 in magnitude), so the residue is the low
// bits of their two's complement.
double wrapTo(const Kind& k, double v) {
  if (k.floating || k.bits == 64) return v;
  const uint64_t mod = uint64_t{1} << k.bits;
  const uint64_t w = static_cast<uint64_t>(static_cast<int64_t>(v)) & (mod - 1);
  if (!k.isUnsigned && w >= mod / 2) return static_cast<double>(static_cast<int64_t>(w) - static_cast<int64_t>(mod));
  return static_cast<double>(w);
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

namespace {

double inputOf(const Kind& k, strataRedOp_t op, int rank, size_t i, unsigned seed) {
  const uint32_t h = mix(static_cast<uint32_t>(i) * 2654435761U ^ static_cast<uint32_t>(rank) * 40503U ^ seed);
  switch (op) {
    case strataProd: {
      if (k.floating) {
        static const double kF[4] = {1, -1, 2, 1};
        return kF[h % 4];
      }
      return k.isUnsigned ? 1 + h % 3 : static_cast<double>(static_cast<int>(h % 4)) - 1;  // {-1,0,1,2}
    }
    case strataMax:
    case strataMin: return k.isUnsigned ? h % 100 : static_cast<double>(static_cast<int>(h % 100)) - 50;
    default: return k.isUnsigned ? h % 16 : static_cast<double>(static_cast<int>(h % 16)) - 8;
  }
}

}  // namespace

double inputValue(strataDataType_t t, strataRedOp_t op, int rank, size_t i, unsigned seed) {
  return inputOf(kindOf(t), op, rank, i, seed);
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

namespace {

// Element type T's value for v, as writeValue stores it.
template <typename T>
T storedAs(double v) {
  if constexpr (std::is_same_v<T, Half>) {
    return floatToHalf(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return floatToBf16(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, int64_t>) {
    return static_cast<T>(v);
  } else {
    return static_cast<T>(static_cast<int64_t>(v));
  }
}

template <typename T>
void fillTyped(const Kind& k, strataRedOp_t op, int rank, T* out, size_t first, size_t n, unsigned seed) {
  for (size_t j = 0; j < n; ++j) out[j] = storedAs<T>(inputOf(k, op, rank, first + j, seed));
}

}  // namespace

void writeValue(strataDataType_t t, void* buf, size_t i, double v) {
  switch (t) {
    case strataInt8: static_cast<int8_t*>(buf)[i] = storedAs<int8_t>(v); break;
    case strataUint8: static_cast<uint8_t*>(buf)[i] = storedAs<uint8_t>(v); break;
    case strataInt32: static_cast<int32_t*>(buf)[i] = storedAs<int32_t>(v); break;
    case strataUint32: static_cast<uint32_t*>(buf)[i] = storedAs<uint32_t>(v); break;
    case strataInt64: static_cast<int64_t*>(buf)[i] = storedAs<int64_t>(v); break;
    case strataUint64: static_cast<uint64_t*>(buf)[i] = storedAs<uint64_t>(v); break;
    case strataFloat16: static_cast<Half*>(buf)[i] = storedAs<Half>(v); break;
    case strataFloat32: static_cast<float*>(buf)[i] = storedAs<float>(v); break;
    case strataFloat64: static_cast<double*>(buf)[i] = storedAs<double>(v); break;
    case strataBfloat16: static_cast<BFloat16*>(buf)[i] = storedAs<BFloat16>(v); break;
    default: break;
  }
}

void fillInput(strataDataType_t t, strataRedOp_t op, int rank, void* buf, size_t first, size_t n, unsigned seed) {
  const Kind k = kindOf(t);
  switch (t) {
    case strataInt8: fillTyped(k, op, rank, static_cast<int8_t*>(buf), first, n, seed); break;
    case strataUint8: fillTyped(k, op, rank, static_cast<uint8_t*>(buf), first, n, seed); break;
    case strataInt32: fillTyped(k, op, rank, static_cast<int32_t*>(buf), first, n, seed); break;
    case strataUint32: fillTyped(k, op, rank, static_cast<uint32_t*>(buf), first, n, seed); break;
    case strataInt64: fillTyped(k, op, rank, static_cast<int64_t*>(buf), first, n, seed); break;
    case strataUint64: fillTyped(k, op, rank, static_cast<uint64_t*>(buf), first, n, seed); break;
    case strataFloat16: fillTyped(k, op, rank, static_cast<Half*>(buf), first, n, seed); break;
    case strataFloat32: fillTyped(k, op, rank, static_cast<float*>(buf), first, n, seed); break;
    case strataFloat64: fillTyped(k, op, rank, static_cast<double*>(buf), first, n, seed); break;
    case strataBfloat16: fillTyped(k, op, rank, static_cast<BFloat16*>(buf), first, n, seed); break;
    default: break;
  }
}

double reduceRange(strataDataType_t t, strataRedOp_t op, int firstRank, int lastRank, size_t i, unsigned seed) {
  const Kind k = kindOf(t);
  double acc = inputOf(k, op, firstRank, i, seed);
  for (int r = firstRank + 1; r <= lastRank; ++r) {
    const double v = inputOf(k, op, r, i, seed);
    switch (op) {
      case strataProd: acc = wrapTo(k, acc * v); break;
      case strataMax: acc = std::max(acc, v); break;
      case strataMin: acc = std::min(acc, v); break;
      default: acc = wrapTo(k, acc + v); break;
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
  if (n == 0 || std::memcmp(got, want, n * es) == 0) return "";
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
