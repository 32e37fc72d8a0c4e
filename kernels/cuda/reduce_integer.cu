// Device reductions and peer collectives for the integer types (wrapping sums and products, as the
// host twin).
#include "kernels/cuda/reduce_kernels.cuh"

namespace strata::cuda {

bool launchInteger(const TypedLaunch& l, DataType type) {
  switch (type) {
    case strataInt8: launchForOp<int8_t>(l); return true;
    case strataUint8: launchForOp<uint8_t>(l); return true;
    case strataInt32: launchForOp<int32_t>(l); return true;
    case strataUint32: launchForOp<uint32_t>(l); return true;
    case strataInt64: launchForOp<int64_t>(l); return true;
    case strataUint64: launchForOp<uint64_t>(l); return true;
    default: return false;
  }
}

}  // namespace strata::cuda
