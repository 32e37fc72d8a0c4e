// Device reductions for the integer types (wrapping sums and products, as the host twin).
#include "kernels/cuda/reduce_kernels.cuh"

namespace strata::cuda {

bool launchReduceInteger(const void* args, DataType type, RedOp op, cudaStream_t stream) {
  const ReduceArgs& a = *static_cast<const ReduceArgs*>(args);
  switch (type) {
    case strataInt8: launchReduceOp<int8_t>(a, op, stream); return true;
    case strataUint8: launchReduceOp<uint8_t>(a, op, stream); return true;
    case strataInt32: launchReduceOp<int32_t>(a, op, stream); return true;
    case strataUint32: launchReduceOp<uint32_t>(a, op, stream); return true;
    case strataInt64: launchReduceOp<int64_t>(a, op, stream); return true;
    case strataUint64: launchReduceOp<uint64_t>(a, op, stream); return true;
    default: return false;
  }
}

}  // namespace strata::cuda
