// Device-side building blocks shared by the reduction kernels: element traits (16-bit floats
// accumulate in fp32), the reduction operators with the host twin's exact semantics
// (kernels/host/host_reduce.h: integer sums and products wrap, max/min as `a < b ? b : a`), a
// warp-shuffle block reduction, and the block-cooperative N-input chunk reduction that every
// kernel of kernels/cuda is made of.
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
// srcs[0][i] op ... op srcs[n-1][i], then divided by `divisor` when it is > 0 (strataAvg fused).
// Passed by value as a kernel parameter (constant bank: every thread reads the same pointers).
struct ReduceArgs {
  const void* srcs[kMaxReduceInputs];
  void* dst0 = nullptr;
  void* dst1 = nullptr;
  int n = 0;
  int divisor = 0;
  size_t count = 0;
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

// One element i, scalar loads: heads, tails and misaligned buffers.
template <typename T, typename Op>
__host__ __device__ __forceinline__ void reduceScalar(const ReduceArgs& a, size_t i) {
  using Tr = DevTraits<T>;
  using Acc = typename Tr::Acc;
  Acc acc = Tr::load(loadGlobal(static_cast<const T*>(a.srcs[0]) + i));
  for (int k = 1; k < a.n; ++k) acc = Op::apply(acc, Tr::load(loadGlobal(static_cast<const T*>(a.srcs[k]) + i)));
  const T out = finishValue<T>(acc, a.divisor);
  storeGlobal(static_cast<T*>(a.dst0) + i, out);
  if (a.dst1 != nullptr) storeGlobal(static_cast<T*>(a.dst1) + i, out);
}

// One 16-byte vector at element e (e is a multiple of the vector width past the aligned head).
// Inputs are read four at a time before they are combined so several loads are in flight per
// thread; the accumulator stays in registers.
template <typename T, typename Op>
__host__ __device__ __forceinline__ void reduceVector(const ReduceArgs& a, size_t e) {
  using Tr = DevTraits<T>;
  using Acc = typename Tr::Acc;
  constexpr int V = kVectorBytes / sizeof(T);
  union Vec {
    uint4 raw;
    T v[V];
  };
  Vec in;
  in.raw = loadGlobal(reinterpret_cast<const uint4*>(static_cast<const T*>(a.srcs[0]) + e));
  Acc acc[V];
#pragma unroll
  for (int j = 0; j < V; ++j) acc[j] = Tr::load(in.v[j]);
  int k = 1;
  for (; k + 4 <= a.n; k += 4) {
    Vec b[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) b[q].raw = loadGlobal(reinterpret_cast<const uint4*>(static_cast<const T*>(a.srcs[k + q]) + e));
#pragma unroll
    for (int q = 0; q < 4; ++q) {
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] = Op::apply(acc[j], Tr::load(b[q].v[j]));
    }
  }
  for (; k < a.n; ++k) {
    Vec b;
    b.raw = loadGlobal(reinterpret_cast<const uint4*>(static_cast<const T*>(a.srcs[k]) + e));
#pragma unroll
    for (int j = 0; j < V; ++j) acc[j] = Op::apply(acc[j], Tr::load(b.v[j]));
  }
  Vec out;
#pragma unroll
  for (int j = 0; j < V; ++j) out.v[j] = finishValue<T>(acc[j], a.divisor);
  storeGlobal(reinterpret_cast<uint4*>(static_cast<T*>(a.dst0) + e), out.raw);
  if (a.dst1 != nullptr) storeGlobal(reinterpret_cast<uint4*>(static_cast<T*>(a.dst1) + e), out.raw);
}

// How a range splits into a scalar head, 16-byte vectors and a scalar tail. Vectors are used only
// when every pointer has the same offset from a 16-byte boundary (else all elements are scalar).
struct VectorSplit {
  size_t head = 0;  // scalar elements before the first vector
  size_t vecs = 0;  // vectors
};

template <typename T>
__host__ __device__ inline VectorSplit splitForVectors(const ReduceArgs& a) {
  constexpr size_t V = kVectorBytes / sizeof(T);
  const uintptr_t mis = reinterpret_cast<uintptr_t>(a.dst0) % kVectorBytes;
  bool same = mis % sizeof(T) == 0 && (a.dst1 == nullptr || reinterpret_cast<uintptr_t>(a.dst1) % kVectorBytes == mis);
  for (int k = 0; k < a.n && same; ++k) same = reinterpret_cast<uintptr_t>(a.srcs[k]) % kVectorBytes == mis;
  VectorSplit s;
  if (!same) {
    s.head = a.count;
    return s;
  }
  const size_t head = mis == 0 ? 0 : (kVectorBytes - mis) / sizeof(T);
  if (head >= a.count) {
    s.head = a.count;
    return s;
  }
  s.head = head;
  s.vecs = (a.count - head) / V;
  return s;
}

// Where a thread sits in the grid. The kernels pass CUDA's built-ins; the host test of the kernels'
// logic (tests/gpu/kernel_logic_test.cu, which runs without a GPU) walks every thread of a grid.
struct ThreadIndex {
  size_t block, blocks, thread, threads;
};

// Block-cooperative reduction of vectors [vecBegin, vecEnd) of `a` (a chunk): the block's threads
// stride over the chunk. A pipelined tree's node reduces each arriving chunk with one call.
template <typename T, typename Op>
__host__ __device__ __forceinline__ void blockReduceChunk(const ReduceArgs& a, const VectorSplit& split,
                                                          size_t vecBegin, size_t vecEnd, const ThreadIndex& t) {
  constexpr size_t V = kVectorBytes / sizeof(T);
  for (size_t v = vecBegin + t.thread; v < vecEnd; v += t.threads) reduceVector<T, Op>(a, split.head + v * V);
}

// One thread's share of a whole reduction: blocks take one block's worth of vectors at a time in a
// grid stride (blockReduceChunk), then the scalar head and tail go grid-strided over all threads.
template <typename T, typename Op>
__host__ __device__ __forceinline__ void reduceAsThread(const ReduceArgs& a, const VectorSplit& split,
                                                        const ThreadIndex& t) {
  for (size_t begin = t.block * t.threads; begin < split.vecs; begin += t.blocks * t.threads) {
    const size_t end = begin + t.threads < split.vecs ? begin + t.threads : split.vecs;
    blockReduceChunk<T, Op>(a, split, begin, end, t);
  }
  constexpr size_t V = kVectorBytes / sizeof(T);
  const size_t tid = t.block * t.threads + t.thread;
  const size_t stride = t.blocks * t.threads;
  for (size_t i = tid; i < split.head; i += stride) reduceScalar<T, Op>(a, i);
  for (size_t i = split.head + split.vecs * V + tid; i < a.count; i += stride) reduceScalar<T, Op>(a, i);
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
