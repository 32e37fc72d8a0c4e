// The kernels that are templated on the storage type and the operator (the N-input reduce kernel
// and the peer collective kernel), and their per-family dispatch. Included only by the .cu files;
// each family translation unit (reduce_integer.cu, reduce_float.cu, reduce_half.cu) instantiates
// both kernels for its types and all five operators.
#pragma once

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/device_ops.cuh"
#include "kernels/cuda/peer_kernels.cuh"

namespace strata::cuda {

// A grid of persistent blocks, each thread doing reduceAsThread's share.
template <typename T, typename Op>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) reduceKernel(ReduceArgs a, VectorSplit split) {
  reduceAsThread<T, Op>(a, split, ThreadIndex{blockIdx.x, gridDim.x, threadIdx.x, blockDim.x});
}

template <typename T, typename Op>
void launchReduceTyped(const ReduceArgs& a, cudaStream_t stream) {
  const VectorSplit split = splitForVectors<T>(a);
  const void* kernel = reinterpret_cast<const void*>(reduceKernel<T, Op>);
  launchKernel("reduceKernel", reduceKernel<T, Op>, gridFor(kernel, reduceWorkItems<T, Op>(a, split), kThreads), kThreads,
               stream, a, split);
}

// Loads `kernel` (cudaFuncGetAttributes references it), keeping the first error in *loaded.
inline void loadKernel(const void* kernel, cudaError_t* loaded) {
  cudaFuncAttributes attributes{};
  const cudaError_t rc = cudaFuncGetAttributes(&attributes, kernel);
  if (*loaded == cudaSuccess) *loaded = rc;
}

// What a family translation unit launches: a reduction or a peer collective; or, with `loaded`,
// nothing: both kernels of the type and operator are loaded (preloadKernels), the first error, if
// any, left in *loaded.
struct TypedLaunch {
  const ReduceArgs* reduce = nullptr;
  const PeerKernelArgs* peer = nullptr;
  RedOp op = strataSum;
  cudaStream_t stream = nullptr;
  cudaError_t* loaded = nullptr;
};

template <typename T, typename Op>
void launchTyped(const TypedLaunch& l) {
  if (l.loaded != nullptr) {
    loadKernel(reinterpret_cast<const void*>(reduceKernel<T, Op>), l.loaded);
    loadKernel(reinterpret_cast<const void*>(peerCollectiveKernel<T, Op>), l.loaded);
  } else if (l.reduce != nullptr) {
    launchReduceTyped<T, Op>(*l.reduce, l.stream);
  } else {
    launchPeerTyped<T, Op>(*l.peer, l.stream);
  }
}

template <typename T>
void launchForOp(const TypedLaunch& l) {
  switch (l.op) {
    case strataSum:
    case strataAvg: launchTyped<T, DevSum>(l); break;
    case strataProd: launchTyped<T, DevProd>(l); break;
    case strataMax: launchTyped<T, DevMax>(l); break;
    case strataMin: launchTyped<T, DevMin>(l); break;
    default: break;
  }
}

// Per type family (one translation unit each, so the build compiles them in parallel). They
// return false when `type` is not of their family.
bool launchInteger(const TypedLaunch& l, DataType type);
bool launchFloat(const TypedLaunch& l, DataType type);
bool launchHalf(const TypedLaunch& l, DataType type);

// Any family; false for an invalid type.
inline bool launchAnyType(const TypedLaunch& l, DataType type) {
  return launchInteger(l, type) || launchFloat(l, type) || launchHalf(l, type);
}

}  // namespace strata::cuda
