// The host ComputeBackend: runs reduce, copy and divide steps on the calling thread.
#include <algorithm>
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

Status reduceInBatches(ComputeBackend& backend, void* dst, const void* const* srcs, size_t n, size_t count, DataType type,
                       RedOp op, std::vector<char>* scratch) {
  // On a device the running sum would have to live in device memory.
  STRATA_REQUIRE(n <= static_cast<size_t>(kMaxReduceInputs) || backend.space() == MemorySpace::kHost, strataInvalidUsage,
                 "%zu inputs in one reduction on device buffers (at most %d)", n, kMaxReduceInputs);
  size_t done = std::min<size_t>(n, kMaxReduceInputs);
  if (done == n) return backend.reduce(dst, srcs, static_cast<int>(n), count, type, op);
  scratch->resize(count * dataTypeSize(type));
  STRATA_CHECK(backend.reduce(scratch->data(), srcs, static_cast<int>(done), count, type, op));
  while (done < n) {
    const size_t take = std::min<size_t>(n - done, kMaxReduceInputs - 1);
    const void* batch[kMaxReduceInputs];
    batch[0] = scratch->data();
    for (size_t k = 0; k < take; ++k) batch[k + 1] = srcs[done + k];
    done += take;
    STRATA_CHECK(backend.reduce(done == n ? dst : scratch->data(), batch, static_cast<int>(take + 1), count, type, op));
  }
  return Status::Ok();
}

}  // namespace strata
