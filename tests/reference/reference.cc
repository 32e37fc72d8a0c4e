#include "tests/reference/reference.h"

#include <algorithm>
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

uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

constexpr size_t kFoldBlock = 1024;  // elements foldRanks takes at once

uint32_t hashOf(int rank, size_t i, unsigned seed) {
  return mix(static_cast<uint32_t>(i) * 2654435761U ^ static_cast<uint32_t>(rank) * 40503U ^ seed);
}

// Every input is a small whole number in every type, so the oracle computes in int64: sums and
// products in its wrapping (unsigned) arithmetic, whose low bits are those of the element type's
// wrapping sums and products (the 64-bit types included), and exact for the floating types (sums
// far below 2^53; products of 1, -1 and 2 up to 62 ranks). inputsOf writes those of elements
// [first, first + n).
void inputsOf(const Kind& k, strataRedOp_t op, int rank, size_t first, size_t n, unsigned seed, int64_t* out) {
  uint32_t h[kFoldBlock];
  for (size_t done = 0; done < n; done += kFoldBlock) {
    const size_t m = std::min(kFoldBlock, n - done);
    for (size_t j = 0; j < m; ++j) h[j] = hashOf(rank, first + done + j, seed);  // vectorised
    int64_t* o = out + done;
    const bool u = k.isUnsigned;
    switch (op) {
      case strataProd:
        if (k.floating) {
          static const int64_t kF[4] = {1, -1, 2, 1};
          for (size_t j = 0; j < m; ++j) o[j] = kF[h[j] % 4];
        } else if (u) {
          for (size_t j = 0; j < m; ++j) o[j] = 1 + h[j] % 3;
        } else {
          for (size_t j = 0; j < m; ++j) o[j] = static_cast<int64_t>(h[j] % 4) - 1;  // {-1,0,1,2}
        }
        break;
      case strataMax:
      case strataMin:
        for (size_t j = 0; j < m; ++j) o[j] = static_cast<int64_t>(h[j] % 100) - (u ? 0 : 50);
        break;
      default:
        for (size_t j = 0; j < m; ++j) o[j] = static_cast<int64_t>(h[j] % 16) - (u ? 0 : 8);
        break;
    }
  }
}

// The element type's value of a whole number: integers wrapped modulo 2^bits like two's complement
// storage (signed or not as the type), floating types as they are.
double valueOf(const Kind& k, int64_t v) {
  if (k.floating) return static_cast<double>(v);
  const uint64_t w = k.bits == 64 ? static_cast<uint64_t>(v) : static_cast<uint64_t>(v) & ((uint64_t{1} << k.bits) - 1);
  if (k.isUnsigned) return static_cast<double>(w);
  if (k.bits == 64) return static_cast<double>(static_cast<int64_t>(w));
  const uint64_t half = uint64_t{1} << (k.bits - 1);
  return w >= half ? static_cast<double>(static_cast<int64_t>(w) - static_cast<int64_t>(half << 1)) : static_cast<double>(w);
}

// Elements [first, first + n) of the reduction over ranks [firstRank, lastRank], before any
// average, as whole numbers into acc[0..n). Ranks outermost, so that the inner loops run over
// elements and the compiler vectorises them. n is at most kFoldBlock.
void foldRanks(const Kind& k, strataRedOp_t op, int firstRank, int lastRank, size_t first, size_t n, unsigned seed,
               int64_t* acc) {
  inputsOf(k, op, firstRank, first, n, seed, acc);
  int64_t v[kFoldBlock];
  for (int r = firstRank + 1; r <= lastRank; ++r) {
    inputsOf(k, op, r, first, n, seed, v);
    switch (op) {
      case strataProd:
        for (size_t j = 0; j < n; ++j) acc[j] = static_cast<int64_t>(static_cast<uint64_t>(acc[j]) * static_cast<uint64_t>(v[j]));
        break;
      case strataMax:
        for (size_t j = 0; j < n; ++j) acc[j] = std::max(acc[j], v[j]);
        break;
      case strataMin:
        for (size_t j = 0; j < n; ++j) acc[j] = std::min(acc[j], v[j]);
        break;
      default:
        for (size_t j = 0; j < n; ++j) acc[j] = static_cast<int64_t>(static_cast<uint64_t>(acc[j]) + static_cast<uint64_t>(v[j]));
        break;
    }
  }
}

// strataAvg's division of a reduction over p ranks, in the accumulation type (truncating toward
// zero for integers, fp32 for the 16- and 32-bit floats); other ops' values as they are.
double finished(strataDataType_t t, const Kind& k, strataRedOp_t op, int p, double acc) {
  if (op != strataAvg) return acc;
  if (!k.floating) return std::trunc(acc / p);  // C integer division truncates toward zero
  if (t == strataFloat64) return acc / p;
  return static_cast<double>(static_cast<float>(acc) / static_cast<float>(p));  // fp32 accumulation
}

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

// Element type T's value of a whole number, as storedAs(valueOf(v)) gives it without the detour
// through double: integers keep its low bits (their wrapping), floats hold it exactly.
template <typename T>
T storedWhole(int64_t v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return storedAs<T>(static_cast<double>(v));
  } else {
    return static_cast<T>(v);
  }
}

// Calls f with buf as a pointer to t's element type (nothing for an invalid type).
template <typename F>
void asElements(strataDataType_t t, void* buf, F&& f) {
  switch (t) {
    case strataInt8: f(static_cast<int8_t*>(buf)); break;
    case strataUint8: f(static_cast<uint8_t*>(buf)); break;
    case strataInt32: f(static_cast<int32_t*>(buf)); break;
    case strataUint32: f(static_cast<uint32_t*>(buf)); break;
    case strataInt64: f(static_cast<int64_t*>(buf)); break;
    case strataUint64: f(static_cast<uint64_t*>(buf)); break;
    case strataFloat16: f(static_cast<Half*>(buf)); break;
    case strataFloat32: f(static_cast<float*>(buf)); break;
    case strataFloat64: f(static_cast<double*>(buf)); break;
    case strataBfloat16: f(static_cast<BFloat16*>(buf)); break;
    default: break;
  }
}

template <typename T>
using Element = std::remove_pointer_t<T>;

}  // namespace

double inputValue(strataDataType_t t, strataRedOp_t op, int rank, size_t i, unsigned seed) {
  const Kind k = kindOf(t);
  int64_t v = 0;
  inputsOf(k, op, rank, i, 1, seed, &v);
  return valueOf(k, v);
}

double readValue(strataDataType_t t, const void* buf, size_t i) {
  double v = 0;
  asElements(t, const_cast<void*>(buf), [&](auto* e) {
    using T = Element<decltype(e)>;
    if constexpr (std::is_same_v<T, Half>) {
      v = halfToFloat(e[i]);
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      v = bf16ToFloat(e[i]);
    } else {
      v = static_cast<double>(e[i]);
    }
  });
  return v;
}

void writeValue(strataDataType_t t, void* buf, size_t i, double v) {
  asElements(t, buf, [&](auto* e) { e[i] = storedAs<Element<decltype(e)>>(v); });
}

void fillInput(strataDataType_t t, strataRedOp_t op, int rank, void* buf, size_t first, size_t n, unsigned seed) {
  const Kind k = kindOf(t);
  int64_t v[kFoldBlock];
  asElements(t, buf, [&](auto* e) {
    for (size_t done = 0; done < n; done += kFoldBlock) {
      const size_t m = std::min(kFoldBlock, n - done);
      inputsOf(k, op, rank, first + done, m, seed, v);
      for (size_t j = 0; j < m; ++j) e[done + j] = storedWhole<Element<decltype(e)>>(v[j]);
    }
  });
}

void fillReduced(strataDataType_t t, strataRedOp_t op, int p, void* buf, size_t first, size_t n, unsigned seed) {
  const Kind k = kindOf(t);
  int64_t acc[kFoldBlock];
  asElements(t, buf, [&](auto* e) {
    for (size_t done = 0; done < n; done += kFoldBlock) {
      const size_t m = std::min(kFoldBlock, n - done);
      foldRanks(k, op, 0, p - 1, first + done, m, seed, acc);
      using T = Element<decltype(e)>;
      if (op == strataAvg) {
        for (size_t j = 0; j < m; ++j) e[done + j] = storedAs<T>(finished(t, k, op, p, valueOf(k, acc[j])));
      } else {
        for (size_t j = 0; j < m; ++j) e[done + j] = storedWhole<T>(acc[j]);
      }
    }
  });
}

double reduceRange(strataDataType_t t, strataRedOp_t op, int firstRank, int lastRank, size_t i, unsigned seed) {
  const Kind k = kindOf(t);
  int64_t acc = 0;
  foldRanks(k, op, firstRank, lastRank, i, 1, seed, &acc);
  return valueOf(k, acc);
}

double reduceReference(strataDataType_t t, strataRedOp_t op, int p, size_t i, unsigned seed, int firstRank) {
  const Kind k = kindOf(t);
  int64_t acc = 0;
  foldRanks(k, op, firstRank, firstRank + p - 1, i, 1, seed, &acc);
  return finished(t, k, op, p, valueOf(k, acc));
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
