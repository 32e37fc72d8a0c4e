// Host reductions for float and double.
#include "kernels/host/host_reduce.h"

namespace strata::host {

bool reduceFloat(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) {
  switch (type) {
    case strataFloat32: reduceWithOp<float>(dst, srcs, n, count, op); return true;
    case strataFloat64: reduceWithOp<double>(dst, srcs, n, count, op); return true;
    default: return false;
  }
}

bool divideFloat(void* data, size_t count, DataType type, int divisor) {
  switch (type) {
    case strataFloat32: divideBy(static_cast<float*>(data), count, divisor); return true;
    case strataFloat64: divideBy(static_cast<double*>(data), count, divisor); return true;
    default: return false;
  }
}

}  // namespace strata::host
