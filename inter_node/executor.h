// Executor: runs one rank's Plan over MPI non-blocking point-to-point, a ComputeBackend and a
// NodeOpRunner. It starts every step whose dependencies are done, polls outstanding messages,
// and never waits without a bound: a timeout names the collective, its sequence number, the step
// and the peer. The executor does not know which algorithm built the plan.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "kernels/common/bounded_wait.h"
#include "kernels/common/status.h"
#include "kernels/compute_backend.h"
#include "kernels/device_runtime.h"
#include "kernels/plan/node_op_runner.h"
#include "kernels/plan/plan.h"
#include "inter_node/staging_pipeline.h"

namespace strata {

// The call's pointers and element type, bound to the plan's buffer ids.
struct Bindings {
  const void* send = nullptr;
  void* recv = nullptr;
  void* scratch = nullptr;
  DataType type = strataFloat32;
  RedOp op = strataSum;

  char* base(BufferId b) const {
    switch (b) {
      case BufferId::kSend: return static_cast<char*>(const_cast<void*>(send));
      case BufferId::kRecv: return static_cast<char*>(recv);
      case BufferId::kScratch: return static_cast<char*>(scratch);
    }
    return nullptr;
  }
  void* at(const Slice& s) const {
    char* b = base(s.buffer);
    return b == nullptr ? nullptr : b + s.offset * dataTypeSize(type);
  }
};

// Per-phase timings of one run, keyed by the steps' labels ("node-reduce-scatter", "ring",
// ...): from the first step of a phase starting to its last step completing (strata-perf --phases).
struct PhaseTimes {
  struct Phase {
    std::string label;
    double start = 0, end = 0;  // seconds since the run began
  };
  std::vector<Phase> phases;  // in order of first start
  StageTimeline staging;      // runs on device buffers: every staged chunk's stages
  void record(const char* label, double start, double end);
};

struct ExecContext {
  MPI_Comm comm = MPI_COMM_NULL;
  int tagUpperBound = 32767;
  WaitPolicy wait;  // every wait's bound, spin and abort flag (kernels/common/bounded_wait.h)
  size_t maxMessageBytes = size_t{1} << 30;  // larger messages travel as several MPI messages
  ComputeBackend* compute = nullptr;
  NodeOpRunner* nodeOps = nullptr;
  const char* collective = "";
  unsigned long long seq = 0;
  PhaseTimes* phaseTimes = nullptr;  // optional instrumentation
  // Device buffers: the bindings are device memory, local steps run on the device's queues.
  DeviceRuntime* device = nullptr;
  bool deviceAwareMpi = false;  // MPI reads and writes device memory; else stage through pinned chunks
  StagingPool staging;          // the pinned pool staged messages pass through; the same on every rank
  // Appended to a timeout while this rank's own device work is what has not finished (a staged
  // chunk's copy, a send's inputs, the queues' drain): a cause the caller knows of (the progress
  // thread's queues may sit behind a held stream). Null: nothing appended.
  const char* deviceStallNote = nullptr;
  // For network simulators only (SimGrid's SMPI, perf/smpi_compare.sh), whose clock moves only
  // while every simulated rank blocks in MPI: a host run with nothing to start waits in
  // MPI_Waitsome instead of polling under `wait`. That wait has no bound of its own; the simulator
  // reports a deadlock itself. The library never sets it.
  bool blockInMpiWhenIdle = false;
};

// Whether `plan` sends or receives (a run on device buffers then needs the staging pool, unless
// MPI is device-aware).
bool hasMessages(const Plan& plan);
// A plan's tag folded into MPI's valid tags 0..upperBound (MPI_TAG_UB).
int foldTag(int tag, int upperBound);
// The tag a message of call `seq` carries: the plan's tag moved by the call's number (mod
// kCallsApart), a fixed stride of upperBound / kCallsApart apart, then folded as foldTag does. A
// message that an earlier call left unreceived (the call failed on its receiver: a peer refused it,
// src/core/peer_notices.h) then cannot complete one of the next kCallsApart - 1 calls in its place,
// where the bound leaves the stride room for the plans' tags (Open MPI's INT_MAX: 2^27 apart). A
// uniform move within a call: two of a plan's tags fold onto one (checkFoldedTags) with it as without.
constexpr int kCallsApart = 16;
int callTag(int planTag, unsigned long long seq, int upperBound);
// strataInvalidUsage when folding the plan's tags into [0, upperBound] puts two of its messages
// with one peer in one direction on one tag (MPI would match them by arrival). Checked once per
// plan, when it is built (src/core/collective_runner.cc); a refused plan is not cached.
Status checkFoldedTags(const Plan& plan, int upperBound);

// Reusable per-communicator state, so a call allocates nothing once warm.
class Executor {
 public:
  // A host copy's piece (copyInPieces): a few tens of microseconds of copying, against a test of the
  // messages (one MPI_Testsome) between pieces.
  static constexpr size_t kProgressBytes = size_t{256} << 10;

  Status run(const Plan& plan, const Bindings& bind, const ExecContext& ctx);

 private:
  Status startStep(const Plan& plan, StepId id, const Bindings& bind, const ExecContext& ctx);
  // A host copy in pieces of kProgressBytes, and between them, while messages are in flight, their
  // progress (progressMessages). A local step holds this thread: in one piece, none of this rank's
  // messages could complete and none that their completions make ready could start (a pipelined
  // broadcast's root, copying its send buffer to its receive buffer, held its next block's send
  // back for the copy's whole length). Reductions run whole: cut into pieces between which another
  // message's copy could run, a 2-rank 16 MiB ring allreduce ran 1.15-1.35x slower.
  Status copyInPieces(char* dst, const char* src, size_t bytes, ComputeBackend* compute);

  Status runNodeOp(const Plan& plan, StepId id, const Bindings& bind, const ExecContext& ctx);
  void complete(const Plan& plan, StepId id);
  // Device buffers (ctx.device): local steps on the device queues, messages staged or gated.
  Status startDeviceStep(const Plan& plan, StepId id, const Bindings& bind, const ExecContext& ctx);
  Status waitForInputs(const Plan& plan, StepId id, DeviceQueue queue);
  Status inputsDone(const Plan& plan, StepId id, bool* done);
  Status postMessage(const Plan& plan, StepId id, const Bindings& bind, const ExecContext& ctx, char* ptr);
  Status pollDevice(const Plan& plan, const Bindings& bind, const ExecContext& ctx, bool* progressed);
  Status finishDevice(const Plan& plan, const ExecContext& ctx);
  // Staged receives reduced chunk by chunk as they land (inter_node/executor_device.cc).
  StepId chunkReducerOf(const Plan& plan, StepId recv, size_t chunkBytes, size_t elem) const;
  Status reduceLandedChunks(const Plan& plan, const Bindings& bind);
  Status reduceChunk(const Plan& plan, StepId id, const StagingPipeline::Landed& chunk, const Bindings& bind);
  // With a timeline: the reduction of `bytes` enqueued on the compute queue since `begin` was
  // recorded.
  Status timeReduce(DeviceMarker begin, size_t bytes);
  Status markReduceStart(DeviceMarker* begin);
  Status pollReduceTimes(bool flush);
  // Starts a step that became ready, or queues it: node ops in pendingNodeOps_, host local steps
  // (and, inside a node op's wait, device local steps) in pendingLocal_.
  Status dispatchReady(const Plan& plan, StepId id, const Bindings& bind, const ExecContext& ctx, bool inNodeOp);
  // Completes the messages MPI finished (MPI_Waitsome when `block`); *moved: some did.
  Status testMessages(const Plan& plan, const Bindings& bind, const ExecContext& ctx, bool block, bool* moved);
  // Called while a node op waits for its team: progressMessages, so a peer that needs this rank's
  // messages can reach the op.
  static void progressDuringNodeOp(void* self);
  // Completes this rank's finished messages and posts the ones that became ready (a local step or
  // node op they make ready waits its turn): inside a node op's wait, and between a copy's pieces.
  Status progressMessages();
  Status failPending(const Plan& plan, const Bindings& bind, const ExecContext& ctx, Status why);

  std::vector<uint32_t> remaining_;       // unfinished predecessors per step
  std::vector<StepId> pendingNodeOps_;    // ready node ops, entered one at a time
  // Ready local steps of a host run (copy, reduce, divide: synchronous on this thread), run once
  // every ready message is posted.
  std::vector<StepId> pendingLocal_;
  std::vector<uint32_t> pendingRequests_; // outstanding MPI requests per step
  std::vector<StepId> ready_;
  size_t readyHead_ = 0;
  std::vector<MPI_Request> requests_;
  std::vector<StepId> requestStep_;
  std::vector<int> completedIndices_;
  std::vector<MPI_Status> statuses_;  // of the requests MPI_Testsome/Waitsome completed
  std::vector<double> stepStart_;  // with phase timing only
  // Device state of a run.
  std::vector<DeviceMarker> marker_;  // per step: its device work's marker (kNoMarker: none pending)
  std::vector<int8_t> markerQueue_;    // the device queue it was recorded on
  StagingPipeline staging_;           // staged messages (no device-aware MPI)
  std::vector<StagingPipeline::Completed> stagedDone_;
  std::vector<StagingPipeline::Landed> landed_;  // the last poll's
  std::vector<StepId> chunkReducer_;  // per staged receive: the reduction that takes its chunks as they land
  std::vector<StepId> chunkSource_;   // per reduction: the receive whose chunks it has begun to take
  std::vector<StagingPipeline::Landed> unreduced_;  // landed chunks of receives with a chunk reducer
  struct TimedReduce {
    DeviceMarker begin, end;
    double started;
    size_t bytes;
  };
  std::deque<TimedReduce> reduceTimes_;  // with a timeline: reductions not yet seen to finish
  StageTimeline* timeline_ = nullptr;
  std::vector<StepId> gated_;         // device-aware MPI steps waiting for their inputs
  // The run in progress, for progressMessages.
  const Plan* plan_ = nullptr;
  const Bindings* bind_ = nullptr;
  Status progressError_;
  size_t done_ = 0;
  const ExecContext* ctx_ = nullptr;
  std::chrono::steady_clock::time_point runStart_;
};

}  // namespace strata
