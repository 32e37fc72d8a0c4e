// The device side of the CUDA simulator, for kernel sources compiled by the host compiler.
//
// A .cu file that includes this header after CUDA's own headers (kernels/cuda/device_api.cuh does)
// compiles unchanged with g++: __global__ functions become host functions, and the simulator runs
// them once per simulated thread, on fibers, with CUDA's launch geometry. This header supplies what
// nvcc would: the built-in variables (threadIdx, blockIdx, blockDim, gridDim, warpSize),
// __shared__ storage per block, __syncthreads and the warp intrinsics (real barriers among the
// block's fibers), atomics, __nanosleep, and the checked global-memory accesses every kernel makes
// through load()/store(): each one is checked for alignment and for bounds against the allocation
// it falls in (a violation is a sticky error, as on a GPU), translated to the memory behind the
// device address, and counted.
//
// Never included under nvcc.
#pragma once

#if defined(__CUDACC__)
#error "cuda_sim/device.h is for the host compiler: nvcc has the real device built-ins"
#endif

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>

#define CUDA_SIM_API __attribute__((visibility("default")))

namespace cuda_sim {

// The simulated thread a fiber is running (set by the block scheduler before every switch to it).
struct ThreadContext {
  uint3 threadIndex;  // threadIdx
  uint3 blockIndex;   // blockIdx
  dim3 blockSize;     // blockDim
  dim3 gridSize;      // gridDim
  unsigned linear;    // threadIdx in row-major order, x fastest
  void* block;        // the scheduler's state of the block
};

// Where the memory a kernel touches lives, seen from the kernel's GPU: its own device memory, another
// GPU's (a peer's, through CUDA IPC or peer access: the interconnect), or pinned host memory (PCIe).
enum MemoryClass : unsigned { kLocalMemory = 0, kPeerMemory = 1, kHostMemory = 2, kMemoryClasses = 3 };

// One recently used allocation: [begin, end) of device addresses, the offset to the memory
// behind them, the allocation table's generation it was looked up in, and its memory class.
struct AccessWindow {
  uintptr_t begin = 0, end = 0;
  intptr_t delta = 0;
  uint64_t generation = 0;
  unsigned where = kLocalMemory;
};

// Per OS thread: the simulated thread it runs now (null outside kernels), the device its kernel
// runs on, the access windows and the byte counters of the current block per memory class (added
// to the launch's when the block ends).
struct KernelTls {
  ThreadContext* thread = nullptr;
  int device = 0;
  AccessWindow windows[4];
  unsigned nextWindow = 0;
  uint64_t bytesRead[kMemoryClasses] = {}, bytesWritten[kMemoryClasses] = {};
};
// Initial-exec: every checked access reads it, and the simulator is always loaded with the program
// (linked or preloaded, never dlopen'ed), so its thread-local block is static.
CUDA_SIM_API extern thread_local KernelTls tls __attribute__((tls_model("initial-exec")));
// Bumped whenever an allocation goes away, so no window outlives what it describes.
CUDA_SIM_API extern std::atomic<uint64_t> allocationGeneration;

// The slow path: looks `p` up in the allocation table. On a fault it records a sticky error and
// ends the simulated thread (the call does not return).
CUDA_SIM_API char* translateSlow(const void* p, size_t bytes, size_t align, bool write);

// The address behind device address `p` for an access of `bytes` aligned to `align`.
inline char* translate(const void* p, size_t bytes, size_t align, bool write) {
  KernelTls& t = tls;
  if (t.thread == nullptr) return static_cast<char*>(const_cast<void*>(p));  // host code
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if ((a & (align - 1)) == 0) {
    const uint64_t gen = allocationGeneration.load(std::memory_order_relaxed);
    for (const AccessWindow& w : t.windows) {
      if (a >= w.begin && a + bytes <= w.end && w.generation == gen) {
        (write ? t.bytesWritten : t.bytesRead)[w.where] += bytes;
        return reinterpret_cast<char*>(static_cast<intptr_t>(a) + w.delta);
      }
    }
  }
  return translateSlow(p, bytes, align, write);
}

// Global-memory accesses: what `*p` and `*p = v` are on a GPU.
template <typename T>
inline T load(const T* p) {
  T v;
  std::memcpy(static_cast<void*>(&v), translate(p, sizeof(T), alignof(T), false), sizeof(T));
  return v;
}
template <typename T>
inline void store(T* p, const T& v) {
  std::memcpy(static_cast<void*>(translate(p, sizeof(T), alignof(T), true)), static_cast<const void*>(&v), sizeof(T));
}
// A load the compiler may not hoist out of a polling loop (a flag another agent writes).
template <typename T>
inline T loadVolatile(const volatile T* p) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>);
  const T* q = reinterpret_cast<const T*>(translate(const_cast<const T*>(p), sizeof(T), alignof(T), false));
  return __atomic_load_n(q, __ATOMIC_ACQUIRE);
}
// A store another agent polls for (a flag): not reordered before the stores that precede it.
template <typename T>
inline void storeVolatile(volatile T* p, T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>);
  T* q = reinterpret_cast<T*>(translate(const_cast<const T*>(p), sizeof(T), alignof(T), true));
  __atomic_store_n(q, v, __ATOMIC_RELEASE);
}

// Barriers and warp exchange among the fibers of the current block (kernel_engine.cc).
CUDA_SIM_API void syncThreads();
CUDA_SIM_API void syncWarp(unsigned mask);
// Lane `lane` publishes `bytes` of `value`, then reads what lane `source` published (its own value
// when `source` is outside the mask or the warp). Every lane of `mask` must call it.
CUDA_SIM_API void warpExchange(unsigned mask, const void* value, void* result, size_t bytes, int source);
CUDA_SIM_API unsigned warpBallot(unsigned mask, bool predicate);
CUDA_SIM_API void nanosleep(unsigned ns);
// __trap(): the kernel ends with a sticky cudaErrorLaunchFailure.
[[noreturn]] CUDA_SIM_API void trap();
CUDA_SIM_API unsigned long long globalTimerNs();

// Launches `body` once per thread of grid x block on `stream` (kernel_engine.cc).
struct LaunchSpec {
  dim3 grid, block;
  size_t sharedBytes = 0;
  cudaStream_t stream = nullptr;
  const char* name = "kernel";
  const void* kernel = nullptr;  // the kernel's address: its first launch loads it (lazy loading)
};
CUDA_SIM_API cudaError_t launch(const LaunchSpec& spec, std::function<void()> body);

template <typename T>
inline T shuffle(unsigned mask, T v, int source) {
  static_assert(sizeof(T) <= 16 && std::is_trivially_copyable_v<T>);
  T out;
  warpExchange(mask, &v, &out, sizeof(T), source);
  return out;
}
inline unsigned laneId() { return tls.thread->linear & 31u; }

}  // namespace cuda_sim

// ---- What nvcc provides, spelled for the host compiler ---------------------------------------
#undef __shared__
#define __shared__ static thread_local
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif
#define threadIdx (::cuda_sim::tls.thread->threadIndex)
#define blockIdx (::cuda_sim::tls.thread->blockIndex)
#define blockDim (::cuda_sim::tls.thread->blockSize)
#define gridDim (::cuda_sim::tls.thread->gridSize)
#define warpSize 32

inline void __syncthreads() { ::cuda_sim::syncThreads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { ::cuda_sim::syncWarp(mask); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __nanosleep(unsigned ns) { ::cuda_sim::nanosleep(ns); }
[[noreturn]] inline void __trap() { ::cuda_sim::trap(); }

template <typename T>
inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  const int lane = static_cast<int>(::cuda_sim::laneId());
  return ::cuda_sim::shuffle(mask, v, (lane & ~(width - 1)) + (src & (width - 1)));
}
template <typename T>
inline T __shfl_xor_sync(unsigned mask, T v, int laneMask, int width = 32) {
  const int lane = static_cast<int>(::cuda_sim::laneId());
  const int src = lane ^ laneMask;
  return ::cuda_sim::shuffle(mask, v, (src & ~(width - 1)) == (lane & ~(width - 1)) ? src : lane);
}
template <typename T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const int lane = static_cast<int>(::cuda_sim::laneId());
  const int src = lane + static_cast<int>(delta);
  return ::cuda_sim::shuffle(mask, v, (src & ~(width - 1)) == (lane & ~(width - 1)) ? src : lane);
}
template <typename T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const int lane = static_cast<int>(::cuda_sim::laneId());
  const int src = lane - static_cast<int>(delta);
  return ::cuda_sim::shuffle(mask, v, src >= (lane & ~(width - 1)) ? src : lane);
}
inline unsigned __ballot_sync(unsigned mask, int predicate) { return ::cuda_sim::warpBallot(mask, predicate != 0); }
inline int __any_sync(unsigned mask, int predicate) { return ::cuda_sim::warpBallot(mask, predicate != 0) != 0; }
inline int __all_sync(unsigned mask, int predicate) {
  return (::cuda_sim::warpBallot(mask, predicate != 0) & mask) == (::cuda_sim::warpBallot(mask, true) & mask);
}

// Atomics on global memory: checked and translated like any access, then the host's atomics.
template <typename T>
inline T* cudaSimAtomicTarget(T* p) {
  return reinterpret_cast<T*>(::cuda_sim::translate(p, sizeof(T), sizeof(T), true));
}
template <typename T>
inline T atomicAdd(T* p, T v) {
  T* q = cudaSimAtomicTarget(p);
  if constexpr (std::is_floating_point_v<T>) {
    T old, next;
    __atomic_load(q, &old, __ATOMIC_SEQ_CST);
    do {
      next = old + v;
    } while (!__atomic_compare_exchange(q, &old, &next, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    return old;
  } else {
    return __atomic_fetch_add(q, v, __ATOMIC_SEQ_CST);
  }
}
template <typename T>
inline T atomicExch(T* p, T v) {
  return __atomic_exchange_n(cudaSimAtomicTarget(p), v, __ATOMIC_SEQ_CST);
}
template <typename T>
inline T atomicCAS(T* p, T compare, T v) {
  __atomic_compare_exchange_n(cudaSimAtomicTarget(p), &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}
template <typename T>
inline T atomicMax(T* p, T v) {
  T* q = cudaSimAtomicTarget(p);
  T old = __atomic_load_n(q, __ATOMIC_SEQ_CST);
  while (old < v && !__atomic_compare_exchange_n(q, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return old;
}
