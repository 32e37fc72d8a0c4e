// The CUDA DeviceRuntime: three non-blocking streams of one device (compute, to-host, to-device),
// markers as CUDA events from a pool, pinned host staging and device scratch grown on demand.
#pragma once

#include <memory>

#include "kernels/device_runtime.h"

namespace strata {

// Creates the queues (three non-blocking streams) on `device` (the caller's thread is left on that device).
Status makeCudaQueues(int device, double timeoutSeconds, std::unique_ptr<DeviceRuntime>* out);

}  // namespace strata
