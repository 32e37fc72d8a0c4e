// Where a buffer lives: host or device, from CUDA's pointer attributes when CUDA is built in and a
// device is present; host otherwise.
#pragma once

#include <strata/strata.h>

#include "kernels/common/bounded_wait.h"
#include "kernels/common/status.h"
#include "kernels/compute_backend.h"

namespace strata {

// Whether this process can use a CUDA device (built with CUDA, driver and device present).
bool cudaAvailable();
// Host for host memory (pageable, pinned, or registered), device for device or managed memory.
MemorySpace classifyPointer(const void* ptr);
// Waits for prior work on `stream` (host collectives called with a non-null stream; a null stream
// means no wait). A bounded, abortable wait (strataTimeout naming the stream's work).
Status synchronizeStream(cudaStream_t stream, const WaitPolicy& policy);
// Waits, bounded, for the work queued on `stream` so far; stream 0 is the legacy default stream,
// whose work the library's non-blocking streams would not wait for by themselves.
Status waitForStreamWork(cudaStream_t stream, const WaitPolicy& policy);

}  // namespace strata
