// DeviceRuntime: the asynchronous machinery a plan on device buffers runs on.
//
// Three in-order queues (lanes): compute (kernels), to-host (device-to-host copies into pinned
// staging) and to-device (host-to-device copies out of it), markers recorded on a lane and
// queried from the host or waited for by another lane, and pinned host memory for staging. The
// executor drives every plan on device buffers through this interface only, so the same state
// machine runs on CUDA (kernels/cuda/cuda_runtime_lanes.cc) and on an emulation whose lanes are
// host threads (kernels/host/emulated_device.cc): CI, which has no GPU, runs the staging pipeline
// and its ordering for real.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/status.h"
#include "kernels/compute_backend.h"

namespace strata {

enum class DeviceLane : int { kCompute = 0, kToHost = 1, kToDevice = 2 };
constexpr int kNumDeviceLanes = 3;
const char* deviceLaneName(DeviceLane lane);

using DeviceMarker = uint32_t;
constexpr DeviceMarker kNoMarker = UINT32_MAX;

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;

  // The compute backend whose steps run on the compute lane.
  virtual ComputeBackend& compute() = 0;
  // Enqueues a copy of `bytes` on `lane` (to-host: device to pinned host; to-device: the reverse).
  virtual Status copyAsync(DeviceLane lane, void* dst, const void* src, size_t bytes) = 0;
  // Records a marker on `lane`: it completes when everything enqueued on the lane before it has.
  virtual Status record(DeviceLane lane, DeviceMarker* marker) = 0;
  // Makes `lane` wait (on the device, the host does not block) for `marker`.
  virtual Status waitOn(DeviceLane lane, DeviceMarker marker) = 0;
  // Whether `marker` has completed (never blocks).
  virtual Status query(DeviceMarker marker, bool* done) = 0;
  // Start of a run: markers of the previous run may be reused.
  virtual void resetMarkers() = 0;
  // Pinned host memory of at least `bytes`, valid until the next call (grown on demand).
  virtual Status staging(size_t bytes, char** base) = 0;
  // Device memory for a plan's scratch of at least `bytes`, valid until the next call.
  virtual Status scratch(size_t bytes, void** base) = 0;
};

}  // namespace strata
