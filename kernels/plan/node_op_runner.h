// NodeOpRunner: the interface through which the executor runs a plan's node-op steps. The node
// team layer (intra_node/) implements it over shared memory or CUDA IPC; the executor only knows
// this interface, so the layers stay independent.
#pragma once

#include <atomic>
#include <chrono>

#include "kernels/common/bounded_wait.h"
#include "kernels/common/status.h"
#include "kernels/device_runtime.h"
#include "kernels/plan/plan.h"

namespace strata {

struct NodeOpCall {
  const NodeOpDesc* desc = nullptr;
  char* bases[kNumBufferIds] = {nullptr, nullptr, nullptr};  // the call's send, recv, scratch
  DataType type = strataFloat32;
  RedOp op = strataSum;
  WaitPolicy wait;  // every wait's bound (counted from when that wait starts), spin and abort flag
  const char* collective = "";
  unsigned long long seq = 0;
  StepId step = 0;
  const char* label = "";                 // the step's phase label, for messages
  void (*progress)(void*) = nullptr;      // called while waiting (drives MPI progress)
  void* progressContext = nullptr;
  // Device buffers: copies and reductions run on this runtime's compute lane (after the plan's
  // earlier device work, which the executor orders before them); null for host buffers.
  DeviceRuntime* device = nullptr;
  // Appended to a timeout of a wait for this member's own device work (ExecContext's).
  const char* deviceStallNote = nullptr;

  void* at(const Slice& s) const {
    char* b = bases[static_cast<int>(s.buffer)];
    return b == nullptr ? nullptr : b + s.offset * dataTypeSize(type);
  }
};

class NodeOpRunner {
 public:
  virtual ~NodeOpRunner() = default;
  // Runs the node op to completion or until the deadline; a timeout names the op and the peer.
  virtual Status run(const NodeOpCall& call) = 0;
};

}  // namespace strata
