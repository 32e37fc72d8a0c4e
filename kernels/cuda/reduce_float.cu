// Device reductions and peer collectives for float and double.
#include "kernels/cuda/reduce_kernels.cuh"

namespace strata::cuda {

bool launchFloat(const TypedLaunch& l, DataType type) {
  switch (type) {
    case strataFloat32: launchForOp<float>(l); return true;
    case strataFloat64: launchForOp<double>(l); return true;
    default: return false;
  }
}

}  // namespace strata::cuda
