// StreamGate: holds a caller's CUDA stream until the host releases a ticket, so the work queued on
// the stream after a collective waits for the progress thread that runs it (DESIGN.md 5).
//
// The counter lives in pinned, mapped host memory that is never freed: a stream may still wait on
// it after its communicator is gone. A stream waits through the driver's stream wait-value
// operation (cuStreamWaitValue32, GEQ, reached through cudaGetDriverEntryPointByVersion) or, where
// that is unsupported, a one-thread kernel that polls the counter with a bound and traps past it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/status.h"
#include "src/core/config.h"

namespace strata {

class StreamGate {
 public:
  // kAuto: the wait-value operation where the driver runs it (probed here), else the kernel; the
  // others force one (STRATA_STREAM_GATE), a forced wait-value operation the driver refuses being
  // an error here, before any call is queued.
  Status init(StreamGateMode mode);
  // Makes `stream` wait until release(ticket) or a later ticket. `boundSeconds` bounds the
  // fallback kernel's wait; past it the kernel traps (the stream never runs on as if released).
  Status hold(cudaStream_t stream, uint32_t ticket, double boundSeconds);
  // Releases every stream held for `ticket` or an earlier one (host side).
  void release(uint32_t ticket);
  // Whether a fallback kernel gave up waiting.
  bool timedOut() const;
  // How streams are held now: the wait-value operation (true) or the polling kernel.
  bool usesWaitValue() const { return useWaitValue_; }

 private:
  uint32_t* counterHost_ = nullptr;
  uint32_t* counterDevice_ = nullptr;
  uint32_t* timedOutHost_ = nullptr;
  uint32_t* timedOutDevice_ = nullptr;
  StreamGateMode mode_ = StreamGateMode::kAuto;
  bool useWaitValue_ = true;
};

}  // namespace strata
