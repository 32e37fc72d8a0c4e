// StagingPipeline: the messages of a plan on device buffers, through an MPI that cannot read device
// memory, in chunks that pass through a fixed pool of pinned host slots (DESIGN.md "MPI and device
// buffers"; 002, "Pipelining").
//
// A send's chunks each take a free send slot, are copied device-to-host on the to-host queue and
// are sent once their copy completes, at most kChunksOnWire of one message at a time; the slot is
// free again when the send completes. A receive's chunks each take a free receive slot only once
// the chunk has arrived (MPI_Improbe, then MPI_Imrecv into the slot) and are copied host-to-device
// on the to-device queue; the slot is free again when that copy completes. Each landed chunk is
// reported (poll's `landed`), so the executor can reduce it behind its copy while later chunks are
// still on the wire: the copy of chunk k+1, the transfer of chunk k and the reduction of chunk k-1
// overlap. A message's first chunks ramp up from kFirstChunk, doubling, to its steady chunk size.
//
// Why a fixed pool cannot deadlock: a receive slot holds only data already on this host, and
// frees by local device work alone, so a chunk a receiver has started to receive always lands. A
// send slot frees when its receiver takes the chunk, which it does once its receive step is ready;
// sends take slots in the order their steps became ready, and a plan never makes a receive wait
// for a later message from the same sender. The executor keeps the pipeline moving while it waits
// in a node op, so a peer waiting for this rank's chunks is never left waiting behind a node op.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/status.h"
#include "kernels/device_runtime.h"
#include "kernels/plan/plan.h"

namespace strata {

// The pool's shape: `slots` send slots and as many receive slots, `slotBytes` each. The same on
// every rank (a message is cut into chunks of at most slotBytes, and both ends must cut alike).
struct StagingPool {
  size_t slotBytes = size_t{2} << 20;
  int slots = 8;
  bool fixedChunks = false;  // every chunk slotBytes long, not stagingChunkBytes
  size_t bytes() const { return slotBytes * static_cast<size_t>(2 * slots); }
  // `chunkBytes` 0: 2 MiB slots, chunks sized per message; else slots of that size, every chunk
  // that long (STRATA_STAGE_CHUNK). `slots` per direction (STRATA_STAGE_SLOTS).
  static StagingPool sized(size_t chunkBytes, int slots);
};

// The chunk size of a staged message of `bytes` bytes: the pipeline device-to-host -> MPI ->
// host-to-device of k chunks takes about (k + 2) stage times plus k per-chunk overheads o, so
// T(c) = (m/c + 2)(c*beta + o), least at c = sqrt(m*o / (2*beta)). With o = 10 us (a copy, a marker
// and a message) and beta = 1/12.5 GB/s (the slower of PCIe staging and the network) that is
// sqrt(m * 62500) bytes: 256 KiB at 1 MiB, 2 MiB at 64 MiB; rounded down to 4 KiB, at least 64 KiB
// and at most `slotBytes`. A function of the size and the pool alone, so sender and receiver cut a
// message into the same chunks.
size_t stagingChunkBytes(size_t bytes, size_t slotBytes);

// The stages staged chunks pass through, for strata-perf --phases --mem device: each interval runs
// from the host enqueuing or posting one chunk's work to the host seeing it complete, in seconds
// since the run began. The network interval of a send runs from MPI_Isend to its completion, of a
// receive from matching the arrived chunk to its completion; the reduce intervals are the
// executor's (a chunk's share of a reduction, or a whole reduction step).
struct StageTimeline {
  enum Stage : int { kToHost = 0, kNetwork = 1, kToDevice = 2, kReduce = 3 };
  static constexpr int kStages = 4;
  static const char* name(int stage);
  struct Interval {
    double start, end;
    size_t bytes;
  };
  std::vector<Interval> intervals[kStages];
  size_t chunkReductions = 0;  // reductions of one landed chunk (the executor's)
};

class StagingPipeline {
 public:
  // Start of a run: the pool's memory (pinned, `pool.bytes()` long) and the device queues it copies
  // on; no chunk is longer than maxMessageBytes.
  void begin(char* memory, const StagingPool& pool, size_t maxMessageBytes, DeviceRuntime* dev, MPI_Comm comm);
  // Records every chunk's stages into `timeline` (null: none), in seconds since `origin`.
  void timeStages(StageTimeline* timeline, std::chrono::steady_clock::time_point origin);

  // The chunk length a message of `bytes` is cut into (the same on both ends).
  size_t chunkBytes(size_t bytes) const;

  // A ready send of `bytes` from device memory `src`, on MPI tag `tag` (the plan's `planTag` moved
  // for its call: inter_node/executor.h, callTag; descriptions name the plan's); its device inputs
  // are ordered before the to-host queue already.
  void addSend(StepId step, const char* src, size_t bytes, int peer, int tag, int planTag);
  // A ready receive into device memory `dst`; its device inputs are ordered before the to-device
  // queue already.
  void addRecv(StepId step, char* dst, size_t bytes, int peer, int tag, int planTag);

  struct Completed {
    StepId step;
    DeviceMarker marker;  // a receive: its last copy to the device (kNoMarker for a send)
  };
  // One chunk of a receive whose copy to the device has been enqueued: bytes [offset, +bytes) of
  // the step's destination are there once `marker` completes.
  struct Landed {
    StepId step;
    size_t offset, bytes;
    DeviceMarker marker;
  };
  // Moves every chunk as far as it goes without waiting; appends the receive chunks now on their
  // way to the device (in the order of their copies), and the steps whose every chunk is done (a
  // send: sent; a receive: copied to the device, behind `marker`).
  Status poll(bool* progressed, std::vector<Landed>* landed, std::vector<Completed>* completed);

  // After the device queues have drained: the last copies to the device seen to complete (their
  // slots free again, their timeline intervals closed).
  Status drained();
  // Nothing staged is in flight.
  bool idle() const;
  // A chunk's copy on the device has not been seen to complete (to the host, not yet sent; or to
  // the device): the device, not MPI, is what the pipeline waits on there.
  bool deviceCopiesPending() const;
  // The oldest step still in the pipeline (kNoStep when idle), for timeout messages.
  StepId oldestStep() const;
  // Where the pipeline's chunks are, for timeout messages: which stage a stalled run stopped in
  // (a copy the device did not finish, a send its receiver did not take, a chunk not yet arrived).
  std::string describe() const;
  // After a failure: releases the MPI requests (receives cancelled first). The caller drains the
  // device queues before the pool is reused.
  void abandon();

 private:
  struct Message {
    StepId step;
    char* device;  // the device side: source of a send, destination of a receive
    size_t bytes;
    size_t chunk;       // the steady chunk length
    size_t rampBytes;   // bytes in the first `ramp` chunks: kFirstChunk, twice that, ...
    uint32_t ramp;
    uint32_t chunks;
    uint32_t nextChunk = 0;  // the next chunk to take a slot (send) or to be matched (receive)
    uint32_t left;           // chunks not yet done
    uint32_t onWire = 0;     // a send's chunks posted to MPI and not yet complete
    int peer, tag;
    int planTag;  // the plan's, which descriptions name
    bool send;
  };
  struct Chunk {
    uint32_t message;
    uint32_t index;
    int slot;
    DeviceMarker marker = kNoMarker;  // the chunk's copy
    double started = 0;               // its current stage's start (with a timeline)
    bool copied = false;              // a send chunk: its copy to the host has completed
  };
  static constexpr uint32_t kChunksOnWire = 2;  // per message (postCopiedSends)
  static constexpr size_t kFirstChunk = size_t{64} << 10;  // the ramp's first chunk (addSend)
  char* slotMemory(int slot) const { return memory_ + static_cast<size_t>(slot) * pool_.slotBytes; }
  size_t chunkOffset(const Message& m, uint32_t index) const;
  size_t chunkLength(const Message& m, uint32_t index) const;
  Status startSendCopies(bool* progressed);
  Status postCopiedSends(bool* progressed);
  Status matchArrivedChunks(bool* progressed);
  Status testRequests(bool* progressed, std::vector<Landed>* landed, std::vector<Completed>* completed);
  double now() const;
  void recordStage(int stage, double start, size_t bytes);
  Status freeLandedSlots(bool* progressed);

  char* memory_ = nullptr;
  StagingPool pool_;
  size_t maxMessageBytes_ = 0;
  DeviceRuntime* dev_ = nullptr;
  MPI_Comm comm_ = MPI_COMM_NULL;
  StageTimeline* timeline_ = nullptr;
  std::chrono::steady_clock::time_point origin_;
  std::vector<Message> messages_;
  std::vector<int> freeSend_, freeRecv_;  // free slot numbers
  std::deque<uint32_t> sendQueue_;        // messages with chunks waiting for a send slot, in order
  std::deque<Chunk> copying_;             // send chunks being copied to the host, in queue order
  std::vector<uint32_t> receiving_;       // receive messages with chunks not yet matched
  std::vector<MPI_Request> requests_;     // parallel with requestChunk_
  std::vector<Chunk> requestChunk_;
  std::deque<Chunk> landing_;             // received chunks being copied to the device, in queue order
  std::vector<int> completedIndices_;
  std::vector<std::pair<int, int>> held_;  // (peer, tag) with a chunk held back in this pass
};

}  // namespace strata
