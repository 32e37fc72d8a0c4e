#include "intra_node/node_team.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "intra_node/node_op_layout.h"
#include "intra_node/slot_copies.h"
#include "kernels/plan/group.h"

namespace strata {

using Clock = std::chrono::steady_clock;

struct alignas(64) InlineLine {
  unsigned char data[kLineData];
  std::atomic<uint64_t> round;
};
struct InlineArea {
  InlineLine line[kInlineLines];
};

// When a member started a node op and when it finished reading the op's last round, on the host's
// monotonic clock (steady_clock: one clock for every process of the host). `round` (the op's last)
// is written around the times as a sequence lock's count (0 while they change), so a reader that
// finds the same round before and after has that op's times.
struct RunTimes {
  std::atomic<uint64_t> round;
  std::atomic<int64_t> startNs, endNs;
};
constexpr size_t kRunTimes = 8;  // the last node ops' times, by the team's count of ops mod 8

struct alignas(128) NodeTeam::Control {
  InlineArea inlined[2];
  std::atomic<uint64_t> ready;           // last round whose pieces this member published
  std::atomic<uint64_t> consumed;        // last round this member finished reading
  RunTimes runTimes[kRunTimes];
  std::atomic<uint64_t> dataGeneration;  // data segment generation this member has mapped
  std::atomic<int64_t> pid;
  char mailbox[NodeTeam::kMailboxBytes];  // exchange(): written before a barrier, read after it
};

struct NodeTeam::Header {
  uint64_t magic;
  uint32_t members;
  std::atomic<uint32_t> barrierCount;
  std::atomic<uint32_t> barrierSense;
  std::atomic<uint64_t> dataGeneration;  // published by member 0 when it grew the data segment
  std::atomic<uint64_t> dataSlotBytes;   // 0 with a new generation: member 0 could not grow it
  char dataName[112];
  std::atomic<uint32_t> gone;  // 1 + a member that aborted (leaves without its teardown's meetings); 0: none
};

namespace {

constexpr uint64_t kMagic = 0x5354524154414e54ull;  // "STRATANT"
constexpr size_t kHeaderBytes = 4096;
size_t controlBytes(int members) { return kHeaderBytes + static_cast<size_t>(members) * sizeof(NodeTeam::Control); }

// The progress a waiting member drives: its MPI messages, so a peer that needs them to reach this
// node op gets them while this member waits in it.
struct Progress {
  void (*fn)(void*) = nullptr;
  void* context = nullptr;
};

// A wait of the team: the library's bounded wait (kernels/common/bounded_wait.h), driving
// `progress` every 64 idle polls.
template <typename Done, typename What>
Status teamWait(const WaitPolicy& policy, const Progress* progress, Done done, What what) {
  Waiter waiter(policy);
  while (!done()) {
    if (progress != nullptr && progress->fn != nullptr && (waiter.polls() & 63) == 63) progress->fn(progress->context);
    STRATA_CHECK(waiter.idle(what));
  }
  return Status::Ok();
}

}  // namespace

NodeTeam::~NodeTeam() = default;

namespace {

int64_t nowNs() { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(); }

void publishRunTimes(RunTimes& t, uint64_t round, int64_t startNs) {
  t.round.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  t.startNs.store(startNs, std::memory_order_relaxed);
  t.endNs.store(nowNs(), std::memory_order_relaxed);
  t.round.store(round, std::memory_order_release);
}

// The start and end of the op whose last round is `round`; false when `t` holds another op's (or
// is being written).
bool runTimesOf(const RunTimes& t, uint64_t round, int64_t* startNs, int64_t* endNs) {
  if (t.round.load(std::memory_order_acquire) != round) return false;
  *startNs = t.startNs.load(std::memory_order_relaxed);
  *endNs = t.endNs.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return t.round.load(std::memory_order_relaxed) == round;
}

}  // namespace

// The store choice judges a run by the team's time, not this member's: its stores' kind shows in
// the time the members that read its pieces take (a streamed line reaches the reader from memory,
// not from the writer's cache), and a member that only writes (a gather's, a broadcast's root) is
// done before any of that. Each member publishes when it started the op and when it finished
// reading its last round; once all have, the run's time is from the last start to the last end:
// what the op took once the whole team was in it, the same figure on every member, so members that
// have recorded the same runs choose alike (each member timing from its own start, on 8 processes
// taking turns on 2 cores, caught its own late arrivals, and the members' kinds parted). Runs
// still being read stay pending (nothing here waits), so a member may choose before the last run
// is in; a run eight node ops old is dropped unrecorded.
void NodeTeam::settleStoreTimes(NodeOpLayout* layout) {
  const auto* ctl = reinterpret_cast<const Control*>(static_cast<const char*>(control_.data()) + kHeaderBytes);
  PendingStoreRuns& pending = layout->pendingStores;
  while (pending.count > 0) {
    const PendingStoreRuns::Run& r = pending.oldest();
    for (int j = 0; j < members_; ++j) {
      if (ctl[j].consumed.load(std::memory_order_acquire) < r.lastRound) return;  // still being read
    }
    int64_t start = 0, end = 0;
    bool known = true;
    for (int j = 0; j < members_ && known; ++j) {
      int64_t s = 0, e = 0;
      known = runTimesOf(ctl[j].runTimes[r.op % kRunTimes], r.lastRound, &s, &e);
      start = std::max(start, s);
      end = std::max(end, e);
    }
    if (known) layout->stores.record(r.stream, 1e-9 * static_cast<double>(end - start));  // else overwritten: no record
    pending.pop();
  }
}

void NodeTeam::attachDeviceSlots(std::vector<char*> bases, size_t slotBytes) {
  deviceSlotBase_ = std::move(bases);
  deviceSlotBytes_ = slotBytes;
}

char* NodeTeam::deviceSlot(int member, uint64_t round) const {
  return deviceSlotBase_[static_cast<size_t>(member)] + (round % 2) * deviceSlotBytes_;
}

Status NodeTeam::waitForDevice(const NodeOpCall& call, const std::string& what) {
  DeviceMarker m = kNoMarker;
  STRATA_CHECK(call.device->record(DeviceQueue::kCompute, &m));
  const Progress progressFn{call.progress, call.progressContext};
  Status queried;
  // The member's own device work only: no other process's kernel is waited for, so ranks
  // time-slicing one GPU cannot wait on each other inside a kernel.
  WaitPolicy policy = call.wait;
  policy.spinSeconds = 0;  // device work takes its time: yield the core from the first poll
  STRATA_CHECK(teamWait(policy, &progressFn, [&] {
        bool done = false;
        queried = call.device->query(m, &done);
        return done || !queried.ok();
      },
      [&] { return call.deviceStallNote != nullptr ? what + call.deviceStallNote : what; }));
  return queried;
}

Status NodeTeam::create(int members, int me, NodeBootstrap& boot, const NodeTeamOptions& options,
                        std::unique_ptr<NodeTeam>* out) {
  std::unique_ptr<NodeTeam> t(new NodeTeam());
  t->members_ = members;
  t->me_ = me;
  t->options_ = options;
  t->slotBytes_ = alignUp(std::max<size_t>(options.initialSlotBytes, 4096), 4096);
  // Control segment: member 0 creates it, everyone maps it, everyone unlinks it.
  for (int stage = 0; stage < 2; ++stage) {
    const bool isControl = stage == 0;
    const size_t bytes = isControl ? controlBytes(members) : static_cast<size_t>(members) * 2 * t->slotBytes_;
    SharedSegment& seg = isControl ? t->control_ : t->data_;
    std::string name;
    Status local;
    if (me == 0) {
      name = SharedSegment::uniqueName(isControl ? "ctl" : "data");
      local = SharedSegment::create(name, bytes, &seg);
      if (!local.ok()) name.clear();
    }
    STRATA_CHECK(boot.broadcastName(&name));
    if (name.empty()) {
      return me == 0 ? local
                     : makeStatus(strataSystemError, "node member 0 could not create the node team's shared segment");
    }
    if (me != 0) local = SharedSegment::open(name, bytes, &seg);
    bool allMapped = false;
    Status agreed = boot.agree(local.ok(), &allMapped);  // everyone has tried to map it
    SharedSegment::unlink(name);
    STRATA_CHECK(local);
    STRATA_CHECK(agreed);
    STRATA_REQUIRE(allMapped, strataSystemError, "another member of the node team could not map the shared segment %s",
                   name.c_str());
    if (isControl && me == 0) {
      Header* h = new (t->control_.data()) Header();
      h->magic = kMagic;
      h->members = static_cast<uint32_t>(members);
      for (int j = 0; j < members; ++j) {
        new (static_cast<char*>(t->control_.data()) + kHeaderBytes + static_cast<size_t>(j) * sizeof(Control)) Control();
      }
    }
    if (isControl) {  // the header is initialised before anyone uses it
      bool ignored = false;
      STRATA_CHECK(boot.agree(true, &ignored));
    }
  }
  auto* ctl = reinterpret_cast<Control*>(static_cast<char*>(t->control_.data()) + kHeaderBytes);
  ctl[me].pid.store(static_cast<int64_t>(getpid()));
  *out = std::move(t);
  return Status::Ok();
}

char* NodeTeam::slot(int member, uint64_t round) const {
  return static_cast<char*>(data_.data()) + (static_cast<size_t>(member) * 2 + (round % 2)) * slotBytes_;
}

Status NodeTeam::barrier(Clock::time_point deadline, const char* what) {
  auto* h = static_cast<Header*>(control_.data());
  // A member that aborted never arrives: waiting for it would last until the deadline.
  auto gone = [h] { return h->gone.load(std::memory_order_acquire); };
  auto goneStatus = [&] {
    return makeStatus(strataRemoteError, "the node barrier (%s): node member %u aborted and will not arrive", what, gone() - 1);
  };
  if (!barrierBroken_.ok()) return barrierBroken_;
  if (gone() != 0) return barrierBroken_ = goneStatus();
  barrierSense_ ^= 1u;
  const uint32_t sense = barrierSense_;
  if (h->barrierCount.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<uint32_t>(members_)) {
    h->barrierCount.store(0, std::memory_order_relaxed);
    h->barrierSense.store(sense, std::memory_order_release);
    return Status::Ok();
  }
  WaitPolicy policy;
  policy.timeoutSeconds = std::chrono::duration<double>(deadline - Clock::now()).count();
  policy.spinSeconds = options_.spinSeconds;
  const Status waited = teamWait(policy, nullptr,
                                 [&] { return h->barrierSense.load(std::memory_order_acquire) == sense || gone() != 0; },
                                 [&] { return strformat("the node barrier (%s): %d members", what, members_); });
  if (waited.ok() && h->barrierSense.load(std::memory_order_acquire) == sense) return Status::Ok();
  return barrierBroken_ = waited.ok() ? goneStatus() : waited;
}

void NodeTeam::markGone() {
  static_cast<Header*>(control_.data())->gone.store(static_cast<uint32_t>(me_) + 1, std::memory_order_release);
}

Status NodeTeam::exchange(const void* mine, size_t bytes, void* all, double timeoutSeconds) {
  STRATA_REQUIRE(bytes <= kMailboxBytes, strataInternalError, "node team exchange of %zu bytes (at most %zu)", bytes,
                 kMailboxBytes);
  auto* ctl = reinterpret_cast<Control*>(static_cast<char*>(control_.data()) + kHeaderBytes);
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeoutSeconds));
  std::memcpy(ctl[me_].mailbox, mine, bytes);
  STRATA_CHECK(barrier(deadline, "exchange: every member wrote its mailbox"));
  for (int j = 0; j < members_; ++j) std::memcpy(static_cast<char*>(all) + static_cast<size_t>(j) * bytes, ctl[j].mailbox, bytes);
  // Nobody writes its mailbox again before every member has read it.
  return barrier(deadline, "exchange: every member read the mailboxes");
}

Status NodeTeam::ensureSlotBytes(size_t bytes, const NodeOpCall& call) {
  if (bytes <= slotBytes_) return Status::Ok();
  auto* h = static_cast<Header*>(control_.data());
  auto* ctl = reinterpret_cast<Control*>(static_cast<char*>(control_.data()) + kHeaderBytes);
  const Progress progressFn{call.progress, call.progressContext};
  const Progress* progress = &progressFn;
  // Nobody may still be reading the old slots.
  for (int j = 0; j < members_; ++j) {
    STRATA_CHECK(teamWait(call.wait, progress, [&] { return ctl[j].consumed.load(std::memory_order_acquire) >= round_; },
                           [&] { return strformat("node member %d (rank %d) to finish round %llu before the segment grows", j,
                                                  call.desc->members[static_cast<size_t>(j)], static_cast<unsigned long long>(round_)); }));
  }
  const uint64_t gen = dataGeneration_ + 1;
  const size_t total = static_cast<size_t>(members_) * 2 * bytes;
  SharedSegment grown;
  std::string name;
  if (me_ == 0) {
    name = SharedSegment::uniqueName("data");
    Status s = SharedSegment::create(name, total, &grown);
    h->dataSlotBytes.store(s.ok() ? bytes : 0, std::memory_order_relaxed);
    if (s.ok()) std::snprintf(h->dataName, sizeof(h->dataName), "%s", name.c_str());
    h->dataGeneration.store(gen, std::memory_order_release);
    STRATA_CHECK(s);
  } else {
    STRATA_CHECK(teamWait(call.wait, progress, [&] { return h->dataGeneration.load(std::memory_order_acquire) >= gen; }, [&] { return std::string("node member 0 to grow the shared segment"); }));
    STRATA_REQUIRE(h->dataSlotBytes.load() == bytes, strataSystemError,
                   "node member 0 could not grow the shared segment to %zu bytes", total);
    name = h->dataName;
    Status s = SharedSegment::open(name, total, &grown);
    if (!s.ok()) {
      SharedSegment::unlink(name);
      return s;
    }
  }
  ctl[me_].dataGeneration.store(gen, std::memory_order_release);
  for (int j = 0; j < members_; ++j) {
    Status s = teamWait(call.wait, progress, [&] { return ctl[j].dataGeneration.load(std::memory_order_acquire) >= gen; },
                         [&] { return strformat("node member %d to map the grown shared segment", j); });
    if (!s.ok()) {
      SharedSegment::unlink(name);
      return s;
    }
  }
  SharedSegment::unlink(name);
  data_ = std::move(grown);
  slotBytes_ = bytes;
  dataGeneration_ = gen;
  return Status::Ok();
}

Status NodeTeam::run(const NodeOpCall& call) {
  const NodeOpDesc& d = *call.desc;
  const int n = static_cast<int>(d.members.size());
  const size_t es = dataTypeSize(call.type);
  auto* ctl = reinterpret_cast<Control*>(static_cast<char*>(control_.data()) + kHeaderBytes);
  const Progress progressFn{call.progress, call.progressContext};
  const Progress* progress = &progressFn;

  // Device buffers: the data plane is the device's (copies and reductions on its compute queue, the
  // slots in device memory shared over CUDA IPC when attached); the control plane stays here.
  const bool dev = call.device != nullptr;
  const bool ipc = dev && !deviceSlotBase_.empty();
  auto* layout = static_cast<NodeOpLayout*>(d.runnerState.get());
  if (layout == nullptr || layout->elemSize != es || layout->slotBytes != (ipc ? deviceSlotBytes_ : slotBytes_)) {
    STRATA_REQUIRE(n == members_ && d.me == me_, strataInternalError,
                   "%s: node op for %d members (me %d) on a team of %d (me %d)", d.what, n, d.me, members_, me_);
    STRATA_REQUIRE(d.writeCounts.size() == static_cast<size_t>(n) && d.writeShared.size() == static_cast<size_t>(n) &&
                       d.writes.size() == d.writeCounts[static_cast<size_t>(me_)].size(),
                   strataInternalError, "%s: inconsistent piece lists", d.what);
    // The slots grow (in band, every member together) to what this op wants, up to their maximum.
    const size_t maxShared = maxSharedBytes(d, es);
    if (!ipc && maxShared > slotBytes_ && slotBytes_ < options_.maxSlotBytes) {
      size_t want = slotBytes_;
      while (want < maxShared && want < options_.maxSlotBytes) want *= 2;
      STRATA_CHECK(ensureSlotBytes(std::min(want, options_.maxSlotBytes), call));
    }
    auto fresh = std::make_shared<NodeOpLayout>();
    STRATA_CHECK(buildNodeOpLayout(d, me_, es, ipc ? deviceSlotBytes_ : slotBytes_, dev, fresh.get()));
    layout = fresh.get();
    d.runnerState = fresh;
  }
  const size_t C = layout->rounds;
  // Plain or streaming stores for the large pieces (StoreChoice).
  bool stream = false;
  if (layout->largePieces) {
    settleStoreTimes(layout);
    stream = layout->stores.next();
  }
  const int64_t startedNs = layout->inlined ? 0 : nowNs();  // inline ops store nothing large

  std::vector<std::vector<size_t>>& partOffset = partOffset_;
  if (partOffset.size() < static_cast<size_t>(n)) partOffset.resize(static_cast<size_t>(n));
  const std::vector<std::vector<size_t>>& offsets = C == 1 ? layout->offsets : partOffset;

  ComputeBackend& compute = dev ? call.device->compute() : hostComputeBackend();
  std::vector<const void*>& srcs = srcs_;
  std::vector<char>& partial = partial_;  // running sum when a read has more sources than one reduce takes
  for (size_t c = 0; c < C; ++c) {
    const uint64_t s = round_ + 1 + c;
    if (C > 1) {
      layoutRound(d, me_, C, c, es, &partOffset[static_cast<size_t>(me_)]);
      for (int j : layout->readFrom) layoutRound(d, j, C, c, es, &partOffset[static_cast<size_t>(j)]);
    }
    auto member = [&](int j) { return d.members[static_cast<size_t>(j)]; };
    const bool inl = layout->inlined;
    // Inline pieces are staged through these (line data is not contiguous across lines).
    unsigned char staged[kMaxInlineMembers][kInlineBytes];
    auto area = [&](int j) -> char* {
      return inl ? reinterpret_cast<char*>(staged[j]) : ipc ? deviceSlot(j, s) : slot(j, s);
    };
    if (layout->sharesAnything) {
      // The slot was last used in round s - 2: everyone must be done reading it.
      if (s > 2) {
        for (int j = 0; j < n; ++j) {
          if (j == me_) continue;
          STRATA_CHECK(teamWait(call.wait, progress, [&] { return ctl[j].consumed.load(std::memory_order_acquire) + 2 >= s; }, [&] {
                                   return strformat("%s round %zu of %zu: node member %d (rank %d) to release slot %llu",
                                                    d.what, c + 1, C, j, member(j), static_cast<unsigned long long>(s % 2));
                                 }));
        }
      }
      char* mine = area(me_);
      for (size_t i = 0; i < d.writes.size(); ++i) {
        if (!d.writeShared[static_cast<size_t>(me_)][i]) continue;
        size_t off, cnt;
        partOf(d.writes[i].count, C, c, &off, &cnt);
        if (cnt) {
          const char* from = static_cast<char*>(call.at(d.writes[i])) + off * es;
          if (dev) STRATA_CHECK(compute.copy(mine + offsets[static_cast<size_t>(me_)][i], from, cnt * es));
          else if (inl) std::memcpy(mine + offsets[static_cast<size_t>(me_)][i], from, cnt * es);
          else copyIntoSlot(mine + offsets[static_cast<size_t>(me_)][i], from, cnt * es, stream);
        }
      }
    }
    if (inl) {
      InlineArea& out = ctl[me_].inlined[s % 2];
      const size_t lines = layout->inlineLinesOf[static_cast<size_t>(me_)];
      for (size_t k = 0; k < lines; ++k) {
        if (layout->sharesAnything) std::memcpy(out.line[k].data, staged[me_] + k * kLineData, kLineData);
        out.line[k].round.store(s, std::memory_order_release);
      }
    }
    if (dev && layout->sharesAnything) {
      STRATA_CHECK(waitForDevice(call, strformat("%s round %zu of %zu: this member's copies into its device slot", d.what,
                                                 c + 1, C)));
    }
    ctl[me_].ready.store(s, std::memory_order_release);
    for (int j : layout->waitFor) {
      const size_t lines = inl ? layout->inlineLinesOf[static_cast<size_t>(j)] : 0;
      STRATA_CHECK(teamWait(call.wait, progress, [&] {
                               if (!inl) return ctl[j].ready.load(std::memory_order_acquire) >= s;
                               bool all = true;  // poll every line: their transfers overlap
                               for (size_t k = 0; k < lines; ++k) {
                                 all &= ctl[j].inlined[s % 2].line[k].round.load(std::memory_order_acquire) >= s;
                               }
                               return all;
                             }, [&] {
                               return strformat("%s round %zu of %zu: node member %d (rank %d) to publish its pieces", d.what,
                                                c + 1, C, j, member(j));
                             }));
    }
    if (inl) {
      for (int j : layout->readFrom) {
        const InlineArea& in = ctl[j].inlined[s % 2];
        for (size_t k = 0; k < layout->inlineLinesOf[static_cast<size_t>(j)]; ++k) {
          std::memcpy(staged[j] + k * kLineData, in.line[k].data, kLineData);
        }
      }
    }
    for (const NodeRead& r : d.reads) {
      size_t off, cnt;
      partOf(r.dst.count, C, c, &off, &cnt);
      if (cnt == 0) continue;
      char* dst = static_cast<char*>(call.at(r.dst)) + off * es;
      srcs.resize(r.sources.size());
      for (size_t k = 0; k < r.sources.size(); ++k) {
        const NodePiece& src = r.sources[k];
        srcs[k] = src.member == static_cast<uint32_t>(me_)
                      ? static_cast<const char*>(call.at(d.writes[src.index])) + off * es
                      : area(static_cast<int>(src.member)) + offsets[src.member][src.index];
      }
      if (srcs.size() == 1) {
        if (dev) STRATA_CHECK(compute.copy(dst, srcs[0], cnt * es));
        else if (dst != srcs[0]) copyLines(dst, srcs[0], cnt * es);
        continue;
      }
      Status st = reduceInBatches(compute, dst, srcs.data(), srcs.size(), cnt, call.type, call.op, &partial);
      if (!st.ok()) return st.withContext(d.what);
    }
    if (dev) {
      STRATA_CHECK(waitForDevice(call, strformat("%s round %zu of %zu: this member's reads of the slots", d.what, c + 1, C)));
    }
    if (c + 1 == C && !inl) publishRunTimes(ctl[me_].runTimes[ops_ % kRunTimes], s, startedNs);  // inline ops store nothing large
    ctl[me_].consumed.store(s, std::memory_order_release);
  }
  round_ += C;
  if (layout->largePieces) layout->pendingStores.push({round_, ops_, stream});
  ++ops_;
  return Status::Ok();
}

}  // namespace strata
