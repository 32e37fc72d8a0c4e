// Host reductions for the integer types (int8, uint8, int32, uint32, int64, uint64).
#include "kernels/host/host_reduce.h"

namespace strata::host {

bool reduceInteger(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) {
  switch (type) {
    case strataInt8: reduceWithOp<int8_t>(dst, srcs, n, count, op); return true;
    case strataUint8: reduceWithOp<uint8_t>(dst, srcs, n, count, op); return true;
    case strataInt32: reduceWithOp<int32_t>(dst, srcs, n, count, op); return true;
    case strataUint32: reduceWithOp<uint32_t>(dst, srcs, n, count, op); return true;
    case strataInt64: reduceWithOp<int64_t>(dst, srcs, n, count, op); return true;
    case strataUint64: reduceWithOp<uint64_t>(dst, srcs, n, count, op); return true;
    default: return false;
  }
}

bool divideInteger(void* data, size_t count, DataType type, int divisor) {
  switch (type) {
    case strataInt8: divideBy(static_cast<int8_t*>(data), count, divisor); return true;
    case strataUint8: divideBy(static_cast<uint8_t*>(data), count, divisor); return true;
    case strataInt32: divideBy(static_cast<int32_t*>(data), count, divisor); return true;
    case strataUint32: divideBy(static_cast<uint32_t*>(data), count, divisor); return true;
    case strataInt64: divideBy(static_cast<int64_t*>(data), count, divisor); return true;
    case strataUint64: divideBy(static_cast<uint64_t*>(data), count, divisor); return true;
    default: return false;
  }
}

}  // namespace strata::host
