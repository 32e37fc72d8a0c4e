// NodeOpRunner: the interface through which the executor runs a plan's node-op steps. The node
// team layer (intra_node/) implements it over shared memory or CUDA IPC; the executor only knows
// this interface, so the layers stay independent.
#pragma once

#include <chrono>

#include "kernels/common/status.h"
#include "kernels/plan/plan.h"

namespace strata {

struct NodeOpCall {
  const NodeOpDesc* desc = nullptr;
  const void* in = nullptr;   // bound pointer of the step's src slice
  void* out = nullptr;        // bound pointer of the step's dst slice
  size_t inCount = 0;         // elements
  size_t outCount = 0;
  DataType type = strataFloat32;
  RedOp op = strataSum;
  std::chrono::steady_clock::time_point deadline;
  const char* collective = "";
  unsigned long long seq = 0;
  StepId step = 0;
};

class NodeOpRunner {
 public:
  virtual ~NodeOpRunner() = default;
  // Runs the node op to completion or until the deadline; a timeout names the op and the peer.
  virtual Status run(const NodeOpCall& call) = 0;
};

}  // namespace strata
