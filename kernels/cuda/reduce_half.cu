// Device reductions and peer collectives for half and bfloat16, accumulated in fp32 and rounded
// once per element.
#include "kernels/cuda/reduce_kernels.cuh"

namespace strata::cuda {

bool launchHalf(const TypedLaunch& l, DataType type) {
  switch (type) {
    case strataFloat16: launchForOp<__half>(l); return true;
    case strataBfloat16: launchForOp<__nv_bfloat16>(l); return true;
    default: return false;
  }
}

}  // namespace strata::cuda
