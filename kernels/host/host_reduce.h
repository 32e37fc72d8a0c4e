// Host reduction primitives: element operators per (type, op), the N-input reduce, and the
// average's final divide. Each type family is instantiated in its own translation unit
// (host_reduce_integer.cc, host_reduce_float.cc, host_reduce_half.cc) so the build stays parallel.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/common/datatype.h"

namespace strata::host {

// Accumulator type and load/store for each storage type. 16-bit floats accumulate in fp32.
template <typename T>
struct Traits {
  using Acc = T;
  static Acc load(T v) { return v; }
  static T store(Acc v) { return v; }
};
template <>
struct Traits<Half> {
  using Acc = float;
  static Acc load(Half v) { return halfToFloat(v); }
  static Half store(Acc v) { return floatToHalf(v); }
};
template <>
struct Traits<BFloat16> {
  using Acc = float;
  static Acc load(BFloat16 v) { return bf16ToFloat(v); }
  static BFloat16 store(Acc v) { return floatToBf16(v); }
};

// Integer sums and products wrap (two's complement); computing them in the unsigned type keeps
// that defined behaviour for signed types.
template <typename A>
A wrapAdd(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename A>
A wrapMul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    // Promote narrow types to unsigned int first so the multiplication itself cannot overflow int.
    using U = std::conditional_t<(sizeof(A) < sizeof(unsigned)), unsigned, std::make_unsigned_t<A>>;
    return static_cast<A>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

struct OpSum {
  template <typename A>
  static A apply(A a, A b) { return wrapAdd(a, b); }
};
struct OpProd {
  template <typename A>
  static A apply(A a, A b) { return wrapMul(a, b); }
};
struct OpMax {
  template <typename A>
  static A apply(A a, A b) { return a < b ? b : a; }
};
struct OpMin {
  template <typename A>
  static A apply(A a, A b) { return b < a ? b : a; }
};

// dst = srcs[0] op ... op srcs[n-1]. dst may be identical to any input.
template <typename T, typename Op>
void reduceN(T* dst, const T* const* srcs, int n, size_t count) {
  using Tr = Traits<T>;
  using Acc = typename Tr::Acc;
  if (n == 1) {
    if (dst != srcs[0]) std::copy(srcs[0], srcs[0] + count, dst);
    return;
  }
  if (n == 2) {
    const T* a = srcs[0];
    const T* b = srcs[1];
    for (size_t i = 0; i < count; ++i) dst[i] = Tr::store(Op::apply(Tr::load(a[i]), Tr::load(b[i])));
    return;
  }
  // Tiles small enough to stay in L1: every input is read once, the output written once.
  constexpr size_t kTile = 512;
  Acc acc[kTile];
  for (size_t base = 0; base < count; base += kTile) {
    const size_t len = std::min(kTile, count - base);
    const T* s0 = srcs[0] + base;
    for (size_t i = 0; i < len; ++i) acc[i] = Tr::load(s0[i]);
    for (int k = 1; k < n; ++k) {
      const T* s = srcs[k] + base;
      for (size_t i = 0; i < len; ++i) acc[i] = Op::apply(acc[i], Tr::load(s[i]));
    }
    T* d = dst + base;
    for (size_t i = 0; i < len; ++i) d[i] = Tr::store(acc[i]);
  }
}

template <typename T>
void divideBy(T* data, size_t count, int divisor) {
  using Tr = Traits<T>;
  using Acc = typename Tr::Acc;
  if constexpr (std::is_integral_v<Acc>) {
    // In 64 bits of the type's signedness: an 8-bit divisor would overflow past 127 (255) ranks.
    using W = std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>;
    const W d = static_cast<W>(divisor);
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<T>(static_cast<W>(data[i]) / d);  // toward zero
  } else {
    const Acc d = static_cast<Acc>(divisor);
    for (size_t i = 0; i < count; ++i) data[i] = Tr::store(Tr::load(data[i]) / d);
  }
}

// Type-erased entry points of one type family; defined in the family's translation unit.
// They return false when the type is not of their family.
bool reduceInteger(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op);
bool reduceFloat(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op);
bool reduceHalf(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op);
bool divideInteger(void* data, size_t count, DataType type, int divisor);
bool divideFloat(void* data, size_t count, DataType type, int divisor);
bool divideHalf(void* data, size_t count, DataType type, int divisor);

// Dispatch on the operator for one storage type.
template <typename T>
void reduceWithOp(void* dst, const void* const* srcs, int n, size_t count, RedOp op) {
  T* d = static_cast<T*>(dst);
  const T* const* s = reinterpret_cast<const T* const*>(srcs);
  switch (op) {
    case strataSum:
    case strataAvg: reduceN<T, OpSum>(d, s, n, count); break;
    case strataProd: reduceN<T, OpProd>(d, s, n, count); break;
    case strataMax: reduceN<T, OpMax>(d, s, n, count); break;
    case strataMin: reduceN<T, OpMin>(d, s, n, count); break;
    default: break;
  }
}

}  // namespace strata::host
