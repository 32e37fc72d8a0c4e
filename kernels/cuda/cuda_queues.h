// The CUDA DeviceRuntime: three non-blocking streams of one device (compute, to-host, to-device),
// markers as CUDA events from a pool, pinned host staging and device scratch grown on demand.
#pragma once

#include <memory>

#include "kernels/device_runtime.h"

namespace strata {

// Creates the queues (three non-blocking streams) on `device` (the caller's thread is left on that
// device). `poolScratch`: the scratch may come from the device's memory pool (stream-ordered
// allocation, where the device has it); false where something maps the scratch over CUDA IPC, which
// a pool's memory has no handle for (a device-aware MPI sending from it).
Status makeCudaQueues(int device, double timeoutSeconds, bool poolScratch, std::unique_ptr<DeviceRuntime>* out);

}  // namespace strata
