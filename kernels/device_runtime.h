// DeviceRuntime: the asynchronous machinery a plan on device buffers runs on.
//
// Three in-order device queues (CUDA streams; "lane" is reserved for the MPI lanes): compute
// (kernels), to-host (device-to-host copies into pinned staging) and to-device (host-to-device
// copies out of it), markers recorded on a queue and queried from the host or waited for by
// another queue, and pinned host memory for staging. The executor drives every plan on device
// buffers through this interface only (kernels/cuda/cuda_queues.cc; in CI on the CUDA simulator
// of tests/cuda_sim).
//
// Memory is reserved before a run, never during one: CUDA's allocation calls synchronise the
// whole device, and a run executes while the caller's stream is held by Strata's wait (a device
// that must go idle while a stream waits for the thread that is allocating never gets there).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/status.h"
#include "kernels/compute_backend.h"

namespace strata {

enum class DeviceQueue : int { kCompute = 0, kToHost = 1, kToDevice = 2 };
constexpr int kNumDeviceQueues = 3;
inline const char* deviceQueueName(DeviceQueue queue) {
  switch (queue) {
    case DeviceQueue::kCompute: return "compute";
    case DeviceQueue::kToHost: return "to-host";
    case DeviceQueue::kToDevice: return "to-device";
  }
  return "?";
}

using DeviceMarker = uint32_t;
constexpr DeviceMarker kNoMarker = UINT32_MAX;

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;

  // The compute backend whose steps run on the compute queue.
  virtual ComputeBackend& compute() = 0;
  // Enqueues a copy of `bytes` on `queue` (to-host: device to pinned host; to-device: the reverse).
  virtual Status copyAsync(DeviceQueue queue, void* dst, const void* src, size_t bytes) = 0;
  // Records a marker on `queue`: it completes when everything enqueued on the queue before it has.
  virtual Status record(DeviceQueue queue, DeviceMarker* marker) = 0;
  // Makes `queue` wait (on the device, the host does not block) for `marker`.
  virtual Status waitOn(DeviceQueue queue, DeviceMarker marker) = 0;
  // Whether `marker` has completed (never blocks).
  virtual Status query(DeviceMarker marker, bool* done) = 0;
  // Start of a run: markers of the previous run may be reused.
  virtual void resetMarkers() = 0;
  // Whether the reserved staging and scratch hold a run that needs these sizes.
  virtual bool fits(size_t stagingBytes, size_t scratchBytes) const = 0;
  // Grows the staging and scratch to at least these sizes. Only while no run is in flight and no
  // stream waits for one (the device path's allocation gate), except as below.
  virtual Status reserve(size_t stagingBytes, size_t scratchBytes) = 0;
  // Whether reserve() grows the scratch alone without waiting for the device (stream-ordered
  // allocation on these queues' own stream): then only this runtime's own runs need have finished.
  virtual bool growsScratchInStreamOrder() const = 0;
  // The reserved pinned host staging (an error if smaller than `bytes`: reserve first).
  virtual Status staging(size_t bytes, char** base) = 0;
  // The reserved device scratch (an error if smaller than `bytes`).
  virtual Status scratch(size_t bytes, void** base) = 0;
};

}  // namespace strata
