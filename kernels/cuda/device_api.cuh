// What every kernel source of kernels/cuda includes first: CUDA's headers, and the few places
// where device code is spelled differently for nvcc and for the CUDA simulator (tests/cuda_sim),
// which compiles the same sources with the host compiler and runs them on CPU threads.
//
//   launchKernel(name, kernel, grid, block, stream, args...)  kernel<<<grid, block, 0, stream>>>(args...)
//   loadGlobal(p), storeGlobal(p, v)                           *p, *p = v  (global memory)
//   loadVolatileGlobal(p), storeVolatileGlobal(p, v)           a flag another agent polls or writes
//   deviceTimerNs()                                            %globaltimer
//   funnelShiftRight(lo, hi, s), simdAdd4, simdMaxS4, ...      __funnelshift_r, __vadd4, __vmaxs4, ...
//
// Under nvcc these are the plain expressions on the right; under the simulator every global
// access is checked for alignment and bounds against its allocation and counted, and a launch
// runs the grid's blocks on fibers with CUDA's geometry.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#if !defined(__CUDACC__)
#include <cuda_sim/device.h>
#endif

namespace strata::cuda {

template <typename T>
__host__ __device__ __forceinline__ T loadGlobal(const T* p) {
#if defined(__CUDACC__)
  return *p;
#else
  return ::cuda_sim::load(p);
#endif
}

template <typename T>
__host__ __device__ __forceinline__ void storeGlobal(T* p, const T& v) {
#if defined(__CUDACC__)
  *p = v;
#else
  ::cuda_sim::store(p, v);
#endif
}

template <typename T>
__device__ __forceinline__ T loadVolatileGlobal(const volatile T* p) {
#if defined(__CUDACC__)
  return *p;
#else
  return ::cuda_sim::loadVolatile(p);
#endif
}

template <typename T>
__device__ __forceinline__ void storeVolatileGlobal(volatile T* p, T v) {
#if defined(__CUDACC__)
  *p = v;
#else
  ::cuda_sim::storeVolatile(p, v);
#endif
}

__device__ __forceinline__ unsigned long long deviceTimerNs() {
#if defined(__CUDACC__)
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return ::cuda_sim::globalTimerNs();
#endif
}

// The SIMD and funnel-shift instructions the reduce kernels use. Under nvcc's device pass the
// intrinsics; elsewhere (the simulator, and the host pass that tests/gpu/kernel_logic_test.cu runs)
// their documented semantics in plain C++: per byte of the 32-bit words, a wrapping add, a signed
// or unsigned max or min; the funnel shift returns the low 32 bits of (hi:lo) >> (s mod 32).
__host__ __device__ __forceinline__ uint32_t funnelShiftRight(uint32_t lo, uint32_t hi, unsigned s) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(lo, hi, s);
#else
  return static_cast<uint32_t>(((static_cast<uint64_t>(hi) << 32) | lo) >> (s & 31u));
#endif
}

#if !defined(__CUDA_ARCH__)
template <typename Byte, typename F>
__host__ __device__ __forceinline__ uint32_t perByte(uint32_t a, uint32_t b, F f) {
  uint32_t out = 0;
  for (int i = 0; i < 4; ++i) {
    const Byte x = static_cast<Byte>(a >> (8 * i)), y = static_cast<Byte>(b >> (8 * i));
    out |= static_cast<uint32_t>(static_cast<uint8_t>(f(x, y))) << (8 * i);
  }
  return out;
}
#endif

__host__ __device__ __forceinline__ uint32_t simdAdd4(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __vadd4(a, b);
#else
  return ((a & 0x7f7f7f7fu) + (b & 0x7f7f7f7fu)) ^ ((a ^ b) & 0x80808080u);
#endif
}
__host__ __device__ __forceinline__ uint32_t simdMaxS4(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __vmaxs4(a, b);
#else
  return perByte<int8_t>(a, b, [](int8_t x, int8_t y) { return x < y ? y : x; });
#endif
}
__host__ __device__ __forceinline__ uint32_t simdMinS4(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __vmins4(a, b);
#else
  return perByte<int8_t>(a, b, [](int8_t x, int8_t y) { return y < x ? y : x; });
#endif
}
__host__ __device__ __forceinline__ uint32_t simdMaxU4(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __vmaxu4(a, b);
#else
  return perByte<uint8_t>(a, b, [](uint8_t x, uint8_t y) { return x < y ? y : x; });
#endif
}
__host__ __device__ __forceinline__ uint32_t simdMinU4(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __vminu4(a, b);
#else
  return perByte<uint8_t>(a, b, [](uint8_t x, uint8_t y) { return y < x ? y : x; });
#endif
}

// Enqueues kernel<<<grid, block, 0, stream>>>(args...). The launch's own error, if any, is left
// for cudaGetLastError, as with <<<>>>.
template <typename... Params, typename... Args>
void launchKernel(const char* name, void (*kernel)(Params...), unsigned grid, unsigned block, cudaStream_t stream,
                  Args... args) {
#if defined(__CUDACC__)
  (void)name;
  kernel<<<grid, block, 0, stream>>>(args...);
#else
  ::cuda_sim::LaunchSpec spec;
  spec.grid = dim3(grid);
  spec.block = dim3(block);
  spec.stream = stream;
  spec.name = name;
  spec.kernel = reinterpret_cast<const void*>(kernel);
  ::cuda_sim::launch(spec, [=] { kernel(args...); });
#endif
}

}  // namespace strata::cuda
