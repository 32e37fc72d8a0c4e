// What every kernel source of kernels/cuda includes first: CUDA's headers, and the few places
// where device code is spelled differently for nvcc and for the CUDA simulator (tests/cuda_sim),
// which compiles the same sources with the host compiler and runs them on CPU threads.
//
//   launchKernel(name, kernel, grid, block, stream, args...)  kernel<<<grid, block, 0, stream>>>(args...)
//   loadGlobal(p), storeGlobal(p, v)                           *p, *p = v  (global memory)
//   loadVolatileGlobal(p)                                      a poll of a flag another agent writes
//   deviceTimerNs()                                            %globaltimer
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

__device__ __forceinline__ unsigned long long deviceTimerNs() {
#if defined(__CUDACC__)
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return ::cuda_sim::globalTimerNs();
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
  ::cuda_sim::launch(spec, [=] { kernel(args...); });
#endif
}

}  // namespace strata::cuda
