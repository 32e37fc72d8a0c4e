// PeerNodeTeam: what a member needs to run the node's peer collectives (kernels/cuda/peer_collectives.h)
// on its own stream: every member's peer buffer mapped over CUDA IPC (a signal area and two
// halves), the host-mapped abort and status words the kernels read and write, and the counters of
// barriers and rounds the members advance alike, call after call.
//
// Only for a node whose members each have their own GPU: setUp() exchanges the members' PCI
// addresses and declines (no error, `*out` left empty) when two share one, because a kernel of one
// process must never wait for another process's kernel on the same GPU (time-slicing may not run
// them at once).
//
// Calls on different streams are ordered: each launch waits for the previous one's completion
// event, so a half is never refilled while the previous call's kernel may still read it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "intra_node/device_slots.h"
#include "intra_node/node_team.h"
#include "kernels/cuda/peer_collectives.h"

namespace strata {

// The PCI address of the calling thread's current GPU: what tells two processes' GPUs apart.
struct PciAddress {
  int32_t domain = 0, bus = 0, device = 0;
  bool operator==(const PciAddress& o) const { return domain == o.domain && bus == o.bus && device == o.device; }
};
Status myPciAddress(PciAddress* out);

// How the members of a node hold their GPUs. `own`: every member runs on a GPU of its own (false
// where two share one or a member could not tell); `shared`: two members run on the same GPU.
struct NodeGpus {
  bool own = false;
  bool shared = false;
};
// Collective over the team and bounded; every member learns the same answer.
Status exchangeNodeGpus(NodeTeam& team, double timeoutSeconds, NodeGpus* out);

class PeerNodeTeam {
 public:
  ~PeerNodeTeam();  // frees the host-mapped words: a CUDA call that may wait for the device
  // Collective over the team, whose members each have their own GPU (exchangeNodeGpus).
  // `halfBytes`: each half's capacity (rounded down to 16 bytes). Its CUDA calls that may wait for
  // the device run as `steps` (DeviceSyncSteps). Where it fails after the size check, `out` holds
  // what was set up, for release().
  static Status setUp(NodeTeam& team, size_t halfBytes, double timeoutSeconds, const DeviceSyncSteps& steps,
                      std::unique_ptr<PeerNodeTeam>* out);

  // Enqueues one call on `stream`. An error from an earlier kernel (its timeout) is returned first.
  Status run(cuda::PeerCall call, DataType type, RedOp op, cudaStream_t stream);
  // The error a kernel reported through the status words (a timeout names the block, the member and
  // the barrier), or Ok.
  Status kernelStatus() const;
  // Whether a kernel stopped because a member refused its call (whose notice is then sure to come).
  bool stoppedByRefusal() const;
  // strataCommAbort: kernels waiting at a barrier return at their next poll.
  void abort();
  // This member refused call `seq`, or (`failed`) its communicator failed or was aborted: the
  // other members' kernels stop waiting for it (launchPeerStop), on a stream of its own, not waited
  // for. Any thread; nothing once release() has begun.
  Status stopPeers(uint64_t seq, bool failed);

  const cuda::PeerNode& node() const { return node_; }
  // The schedule of the last call (rounds and barriers: the device cost model's latency terms).
  const cuda::PeerSchedule& lastSchedule() const { return lastSchedule_; }
  // Unmaps the peers' buffers, meets the team, frees this member's (see DeviceSlots::release), each
  // CUDA step as one of `steps`. The host-mapped words stay until the destructor: an abort may still
  // write them.
  Status release(NodeTeam* team, double timeoutSeconds, bool abandon, const DeviceSyncSteps& steps);

 private:
  PeerNodeTeam() = default;
  std::unique_ptr<DeviceSlots> slots_;
  cuda::PeerNode node_;
  uint32_t* hostWords_ = nullptr;  // pinned and mapped: [0] abort, then the status words
  bool wordsLeaked_ = false;       // a kernel outlived release(): the words are never freed
  uint32_t barriers_ = 0;
  uint64_t rounds_ = 0;
  cudaEvent_t last_ = nullptr;  // the previous call's completion
  // stopPeers' kernels, launched by the communicator's calls or by an abort on another thread;
  // release() closes them (under stopMutex_) and waits for those launched before.
  cudaStream_t stopStream_ = nullptr;
  std::mutex stopMutex_;  // also over last_ and launched_, which stopPeers reads on an aborting thread
  cudaEvent_t stopped_ = nullptr;  // the last stop kernel's completion
  bool stopPending_ = false;       // a stop kernel launched since the last call's: that call waits for it
  bool stopsLaunched_ = false;
  bool stopsClosed_ = false;
  cuda::PeerSchedule lastSchedule_;
  bool launched_ = false;
};

}  // namespace strata
