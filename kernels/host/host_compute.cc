// The host ComputeBackend: runs reduce, copy and divide steps on the calling thread.
#include <cstring>

#include "kernels/compute_backend.h"
#include "kernels/host/host_reduce.h"

namespace strata {
namespace {

class HostComputeBackend final : public ComputeBackend {
 public:
  MemorySpace space() const override { return MemorySpace::kHost; }

  Status reduce(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) override {
    STRATA_REQUIRE(n >= 1 && n <= kMaxReduceInputs, strataInternalError,
                   "host reduce: %d inputs (expected 1..%d)", n, kMaxReduceInputs);
    STRATA_REQUIRE(isValidRedOp(op), strataInternalError, "host reduce: invalid op %d", static_cast<int>(op));
    if (count == 0) return Status::Ok();
    if (host::reduceInteger(dst, srcs, n, count, type, op) || host::reduceFloat(dst, srcs, n, count, type, op) ||
        host::reduceHalf(dst, srcs, n, count, type, op)) {
      return Status::Ok();
    }
    return makeStatus(strataInternalError, "host reduce: invalid datatype %d", static_cast<int>(type));
  }

  Status copy(void* dst, const void* src, size_t bytes) override {
    if (bytes != 0 && dst != src) std::memcpy(dst, src, bytes);
    return Status::Ok();
  }

  Status divide(void* data, size_t count, DataType type, int divisor) override {
    STRATA_REQUIRE(divisor > 0, strataInternalError, "host divide: divisor %d", divisor);
    if (count == 0) return Status::Ok();
    if (host::divideInteger(data, count, type, divisor) || host::divideFloat(data, count, type, divisor) ||
        host::divideHalf(data, count, type, divisor)) {
      return Status::Ok();
    }
    return makeStatus(strataInternalError, "host divide: invalid datatype %d", static_cast<int>(type));
  }

  Status synchronize() override { return Status::Ok(); }
};

}  // namespace

ComputeBackend& hostComputeBackend() {
  static HostComputeBackend backend;
  return backend;
}

}  // namespace strata
