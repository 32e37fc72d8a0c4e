// The N-input reduce kernel, templated on the storage type and the operator, and its per-family
// dispatch. Included only by the family translation units (reduce_integer.cu, reduce_float.cu,
// reduce_half.cu), each of which instantiates its own types for all five operators.
#pragma once

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/device_ops.cuh"

namespace strata::cuda {

// A grid of persistent blocks, each thread doing reduceAsThread's share.
template <typename T, typename Op>
__global__ void __launch_bounds__(kThreads) reduceKernel(ReduceArgs a, VectorSplit split) {
  reduceAsThread<T, Op>(a, split, ThreadIndex{blockIdx.x, gridDim.x, threadIdx.x, blockDim.x});
}

template <typename T, typename Op>
void launchReduceTyped(const ReduceArgs& a, cudaStream_t stream) {
  const VectorSplit split = splitForVectors<T>(a);
  constexpr size_t V = kVectorBytes / sizeof(T);
  const size_t scalars = a.count - split.vecs * V;
  const size_t work = split.vecs > scalars ? split.vecs : scalars;
  launchKernel("reduceKernel", reduceKernel<T, Op>, gridFor(work, kThreads), kThreads, stream, a, split);
}

template <typename T>
void launchReduceOp(const ReduceArgs& a, RedOp op, cudaStream_t stream) {
  switch (op) {
    case strataSum:
    case strataAvg: launchReduceTyped<T, DevSum>(a, stream); break;
    case strataProd: launchReduceTyped<T, DevProd>(a, stream); break;
    case strataMax: launchReduceTyped<T, DevMax>(a, stream); break;
    case strataMin: launchReduceTyped<T, DevMin>(a, stream); break;
    default: break;
  }
}

}  // namespace strata::cuda
