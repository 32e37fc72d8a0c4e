// ComputeBackend: the local (non-communicating) steps of a plan, for one memory space.
//
// A plan's reduce, copy and divide steps go through this interface; the host implementation
// runs them on the calling thread, the CUDA implementation enqueues kernels on a stream. The
// executor never knows which one it drives.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/common/datatype.h"
#include "kernels/common/status.h"

namespace strata {

enum class MemorySpace : int { kHost = 0, kDevice = 1 };

inline const char* memorySpaceName(MemorySpace s) { return s == MemorySpace::kHost ? "host" : "device"; }

constexpr int kMaxReduceInputs = 16;

class ComputeBackend {
 public:
  virtual ~ComputeBackend() = default;

  virtual MemorySpace space() const = 0;

  // dst[i] = srcs[0][i] op srcs[1][i] op ... op srcs[n-1][i] for i < count, 1 <= n <= kMaxReduceInputs.
  // dst may be identical to any input (not partially overlapping). 16-bit floating types accumulate
  // in fp32 and round once. strataAvg reduces as a sum: the division is the separate divide step.
  virtual Status reduce(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) = 0;

  // Non-overlapping copy of `bytes` bytes.
  virtual Status copy(void* dst, const void* src, size_t bytes) = 0;

  // data[i] = data[i] / divisor: the final step of strataAvg. Integers truncate toward zero (as C
  // and NCCL do); 16-bit types divide in fp32 and round once.
  virtual Status divide(void* data, size_t count, DataType type, int divisor) = 0;

  // Waits for all work this backend has started (no-op on the host).
  virtual Status synchronize() = 0;
};

// The host backend: plain loops the compiler vectorises, instantiated per type family.
ComputeBackend& hostComputeBackend();

// dst = srcs[0] op ... op srcs[n-1] for any n >= 1: left to right in batches of the backend's
// kMaxReduceInputs, the running sum in `scratch` (host memory: the host backend only for n above
// the limit), so a dst that is also one of the inputs is written last.
Status reduceInBatches(ComputeBackend& backend, void* dst, const void* const* srcs, size_t n, size_t count, DataType type,
                       RedOp op, std::vector<char>* scratch);

}  // namespace strata
