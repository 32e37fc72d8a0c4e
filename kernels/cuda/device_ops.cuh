// Device-side building blocks shared by the reduction kernels: element traits (16-bit floats
// accumulate in fp32), the reduction operators with the host twin's exact semantics
// (kernels/host/host_reduce.h: integer sums and products wrap, max/min as `a < b ? b : a`), a
// warp-shuffle block reduction, and the N-input reduction every kernel of kernels/cuda is made of:
// 16-byte loads and stores for every alignment of the inputs (aligned granules shifted into place
// where an input sits at another offset than the output), several vectors in flight per thread,
// 8-bit types four to a word through the SIMD byte instructions, the average fused into the
// reduction's last step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/compute_backend.h"
#include "kernels/cuda/device_api.cuh"

namespace strata::cuda {

constexpr int kVectorBytes = 16;

template <typename T>
struct DevTraits {
  using Acc = T;
  __host__ __device__ __forceinline__ static Acc load(T v) { return v; }
  __host__ __device__ __forceinline__ static T store(Acc v) { return v; }
};
template <>
struct DevTraits<__half> {
  using Acc = float;
  __host__ __device__ __forceinline__ static Acc load(__half v) { return __half2float(v); }
  __host__ __device__ __forceinline__ static __half store(Acc v) { return __float2half_rn(v); }
};
template <>
struct DevTraits<__nv_bfloat16> {
  using Acc = float;
  __host__ __device__ __forceinline__ static Acc load(__nv_bfloat16 v) { return __bfloat162float(v); }
  __host__ __device__ __forceinline__ static __nv_bfloat16 store(Acc v) { return __float2bfloat16_rn(v); }
};

// Integer arithmetic in the unsigned type of the same width (narrow types promoted to unsigned
// int), so signed overflow wraps as on the host instead of being undefined.
template <typename A>
__host__ __device__ __forceinline__ A devAdd(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::conditional_t<(sizeof(A) < sizeof(unsigned)), unsigned, std::make_unsigned_t<A>>;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename A>
__host__ __device__ __forceinline__ A devMul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::conditional_t<(sizeof(A) < sizeof(unsigned)), unsigned, std::make_unsigned_t<A>>;
    return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

struct DevSum {
  template <typename A>
  __host__ __device__ __forceinline__ static A apply(A a, A b) { return devAdd(a, b); }
};
struct DevProd {
  template <typename A>
  __host__ __device__ __forceinline__ static A apply(A a, A b) { return devMul(a, b); }
};
struct DevMax {
  template <typename A>
  __host__ __device__ __forceinline__ static A apply(A a, A b) { return a < b ? b : a; }
};
struct DevMin {
  template <typename A>
  __host__ __device__ __forceinline__ static A apply(A a, A b) { return b < a ? b : a; }
};

// The arguments of one N-input reduction: dst0[i] (and dst1[i] when set: reduce-copy) =
// src(0)[i] op ... op src(n-1)[i], then divided by `divisor` when it is > 0 (strataAvg fused).
// Passed by value as a kernel parameter (constant bank: every thread reads the same pointers).
// The functions below take any type with these members and src(k) (the peer kernels compute their
// inputs from the mapped peer buffers: kernels/cuda/peer_kernels.cuh).
struct ReduceArgs {
  const void* srcs[kMaxReduceInputs];
  void* dst0 = nullptr;
  void* dst1 = nullptr;
  int n = 0;
  int divisor = 0;
  size_t count = 0;
  __host__ __device__ __forceinline__ const void* src(int k) const { return srcs[k]; }
};

// v / divisor, strataAvg's last step: integers in 64 bits of their signedness (an 8-bit divisor
// would overflow past 127 or 255 ranks), truncating toward zero as C; 16-bit floats in fp32,
// rounded once.
template <typename T>
__host__ __device__ __forceinline__ T divideValue(T v, int divisor) {
  using Tr = DevTraits<T>;
  using Acc = typename Tr::Acc;
  if constexpr (std::is_integral_v<T>) {
    using W = std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>;
    return static_cast<T>(static_cast<W>(v) / static_cast<W>(divisor));
  } else {
    return Tr::store(Tr::load(v) / static_cast<Acc>(divisor));
  }
}

template <typename T>
__host__ __device__ __forceinline__ T finishValue(typename DevTraits<T>::Acc acc, int divisor) {
  using Tr = DevTraits<T>;
  // The fused average rounds the sum to the storage type first, then divides: bit for bit what a
  // reduce followed by a separate divide step gives (for the 16-bit floats the two roundings
  // differ from one).
  return divisor > 0 ? divideValue<T>(Tr::store(acc), divisor) : Tr::store(acc);
}

// One element i, scalar loads: heads, tails and buffers not aligned to their element size.
template <typename T, typename Op, typename Args>
__host__ __device__ __forceinline__ void reduceScalar(const Args& a, size_t i) {
  using Tr = DevTraits<T>;
  using Acc = typename Tr::Acc;
  Acc acc = Tr::load(loadGlobal(static_cast<const T*>(a.src(0)) + i));
  for (int k = 1; k < a.n; ++k) acc = Op::apply(acc, Tr::load(loadGlobal(static_cast<const T*>(a.src(k)) + i)));
  const T out = finishValue<T>(acc, a.divisor);
  storeGlobal(static_cast<T*>(a.dst0) + i, out);
  if (a.dst1 != nullptr) storeGlobal(static_cast<T*>(a.dst1) + i, out);
}

// The running reduction of one 16-byte vector: V accumulators of the element's accumulation type
// (fp32 for the 16-bit floats), combined in input order as the host twin does.
template <typename T, typename Op, bool ByteSimd = (sizeof(T) == 1 && !std::is_same_v<Op, DevProd>)>
struct VectorAccumulator {
  static constexpr int V = kVectorBytes / sizeof(T);
  using Tr = DevTraits<T>;
  union Vec {
    uint4 raw;
    T v[V];
  };
  typename Tr::Acc acc[V];
  __host__ __device__ __forceinline__ void first(uint4 raw) {
    Vec x;
    x.raw = raw;
#pragma unroll
    for (int j = 0; j < V; ++j) acc[j] = Tr::load(x.v[j]);
  }
  __host__ __device__ __forceinline__ void next(uint4 raw) {
    Vec x;
    x.raw = raw;
#pragma unroll
    for (int j = 0; j < V; ++j) acc[j] = Op::apply(acc[j], Tr::load(x.v[j]));
  }
  __host__ __device__ __forceinline__ uint4 finish(int divisor) const {
    Vec o;
#pragma unroll
    for (int j = 0; j < V; ++j) o.v[j] = finishValue<T>(acc[j], divisor);
    return o.raw;
  }
};

// 8-bit sums, maxima and minima: four bytes per 32-bit word through the SIMD byte instructions
// (wrapping per-byte add, signed or unsigned per-byte max and min), so an int8 vector costs four
// instructions per input instead of sixteen. (Products have no byte instruction: sixteen
// accumulators per vector, one vector per step.)
template <typename T, typename Op>
struct VectorAccumulator<T, Op, true> {
  uint32_t w[4];
  __host__ __device__ __forceinline__ static uint32_t combine(uint32_t a, uint32_t b) {
    if constexpr (std::is_same_v<Op, DevSum>) {
      return simdAdd4(a, b);
    } else if constexpr (std::is_same_v<Op, DevMax>) {
      return std::is_signed_v<T> ? simdMaxS4(a, b) : simdMaxU4(a, b);
    } else {
      return std::is_signed_v<T> ? simdMinS4(a, b) : simdMinU4(a, b);
    }
  }
  __host__ __device__ __forceinline__ void first(uint4 raw) {
    w[0] = raw.x;
    w[1] = raw.y;
    w[2] = raw.z;
    w[3] = raw.w;
  }
  __host__ __device__ __forceinline__ void next(uint4 raw) {
    w[0] = combine(w[0], raw.x);
    w[1] = combine(w[1], raw.y);
    w[2] = combine(w[2], raw.z);
    w[3] = combine(w[3], raw.w);
  }
  __host__ __device__ __forceinline__ uint4 finish(int divisor) const {
    union {
      uint4 raw;
      T v[16];
    } o;
    o.raw = make_uint4(w[0], w[1], w[2], w[3]);
    if (divisor > 0) {
#pragma unroll
      for (int j = 0; j < 16; ++j) o.v[j] = divideValue<T>(o.v[j], divisor);
    }
    return o.raw;
  }
};

// The 16 bytes that start `m` bytes (0 < m < 16) into `lo`, continuing into `hi`: what an
// unaligned 16-byte load would return, from two aligned ones. Words are first selected (m / 4
// words on), then funnel-shifted by the remaining bytes; m is the same for every thread, so the
// selects never diverge, and nothing is indexed at run time (no local memory).
__host__ __device__ __forceinline__ uint4 shiftBytes(uint4 lo, uint4 hi, unsigned m) {
  const bool two = (m & 8u) != 0, one = (m & 4u) != 0;
  const uint32_t a0 = two ? lo.z : lo.x, a1 = two ? lo.w : lo.y, a2 = two ? hi.x : lo.z;
  const uint32_t a3 = two ? hi.y : lo.w, a4 = two ? hi.z : hi.x, a5 = two ? hi.w : hi.y;
  const uint32_t b0 = one ? a1 : a0, b1 = one ? a2 : a1, b2 = one ? a3 : a2, b3 = one ? a4 : a3, b4 = one ? a5 : a4;
  const unsigned bits = (m & 3u) * 8u;
  return make_uint4(funnelShiftRight(b0, b1, bits), funnelShiftRight(b1, b2, bits), funnelShiftRight(b2, b3, bits),
                    funnelShiftRight(b3, b4, bits));
}

// U consecutive 16-byte vectors starting at byte address p, with 16-byte loads only: aligned p
// loads them directly; otherwise U + 1 aligned granules are loaded and shifted into place. All
// loads are issued before any is used, so U (or U + 1) are in flight per thread.
template <int U>
__host__ __device__ __forceinline__ void loadVectors(const char* p, uint4 (&out)[U]) {
  const unsigned m = static_cast<unsigned>(reinterpret_cast<uintptr_t>(p) % kVectorBytes);
  if (m == 0) {
    const uint4* g = reinterpret_cast<const uint4*>(p);
#pragma unroll
    for (int u = 0; u < U; ++u) out[u] = loadGlobal(g + u);
    return;
  }
  const uint4* g = reinterpret_cast<const uint4*>(p - m);
  uint4 raw[U + 1];
#pragma unroll
  for (int u = 0; u <= U; ++u) raw[u] = loadGlobal(g + u);
#pragma unroll
  for (int u = 0; u < U; ++u) out[u] = shiftBytes(raw[u], raw[u + 1], m);
}

// Vectors per thread per step: four (64 bytes in flight per thread and input); two for the 16-bit
// floats, whose fp32 accumulators take twice the registers; one for 8-bit products, sixteen
// accumulators a vector (more would spill: tests/compiler checks).
template <typename T, typename Op>
constexpr int kUnroll = sizeof(T) == 1 && std::is_same_v<Op, DevProd>            ? 1
                        : sizeof(typename DevTraits<T>::Acc) > sizeof(T) ? 2
                                                                         : 4;

// U consecutive output vectors from element e, which lies on a 16-byte boundary of dst0 (and of
// dst1, which shares dst0's alignment). Every input is loaded with 16-byte loads whatever its own
// alignment; the outputs are written with 16-byte stores.
template <typename T, typename Op, int U, typename Args>
__host__ __device__ __forceinline__ void reduceVectors(const Args& a, size_t e) {
  const size_t offset = e * sizeof(T);
  VectorAccumulator<T, Op> acc[U];
  uint4 in[U];
  loadVectors<U>(static_cast<const char*>(a.src(0)) + offset, in);
#pragma unroll
  for (int u = 0; u < U; ++u) acc[u].first(in[u]);
  for (int k = 1; k < a.n; ++k) {
    loadVectors<U>(static_cast<const char*>(a.src(k)) + offset, in);
#pragma unroll
    for (int u = 0; u < U; ++u) acc[u].next(in[u]);
  }
  uint4 out[U];
#pragma unroll
  for (int u = 0; u < U; ++u) out[u] = acc[u].finish(a.divisor);
  uint4* d0 = reinterpret_cast<uint4*>(static_cast<char*>(a.dst0) + offset);
#pragma unroll
  for (int u = 0; u < U; ++u) storeGlobal(d0 + u, out[u]);
  if (a.dst1 != nullptr) {
    uint4* d1 = reinterpret_cast<uint4*>(static_cast<char*>(a.dst1) + offset);
#pragma unroll
    for (int u = 0; u < U; ++u) storeGlobal(d1 + u, out[u]);
  }
}

// How a range splits into a scalar head, 16-byte output vectors and a scalar tail. The vectors lie
// on dst0's 16-byte boundaries; an input at another offset is read through aligned granules
// (loadVectors), and the vectors are trimmed so that every granule read lies inside that input:
// no load ever touches a byte outside the buffers. Scalars only where a pointer is not aligned to
// its element size, or where dst1 has another offset from a 16-byte boundary than dst0
// (launchReduce then writes dst1 with a vectorised copy instead).
struct VectorSplit {
  size_t head = 0;  // scalar elements before the first vector
  size_t vecs = 0;  // vectors
};

__host__ __device__ inline bool sharesVectorAlignment(const void* p, const void* q) {
  return q == nullptr || (reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(q)) % kVectorBytes == 0;
}

template <typename T, typename Args>
__host__ __device__ inline VectorSplit splitForVectors(const Args& a) {
  constexpr long long es = sizeof(T), V = kVectorBytes / sizeof(T);
  VectorSplit s;
  s.head = a.count;
  const uintptr_t dst = reinterpret_cast<uintptr_t>(a.dst0);
  bool elementAligned = dst % es == 0 && sharesVectorAlignment(a.dst0, a.dst1);
  for (int k = 0; k < a.n; ++k) elementAligned = elementAligned && reinterpret_cast<uintptr_t>(a.src(k)) % es == 0;
  if (!elementAligned) return s;
  const long long bytes = static_cast<long long>(a.count) * es;
  const long long head = static_cast<long long>((kVectorBytes - dst % kVectorBytes) % kVectorBytes);  // bytes
  long long first = 0, end = (bytes - head) / kVectorBytes;  // vectors [first, end) relative to the head
  for (int k = 0; k < a.n; ++k) {
    const long long m = static_cast<long long>((reinterpret_cast<uintptr_t>(a.src(k)) - dst) % kVectorBytes);
    if (m == 0) continue;
    // Vector v reads this input's granules at byte head + 16 v - m and 16 bytes further: both must
    // lie inside [0, bytes).
    if (m > head) first = first > 1 ? first : 1;
    const long long room = bytes - head + m - 2 * kVectorBytes;
    const long long last = room < 0 ? -1 : room / kVectorBytes;
    end = end < last + 1 ? end : last + 1;
  }
  if (end <= first) return s;
  s.head = static_cast<size_t>(head / es + first * V);
  s.vecs = static_cast<size_t>(end - first);
  return s;
}

// Where a thread sits in the grid. The kernels pass CUDA's built-ins; the host test of the kernels'
// logic (tests/gpu/kernel_logic_test.cu, which runs without a GPU) walks every thread of a grid.
struct ThreadIndex {
  size_t block, blocks, thread, threads;
};

// One thread's share of a whole reduction: tiles of kUnroll consecutive vectors in a grid stride
// (consecutive threads take consecutive tiles), then the vectors left over one at a time, then the
// scalar head and tail. (Measured on an H200, 256 MiB per input, against cudaMemcpy in the same
// run: a grid-strided layout, thread t taking vectors t, t + T, ... so that each warp instruction
// covers 512 consecutive bytes, lowered float sums from 83-105% to 62-64% and raised the byte copy
// only from 64% to 68%: U streams per thread, megabytes apart, cost more than the wider
// instructions gain. The consecutive tiles stay.)
template <typename T, typename Op, typename Args>
__host__ __device__ __forceinline__ void reduceAsThread(const Args& a, const VectorSplit& split, const ThreadIndex& t) {
  constexpr int U = kUnroll<T, Op>;
  constexpr size_t V = kVectorBytes / sizeof(T);
  const size_t tid = t.block * t.threads + t.thread;
  const size_t stride = t.blocks * t.threads;
  const size_t tiles = split.vecs / U;
  for (size_t i = tid; i < tiles; i += stride) reduceVectors<T, Op, U>(a, split.head + i * U * V);
  for (size_t v = tiles * U + tid; v < split.vecs; v += stride) reduceVectors<T, Op, 1>(a, split.head + v * V);
  for (size_t i = tid; i < split.head; i += stride) reduceScalar<T, Op>(a, i);
  for (size_t i = split.head + split.vecs * V + tid; i < a.count; i += stride) reduceScalar<T, Op>(a, i);
}

// The work units of a reduction for the grid size: tiles, or scalars where there are more.
template <typename T, typename Op, typename Args>
__host__ __device__ inline size_t reduceWorkItems(const Args& a, const VectorSplit& split) {
  constexpr size_t V = kVectorBytes / sizeof(T);
  const size_t tiles = (split.vecs + kUnroll<T, Op> - 1) / kUnroll<T, Op>;
  const size_t scalars = a.count - split.vecs * V;
  return tiles > scalars ? tiles : scalars;
}

// Warp, then block, reduction of one value per thread (shuffles, then one word of shared memory
// per warp). Every thread of the block must call it; the result is returned to every thread.
template <typename Acc, typename Op>
__device__ __forceinline__ Acc warpReduce(Acc v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = Op::apply(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

template <typename Acc, typename Op>
__device__ __forceinline__ Acc blockReduce(Acc v) {
  __shared__ Acc partial[32];
  __shared__ Acc result;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  v = warpReduce<Acc, Op>(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    Acc w = partial[lane < warps ? lane : 0];
    // Lanes past the last warp repeat warp 0's partial: harmless for max/min, so they are masked
    // out for sums by reducing only the first `warps` lanes.
    for (int offset = 16; offset > 0; offset >>= 1) {
      const Acc other = __shfl_down_sync(0xffffffffu, w, offset);
      if (lane + offset < warps) w = Op::apply(w, other);
    }
    if (lane == 0) result = w;
  }
  __syncthreads();
  return result;
}

}  // namespace strata::cuda
