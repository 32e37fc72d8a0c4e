// NodeTeam: the ranks of one node and the shared memory they exchange data through.
//
// Two POSIX shared segments per team: a small control segment (one cache line of counters per
// member, a sense-reversing barrier, the data segment's name and generation) and a data segment
// with two slots per member. Both are unlinked as soon as every member has mapped them. Host
// buffers are private to each process, so a node op moves data in rounds: in round s a member
// copies its next part of every piece another member needs into its slot s mod 2, publishes
// `ready = s`, waits for the members it reads from, reduces or copies their parts straight out of
// their slots into its own buffers, and publishes `consumed = s`; before reusing a slot it waits
// until everyone has consumed the round that last used it. Members thus overlap one member's
// copy-in with another's reduction and copy-out, and a member's own pieces never pass through
// the segment at all. Every wait is bounded and names the node op, the round and the member.
//
// A single-copy path would read peers' private buffers directly with process_vm_readv (Linux
// cross-memory attach): it saves the copy-in of the shared pieces, about a third of the memory
// traffic of a large reduce-scatter + allgather. It needs ptrace permission between the ranks, and
// where measured (a 2-core Debian VM without Yama, 2026-11) it moved 16 MiB at 5.3 GB/s against
// 10 GB/s for memcpy into the segment, so the segment path stays the default here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "intra_node/shared_segment.h"
#include "kernels/compute_backend.h"
#include "kernels/plan/node_op_runner.h"

namespace strata {

struct NodeOpLayout;

// How the members of a team find each other's segment at creation: the communicator implements it
// over the node's MPI communicator; tests implement it over fork.
class NodeBootstrap {
 public:
  virtual ~NodeBootstrap() = default;
  // Member 0 passes its name in; every member gets it back ("" from member 0 means it failed).
  virtual Status broadcastName(std::string* name) = 0;
  // Every member reports whether its step worked; all learn whether all did.
  virtual Status agree(bool ok, bool* allOk) = 0;
};

struct NodeTeamOptions {
  // Per member and slot. The segment starts small and grows on demand to the size that moved data
  // fastest where measured (256 KiB parts: large enough to amortise a round's handshake, small
  // enough that a part is still in cache when the other members read it).
  size_t initialSlotBytes = size_t{64} << 10;
  size_t maxSlotBytes = size_t{256} << 10;
  double setupTimeoutSeconds = 60;
  // How long the team's own waits (barrier, exchange) spin before yielding the core; a node op's
  // waits take the call's policy (NodeOpCall::wait). See kernels/common/bounded_wait.h.
  double spinSeconds = 5e-3;
};

class NodeTeam final : public NodeOpRunner {
 public:
  ~NodeTeam() override;
  // Collective over the team (through `boot`): maps the segments, then unlinks their names.
  static Status create(int members, int me, NodeBootstrap& boot, const NodeTeamOptions& options,
                       std::unique_ptr<NodeTeam>* out);

  Status run(const NodeOpCall& call) override;
  // Sense-reversing barrier over the shared control segment, bounded by `deadline`; it ends at once
  // (strataRemoteError) where a member has aborted (markGone), which would never arrive.
  Status barrier(std::chrono::steady_clock::time_point deadline, const char* what);
  // This member aborted: it leaves without meeting the others again (its teardown skips the
  // barriers theirs hold), so their barriers stop waiting for it.
  void markGone();

  // Every member's `bytes` (at most kMailboxBytes) from `mine`, in member order into `all`, through
  // the control segment. Collective over the team, bounded by `timeoutSeconds`.
  static constexpr size_t kMailboxBytes = 128;
  Status exchange(const void* mine, size_t bytes, void* all, double timeoutSeconds);

  // Device buffers over CUDA IPC: every member's two device slots of `slotBytes`, mapped into this
  // process (index = team member; intra_node/device_slots.h owns them). Empty `bases` detaches.
  void attachDeviceSlots(std::vector<char*> bases, size_t slotBytes);

  int size() const { return members_; }
  int me() const { return me_; }
  size_t slotBytes() const { return slotBytes_; }

  struct Control;  // in shared memory
  struct Header;

 private:
  NodeTeam() = default;
  Status ensureSlotBytes(size_t bytes, const NodeOpCall& call);
  char* slot(int member, uint64_t round) const;
  char* deviceSlot(int member, uint64_t round) const;
  // Waits (bounded) until the device work this member enqueued so far has completed.
  Status waitForDevice(const NodeOpCall& call, const std::string& what);
  // Records the team times of this op's earlier runs that every member has finished reading.
  void settleStoreTimes(NodeOpLayout* layout);

  int members_ = 0;
  int me_ = 0;
  NodeTeamOptions options_;
  SharedSegment control_;
  SharedSegment data_;
  size_t slotBytes_ = 0;
  uint64_t dataGeneration_ = 0;
  uint64_t round_ = 0;  // rounds this team has run; the same on every member between node ops
  uint64_t ops_ = 0;    // node ops this team has run; likewise
  uint32_t barrierSense_ = 0;
  // A barrier failed (a member gone, or the deadline passed): the team's count and sense no longer
  // match this member's, so every later barrier fails too, with this.
  Status barrierBroken_;
  // Reused between calls, so a node op allocates nothing once warm.
  std::vector<std::vector<size_t>> partOffset_;
  std::vector<const void*> srcs_;
  std::vector<char> partial_;
  std::vector<char*> deviceSlotBase_;
  size_t deviceSlotBytes_ = 0;
};

}  // namespace strata
