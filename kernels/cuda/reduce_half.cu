// Device reductions for half and bfloat16, accumulated in fp32 and rounded once per element.
#include "kernels/cuda/reduce_kernels.cuh"

namespace strata::cuda {

bool launchReduceHalf(const void* args, DataType type, RedOp op, cudaStream_t stream) {
  const ReduceArgs& a = *static_cast<const ReduceArgs*>(args);
  switch (type) {
    case strataFloat16: launchReduceOp<__half>(a, op, stream); return true;
    case strataBfloat16: launchReduceOp<__nv_bfloat16>(a, op, stream); return true;
    default: return false;
  }
}

}  // namespace strata::cuda
