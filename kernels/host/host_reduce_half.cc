// Host reductions for the 16-bit floating types (half, bfloat16), accumulated in fp32.
#include "kernels/host/host_reduce.h"

namespace strata::host {

bool reduceHalf(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) {
  switch (type) {
    case strataFloat16: reduceWithOp<Half>(dst, srcs, n, count, op); return true;
    case strataBfloat16: reduceWithOp<BFloat16>(dst, srcs, n, count, op); return true;
    default: return false;
  }
}

bool divideHalf(void* data, size_t count, DataType type, int divisor) {
  switch (type) {
    case strataFloat16: divideBy(static_cast<Half*>(data), count, divisor); return true;
    case strataBfloat16: divideBy(static_cast<BFloat16*>(data), count, divisor); return true;
    default: return false;
  }
}

}  // namespace strata::host
