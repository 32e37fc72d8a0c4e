#include "intra_node/node_team.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/plan/group.h"

namespace strata {

using Clock = std::chrono::steady_clock;

// Tiny node ops (a one-shot allreduce of a few values) keep their pieces in cache lines that each
// carry the round number too (as NCCL's LL128 protocol does): the reader polls every line it needs
// at once, and a line whose round is current holds current data (the writer publishes each line's
// round after its data, with release order). One set of lines per slot parity.
constexpr size_t kInlineLines = 4;
constexpr size_t kLineData = 56;
constexpr size_t kInlineBytes = kInlineLines * kLineData;
constexpr size_t kMaxInlineMembers = 16;
struct alignas(64) InlineLine {
  unsigned char data[kLineData];
  std::atomic<uint64_t> round;
};
struct InlineArea {
  InlineLine line[kInlineLines];
};

struct alignas(128) NodeTeam::Control {
  InlineArea inlined[2];
  std::atomic<uint64_t> ready;           // last round whose pieces this member published
  std::atomic<uint64_t> consumed;        // last round this member finished reading
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
};

namespace {

constexpr uint64_t kMagic = 0x5354524154414e54ull;  // "STRATANT"
constexpr size_t kHeaderBytes = 4096;
constexpr size_t kAlign = 64;

size_t alignUp(size_t x, size_t a) { return (x + a - 1) / a * a; }

size_t controlBytes(int members) { return kHeaderBytes + static_cast<size_t>(members) * sizeof(NodeTeam::Control); }

}  // namespace

namespace {

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

// Copies into and out of the slots. A plain vector loop: glibc's memcpy picks `rep movsb` for these
// sizes, which ran at a fifth of the speed here when the lines had just been written (or read) by
// another core (2 GB/s against 10 GB/s on a 2-core EPYC VM, 64 KiB parts).
void copyLines(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    uint64_t v[8];
    std::memcpy(v, s + i, 64);
    std::memcpy(d + i, v, 64);
  }
  if (i < bytes) std::memcpy(d + i, s + i, bytes - i);
}

// Large pieces may go into the slots with streaming stores. A plain store must first take the line
// from the core that read it last round; on the 2-core EPYC VM that transfer alone ran at 2.5-4
// GB/s for minutes at a time (the host moves the VM's cores around), against 11-15 GB/s streamed,
// while in the machine's good spells plain stores made a 1 MiB allreduce 20% faster (the reader
// finds the lines in cache). Hence a choice per op, measured (NodeOpLayout); streamed lines never
// pay off for small pieces (16 KiB: the reader's 4.5 against 12 GB/s).
constexpr size_t kStreamMinBytes = 64 * 1024;

void copyIntoSlot(void* dst, const void* src, size_t bytes, bool stream) {
#if defined(__SSE2__)
  if (stream && bytes >= kStreamMinBytes && reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
    auto* d = static_cast<__m128i*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    const size_t lines = bytes / 64;
    for (size_t k = 0; k < lines; ++k) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 64 * k));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 64 * k + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 64 * k + 32));
      const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 64 * k + 48));
      _mm_stream_si128(d + 4 * k, a);
      _mm_stream_si128(d + 4 * k + 1, b);
      _mm_stream_si128(d + 4 * k + 2, c);
      _mm_stream_si128(d + 4 * k + 3, e);
    }
    if (lines * 64 < bytes) std::memcpy(reinterpret_cast<char*>(dst) + lines * 64, s + lines * 64, bytes - lines * 64);
    _mm_sfence();  // streaming stores are weakly ordered: drain them before the round is published
    return;
  }
#else
  (void)stream;
#endif
  copyLines(dst, src, bytes);
}

// Part `c` of `count` elements cut into `C` nearly equal parts.
inline void partOf(size_t count, size_t C, size_t c, size_t* offset, size_t* n) {
  const size_t base = count / C, extra = count % C;
  *offset = c * base + std::min(c, extra);
  *n = base + (c < extra ? 1 : 0);
}

}  // namespace

NodeTeam::~NodeTeam() = default;

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
      [&] { return what; }));
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
  return teamWait(policy, nullptr, [&] { return h->barrierSense.load(std::memory_order_acquire) == sense; },
                  [&] { return strformat("the node barrier (%s): %d members", what, members_); });
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

// What run() needs to know about a node op beyond its description, for one element size and slot
// size: computed on the first call, kept on the (cached) description.
struct NodeOpLayout {
  size_t elemSize = 0, slotBytes = 0;
  size_t rounds = 1;
  bool sharesAnything = false;
  bool inlined = false;  // one round whose pieces fit every member's inline lines
  std::vector<size_t> inlineLinesOf;  // per member: lines its pieces occupy
  std::vector<int> waitFor;   // members whose pieces I read (all others for a barrier)
  std::vector<int> readFrom;  // members whose slots I read
  // Single-round ops: offset of every member's shared pieces in its slot.
  std::vector<std::vector<size_t>> offsets;
  // Large pieces go into the slot with plain or with streaming stores, whichever ran this op faster
  // lately (copyIntoSlot says why it varies); the other kind is retried now and then.
  bool largePieces = false;
  double seconds[2] = {0, 0};  // running average of the whole op per kind (0 plain, 1 streaming)
  uint32_t tries[2] = {0, 0};
  uint64_t runs = 0;
};

namespace {

// Offsets of member j's shared parts in round c of C.
void layoutRound(const NodeOpDesc& d, int j, size_t C, size_t c, size_t es, std::vector<size_t>* offs) {
  offs->assign(d.writeCounts[static_cast<size_t>(j)].size(), 0);
  size_t pos = 0;
  for (size_t i = 0; i < offs->size(); ++i) {
    if (!d.writeShared[static_cast<size_t>(j)][i]) continue;
    size_t off, cnt;
    partOf(d.writeCounts[static_cast<size_t>(j)][i], C, c, &off, &cnt);
    (*offs)[i] = pos;
    pos += alignUp(cnt * es, kAlign);
  }
}

}  // namespace

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
    // Bytes each member puts into its slot, and the slot size this op wants.
    size_t maxShared = 0;
    for (int j = 0; j < n; ++j) {
      size_t total = 0;
      for (size_t i = 0; i < d.writeCounts[static_cast<size_t>(j)].size(); ++i) {
        if (d.writeShared[static_cast<size_t>(j)][i]) total += alignUp(d.writeCounts[static_cast<size_t>(j)][i] * es, kAlign);
      }
      maxShared = std::max(maxShared, total);
    }
    if (!ipc && maxShared > slotBytes_ && slotBytes_ < options_.maxSlotBytes) {
      size_t want = slotBytes_;
      while (want < maxShared && want < options_.maxSlotBytes) want *= 2;
      STRATA_CHECK(ensureSlotBytes(std::min(want, options_.maxSlotBytes), call));
    }
    auto fresh = std::make_shared<NodeOpLayout>();
    layout = fresh.get();
    d.runnerState = fresh;
    layout->elemSize = es;
    const size_t slotBytes = ipc ? deviceSlotBytes_ : slotBytes_;
    layout->slotBytes = slotBytes;
    // Rounds: the fewest in which every member's parts fit its slot.
    size_t C = std::max<size_t>(1, (maxShared + slotBytes - 1) / slotBytes);
    auto fits = [&](size_t rounds) {
      for (int j = 0; j < n; ++j) {
        size_t used = 0;
        for (size_t i = 0; i < d.writeCounts[static_cast<size_t>(j)].size(); ++i) {
          if (!d.writeShared[static_cast<size_t>(j)][i]) continue;
          size_t off, cnt;
          partOf(d.writeCounts[static_cast<size_t>(j)][i], rounds, 0, &off, &cnt);  // part 0 is the largest
          used += alignUp(cnt * es, kAlign);
        }
        if (used > slotBytes) return false;
      }
      return true;
    };
    while (!fits(C)) ++C;
    layout->rounds = C;
    for (size_t i = 0; i < d.writes.size(); ++i) {
      if (!dev && d.writeShared[static_cast<size_t>(me_)][i] && d.writes[i].count * es / C >= kStreamMinBytes) {
        layout->largePieces = true;
      }
    }
    for (size_t i = 0; i < d.writes.size(); ++i) layout->sharesAnything |= d.writeShared[static_cast<size_t>(me_)][i] != 0;
    std::vector<uint8_t> readsFrom(static_cast<size_t>(n), 0);
    for (const NodeRead& r : d.reads) {
      STRATA_REQUIRE(!r.sources.empty(), strataInternalError, "%s: a read without sources", d.what);
      for (const NodePiece& src : r.sources) {
        STRATA_REQUIRE(src.member < static_cast<uint32_t>(n) && src.index < d.writeCounts[src.member].size() &&
                           d.writeCounts[src.member][src.index] == r.dst.count &&
                           (src.member == static_cast<uint32_t>(me_) || d.writeShared[src.member][src.index]),
                       strataInternalError, "%s: read of %zu elements from piece %u of member %u does not match", d.what,
                       r.dst.count, src.index, src.member);
        if (src.member != static_cast<uint32_t>(me_)) readsFrom[src.member] = 1;
      }
    }
    for (int j = 0; j < n; ++j) {
      if (j == me_) continue;
      if (readsFrom[static_cast<size_t>(j)]) layout->readFrom.push_back(j);
      if (readsFrom[static_cast<size_t>(j)] || d.fullSync) layout->waitFor.push_back(j);
    }
    if (C == 1) {
      layout->offsets.resize(static_cast<size_t>(n));
      for (int j = 0; j < n; ++j) layoutRound(d, j, 1, 0, es, &layout->offsets[static_cast<size_t>(j)]);
      // Inline when every member's pieces, packed, fit its lines (offsets count line data bytes),
      // for teams small enough to stage everyone's lines on the stack.
      layout->inlined = !dev && n <= static_cast<int>(kMaxInlineMembers);
      layout->inlineLinesOf.assign(static_cast<size_t>(n), 1);
      for (int j = 0; j < n && layout->inlined; ++j) {
        size_t pos = 0;
        for (size_t i = 0; i < d.writeCounts[static_cast<size_t>(j)].size(); ++i) {
          if (!d.writeShared[static_cast<size_t>(j)][i]) continue;
          layout->offsets[static_cast<size_t>(j)][i] = pos;
          pos += d.writeCounts[static_cast<size_t>(j)][i] * es;
        }
        layout->inlined = pos <= kInlineBytes;
        layout->inlineLinesOf[static_cast<size_t>(j)] = std::max<size_t>(1, (pos + kLineData - 1) / kLineData);
      }
      if (!layout->inlined) {
        for (int j = 0; j < n; ++j) layoutRound(d, j, 1, 0, es, &layout->offsets[static_cast<size_t>(j)]);
      }
    }
  }
  const size_t C = layout->rounds;
  // Plain or streaming stores: two tries of each first, then the faster, the other every 16th run.
  bool stream = false;
  Clock::time_point started{};
  if (layout->largePieces) {
    const uint64_t r = layout->runs++;
    if (r < 4) stream = r >= 2;
    else stream = (layout->seconds[1] < layout->seconds[0]) != (r % 16 == 15);
    started = Clock::now();
  }

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
      // On the device the batches' running sum would have to outlive this loop in device memory.
      STRATA_REQUIRE(!dev || srcs.size() <= static_cast<size_t>(kMaxReduceInputs), strataInvalidUsage,
                     "%s: %zu members' pieces in one reduction on device buffers (at most %d)", d.what, srcs.size(),
                     kMaxReduceInputs);
      // Left to right in batches the compute backend takes; intermediate sums stay in scratch so an
      // output that is also one of my pieces is written last.
      const size_t total = srcs.size();
      size_t done = std::min<size_t>(total, kMaxReduceInputs);
      void* target = done == total ? static_cast<void*>(dst) : nullptr;
      if (target == nullptr) {
        partial.resize(cnt * es);
        target = partial.data();
      }
      Status st = compute.reduce(target, srcs.data(), static_cast<int>(done), cnt, call.type, call.op);
      while (st.ok() && done < total) {
        const size_t take = std::min<size_t>(total - done, kMaxReduceInputs - 1);
        const void* batch[kMaxReduceInputs];
        batch[0] = partial.data();
        for (size_t k = 0; k < take; ++k) batch[k + 1] = srcs[done + k];
        done += take;
        st = compute.reduce(done == total ? static_cast<void*>(dst) : partial.data(), batch, static_cast<int>(take + 1), cnt,
                            call.type, call.op);
      }
      if (!st.ok()) return st.withContext(d.what);
    }
    if (dev) {
      STRATA_CHECK(waitForDevice(call, strformat("%s round %zu of %zu: this member's reads of the slots", d.what, c + 1, C)));
    }
    ctl[me_].consumed.store(s, std::memory_order_release);
  }
  round_ += C;
  if (layout->largePieces) {
    const double t = std::chrono::duration<double>(Clock::now() - started).count();
    const int k = stream ? 1 : 0;
    layout->seconds[k] = layout->tries[k]++ == 0 ? t : 0.75 * layout->seconds[k] + 0.25 * t;
  }
  return Status::Ok();
}

}  // namespace strata
