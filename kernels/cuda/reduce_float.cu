// Device reductions for float and double.
#include "kernels/cuda/reduce_kernels.cuh"

namespace strata::cuda {

bool launchReduceFloat(const void* args, DataType type, RedOp op, cudaStream_t stream) {
  const ReduceArgs& a = *static_cast<const ReduceArgs*>(args);
  switch (type) {
    case strataFloat32: launchReduceOp<float>(a, op, stream); return true;
    case strataFloat64: launchReduceOp<double>(a, op, stream); return true;
    default: return false;
  }
}

}  // namespace strata::cuda
