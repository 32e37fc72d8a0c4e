// A DeviceRuntime whose "device" is host memory and whose lanes are host threads, each running its
// queue in order, with optional random delays. It exists so the executor's device path (lanes,
// markers, staged messages) runs, and can fail, on machines without a GPU: STRATA_DEVICE_EMULATION=1
// routes host-buffer collectives through it (tests/CMakeLists.txt runs the MPI matrix that way).
#pragma once

#include <memory>

#include "kernels/device_runtime.h"

namespace strata {

struct EmulatedDeviceOptions {
  // Sleep a random 0..jitterMicros before each queued task, so a missing wait shows up as a wrong
  // result instead of passing by luck of the schedule.
  unsigned jitterMicros = 0;
  unsigned seed = 1;
  double timeoutSeconds = 300.0;  // bound on a lane's wait for a marker
};

std::unique_ptr<DeviceRuntime> makeEmulatedDevice(const EmulatedDeviceOptions& options);

}  // namespace strata
