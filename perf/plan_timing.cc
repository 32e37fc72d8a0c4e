#include "perf/plan_timing.h"

#include <algorithm>
#include <deque>
#include <map>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "hierarchy/composition.h"
#include "inter_node/algorithms/algorithm.h"
#include "kernels/plan/node_costs.h"
#include "kernels/plan/peer_reads.h"
#include "kernels/plan/plan_builder.h"
#include "kernels/plan/selection.h"
#include "kernels/plan/topology.h"
#include "src/core/collective_runner.h"

namespace strata::perf {
namespace {

struct Event {
  double time;
  uint64_t seq;  // equal times in the order they were scheduled
  int rank;      // -(k + 1): the k-th copy within a node (Timeline::rendezvous)
  StepId step;
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

// Something that does one thing at a time, as the intervals it is busy, disjoint and in order: one
// direction of one NIC carrying a message, a rank's core making a copy or a reduction. Work takes
// the earliest gap, from the time it is ready, in which it fits (a message: in which its sender's
// NIC and its receiver's are both free), so work booked far ahead leaves the gaps before it to
// work ready sooner. With one free-from time per NIC instead, a hypercube broadcast on 4 nodes of
// one NIC took twice its M - 1 + log p rounds, every rank's second dimension waiting behind its
// first; with one per rank's core, a two-tree reduce on one node of 8 took 1.47x the broadcast's
// time, its reduction of each block waiting behind the copy of the next block, booked as soon as
// both sides of that message were posted (Timeline::rendezvous now books it when it can start).
class SerialTimeline {
 public:
  // The earliest time from `t` at which it is free for `w` seconds.
  double firstGap(double t, double w) const {
    for (;;) {
      const double next = clearFrom(t, w);
      if (next == t) return t;
      t = next;
    }
  }
  // When the last of its bookings ends (0: none left).
  double lastEnd() const { return busy_.empty() ? 0.0 : busy_.rbegin()->second; }
  // Whether a booking holds the moment `t`.
  bool busyAt(double t) const { return clearFrom(t, 0) != t; }
  // The end of a busy interval that overlaps [begin, begin + w), or begin where none does.
  double clearFrom(double begin, double w) const {
    auto it = busy_.upper_bound(begin);
    if (it != busy_.begin() && std::prev(it)->second > begin) return std::prev(it)->second;
    if (it != busy_.end() && it->first < begin + w) return it->second;
    return begin;
  }
  // Books [begin, end); intervals that ended by `now` (the simulation's clock, which only moves
  // forward) can no longer matter and are dropped.
  void book(double begin, double end, double now) {
    while (!busy_.empty() && busy_.begin()->second <= now) busy_.erase(busy_.begin());
    auto next = busy_.lower_bound(begin);
    if (next != busy_.begin() && std::prev(next)->second >= begin) {
      begin = std::prev(next)->first;
      busy_.erase(std::prev(next));
    }
    if (next != busy_.end() && next->first <= end) {
      end = next->second;
      busy_.erase(next);
    }
    busy_[begin] = end;
  }
  double carried = 0;  // seconds it carried data

 private:
  std::map<double, double> busy_;  // begin -> end
};

// The switches' core (machine.core_bandwidth): how many messages between nodes it carries at each
// moment, at most `slots` (Machine::coreSlots), as a step function over time. A message takes the
// earliest gap in which its NICs are free and the core has a slot free all along, as it takes the
// NICs' (a counting timeline where a NIC's holds one message).
class CoreTimeline {
 public:
  explicit CoreTimeline(int slots) : slots_(slots) {}
  // The end of the first stretch within [begin, begin + w) in which every slot is taken, or begin
  // where there is none.
  double clearFrom(double begin, double w) const {
    auto it = level_.upper_bound(begin);
    if (it != level_.begin()) --it;  // the stretch that holds begin, if any
    for (; it != level_.end() && it->first < begin + w; ++it) {
      if (it->second < slots_) continue;
      const auto next = std::next(it);  // a full stretch ends: the last key's level is 0
      return std::max(begin, next->first);
    }
    return begin;
  }
  // Books one more message over [begin, end); stretches that ended by `now` are dropped.
  void book(double begin, double end, double now) {
    while (level_.size() >= 2 && std::next(level_.begin())->first <= now) level_.erase(level_.begin());
    split(begin);
    split(end);
    for (auto it = level_.find(begin); it->first < end; ++it) ++it->second;
  }

 private:
  // A key at t carrying the level of the stretch that holds it (0 outside every booking).
  void split(double t) {
    auto it = level_.upper_bound(t);
    if (it != level_.begin() && std::prev(it)->first == t) return;
    const int level = it == level_.begin() ? 0 : std::prev(it)->second;
    level_.emplace_hint(it, t, level);
  }

  int slots_;
  std::map<double, int> level_;  // from each key to the next, that many messages on the core
};

// The earliest time from `t` at which both NIC directions are free for `w` seconds, and the core
// (where there is one) has a slot free as long.
double firstCommonGap(const SerialTimeline& a, const SerialTimeline& b, const CoreTimeline* core, double t, double w) {
  for (;;) {
    double next = b.clearFrom(a.clearFrom(t, w), w);
    if (core != nullptr) next = core->clearFrom(next, w);
    if (next == t) return t;
    t = next;
  }
}

// A channel's (source, destination, tag).
struct ChannelKey {
  int src, dst, tag;
  bool operator==(const ChannelKey& o) const { return src == o.src && dst == o.dst && tag == o.tag; }
};
struct ChannelKeyHash {
  size_t operator()(const ChannelKey& k) const {
    uint64_t h = (static_cast<uint64_t>(static_cast<uint32_t>(k.src)) << 32 | static_cast<uint32_t>(k.dst)) ^
                 (static_cast<uint64_t>(static_cast<uint32_t>(k.tag)) * 0x9E3779B97F4A7C15ull);
    h ^= h >> 31;  // splitmix64's finish
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 27;
    return static_cast<size_t>(h);
  }
};
// One (source, destination, tag) channel: MPI matches its sends and receives in order.
struct Channel {
  struct Send {
    StepId step;
    double posted;
    double arrival;  // < 0: rendezvous, waiting for its receive
  };
  struct Recv {
    StepId step;
    double posted;
  };
  std::deque<Send> sends;
  std::deque<Recv> recvs;
};

struct RankRun {
  const Plan* plan = nullptr;
  std::vector<uint32_t> remaining;
  std::vector<double> readyAt;
  SerialTimeline cpu;  // its local steps and the copies it makes of messages within its node
  size_t done = 0;
  std::map<std::vector<int>, int> nodeOps;  // per team: node ops entered
  std::vector<RewrittenBytes> rewritten;    // per step: bytes written after a peer read them
};

class Timeline {
 public:
  Timeline(const std::vector<Plan>& plans, const Machine& m, size_t elemSize)
      : plans_(plans), m_(m), es_(elemSize), local_(static_cast<const LevelCosts&>(m.costs).flat) {
    const size_t nics = static_cast<size_t>(m.nodes) * static_cast<size_t>(m.nicsPerNode);
    tx_.resize(nics);
    rx_.resize(nics);
    if (m.coreSlots() > 0) core_.emplace_back(m.coreSlots());
  }

  Status run(PlanTiming* out) {
    const int p = static_cast<int>(plans_.size());
    ranks_.resize(plans_.size());
    for (int r = 0; r < p; ++r) {
      RankRun& rr = ranks_[static_cast<size_t>(r)];
      rr.plan = &plans_[static_cast<size_t>(r)];
      const size_t n = rr.plan->size();
      rr.remaining.resize(n);
      rr.readyAt.assign(n, 0.0);
      if (local_.pricesRewrites()) rr.rewritten = rewrittenBytesPerStep(*rr.plan, es_);
      for (StepId s = 0; s < n; ++s) {
        rr.remaining[s] = rr.plan->steps[s].depCount;
        if (rr.remaining[s] == 0) push(0.0, r, s);
      }
      out->steps += n;
    }
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      if (e.rank < 0) {
        const size_t k = static_cast<size_t>(-e.rank - 1);
        makeCopy(copies_[k], e.time);
        freeCopies_.push_back(k);  // its slot, for the next copy
        continue;
      }
      STRATA_CHECK(start(e.rank, e.step, e.time));
    }
    for (int r = 0; r < p; ++r) {
      const RankRun& rr = ranks_[static_cast<size_t>(r)];
      STRATA_REQUIRE(rr.done == rr.plan->size(), strataInternalError,
                     "rank %d finished %zu of its %zu steps: its plan waits for a message or node op that never comes", r,
                     rr.done, rr.plan->size());
      out->seconds = std::max(out->seconds, finish_);
    }
    out->messages = messages_;
    out->networkMessages = networkMessages_;
    for (size_t k = 0; k < tx_.size(); ++k) out->busiestNic = std::max({out->busiestNic, tx_[k].carried, rx_[k].carried});
    return Status::Ok();
  }

 private:
  void push(double t, int rank, StepId s) { events_.push(Event{t, seq_++, rank, s}); }
  int nodeOf(int r) const { return r / m_.ranksPerNode; }

  void finishStep(int r, StepId s, double t) {
    RankRun& rr = ranks_[static_cast<size_t>(r)];
    ++rr.done;
    finish_ = std::max(finish_, t);
    const Plan& plan = *rr.plan;
    for (uint32_t k = plan.succBegin[s]; k < plan.succBegin[s + 1]; ++k) {
      const StepId next = plan.succ[k];
      rr.readyAt[next] = std::max(rr.readyAt[next], t);
      if (--rr.remaining[next] == 0) push(rr.readyAt[next], r, next);
    }
  }

  // The time a message of `bytes` from `src` to `dst` that leaves at `t` arrives.
  // A message's bytes leave the sender at `departure` (an eager send is then complete: MPI has
  // them) and reach the receiver at `arrival`.
  struct Transfer {
    double departure, arrival;
  };
  Transfer transfer(int src, int dst, double bytes, double t) {
    ++messages_;
    if (nodeOf(src) == nodeOf(dst)) {
      // An eager message within a node: its sender copies it into shared memory, a copy its core
      // makes among its local steps, not beside them (unbooked, a pipelined tree scan's blocks on
      // 2 ranks at 64 KiB overlapped its reductions: 3.9 us simulated, 14.9 measured).
      SerialTimeline& cpu = ranks_[static_cast<size_t>(src)].cpu;
      const double copy = bytes * hostShare(src, cpu.firstGap(t, bytes * m_.costs.flat.beta)).beta;
      const double begin = cpu.firstGap(t, copy);
      if (copy > 0) cpu.book(begin, begin + copy, t);
      return {begin + copy, begin + m_.costs.flat.alpha + copy};
    }
    ++networkMessages_;
    const LinkCost& lane = m_.costs.lane;
    Transfer x{t + bytes * lane.beta, t + lane.alpha + bytes * lane.beta};
    if (m_.nicBandwidth > 0) {
      const size_t tx = static_cast<size_t>(nodeOf(src)) * static_cast<size_t>(m_.nicsPerNode) +
                        static_cast<size_t>(m_.nicOf(src % m_.ranksPerNode));
      const size_t rx = static_cast<size_t>(nodeOf(dst)) * static_cast<size_t>(m_.nicsPerNode) +
                        static_cast<size_t>(m_.nicOf(dst % m_.ranksPerNode));
      CoreTimeline* core = core_.empty() ? nullptr : &core_[0];
      const double wire = bytes / (core != nullptr ? m_.coreRate() : m_.nicBandwidth);
      const double begin = firstCommonGap(tx_[tx], rx_[rx], core, t, wire);
      if (wire > 0) {
        tx_[tx].book(begin, begin + wire, t);
        rx_[rx].book(begin, begin + wire, t);
        if (core != nullptr) core->book(begin, begin + wire, t);
      }
      tx_[tx].carried += wire;
      rx_[rx].carried += wire;
      x.departure = std::max(x.departure, begin + wire);
      x.arrival = std::max(x.arrival, begin + wire + lane.alpha);
    }
    return x;
  }

  // A message past the eager size whose send and receive are both posted at `t`: its send completes
  // when it has arrived. Within a node it is one copy made by its receiver (single-copy shared
  // memory: the receiver reads the sender's buffer), so the receiver's core makes it among its
  // local steps, not beside them: an allgather out of place copies its own block and then receives
  // (2 ranks of the AMD VM at 16 MiB: 1932 us, 1227 in place; priced overlapped, the copy vanished
  // from the simulation). The copy takes the core when the latency has passed (an event then), so
  // the steps that became ready sooner go first: booked at `t`, ahead of them, it made the
  // two-tree reduce on one node of 8 reduce each block a copy late (1.47x its formula).
  void rendezvous(int src, StepId send, int dst, StepId recv, double bytes, double t) {
    if (nodeOf(src) == nodeOf(dst)) {
      ++messages_;
      size_t k = copies_.size();
      if (freeCopies_.empty()) {
        copies_.push_back({src, send, dst, recv, bytes});
      } else {
        k = freeCopies_.back();
        freeCopies_.pop_back();
        copies_[k] = {src, send, dst, recv, bytes};
      }
      events_.push(Event{t + m_.costs.flat.alpha, seq_++, -static_cast<int>(k) - 1, 0});
      return;
    }
    const double arrival = transfer(src, dst, bytes, t).arrival;
    finishStep(src, send, arrival);
    finishStep(dst, recv, arrival + rewriteOf(dst, recv));
  }
  struct CopyWithinNode {
    int src;
    StepId send;
    int dst;
    StepId recv;
    double bytes;
  };
  void makeCopy(const CopyWithinNode& c, double t) {
    SerialTimeline& cpu = ranks_[static_cast<size_t>(c.dst)].cpu;
    const double copy = c.bytes * hostShare(c.dst, cpu.firstGap(t, c.bytes * m_.costs.flat.beta)).beta;
    const double begin = cpu.firstGap(t, copy);
    if (copy > 0) cpu.book(begin, begin + copy, t);
    finishStep(c.src, c.send, begin + copy);
    finishStep(c.dst, c.recv, begin + copy + rewriteOf(c.dst, c.recv));
  }

  // The channel of `k`, opened where none is.
  Channel& channel(const ChannelKey& k) { return channels_[k]; }
  // Closes a channel on which nothing waits: a plan's channels are many (a ring's steps each on a tag
  // of its own), and the drained ones kept would hold most of a large simulation's memory and time
  // (1024 ranks of a ring allreduce: 3.6 GB in a tree of 2 million channels).
  void closeIfDrained(const ChannelKey& k, const Channel& c) {
    if (c.sends.empty() && c.recvs.empty()) channels_.erase(k);
  }
  // The flat level's costs for work rank `r` starts at `t` (a copy of a message within its node, a
  // reduction, a copy within it): at the share of its host's processes busy then, those with work
  // booked over `t` and itself, as the formulas price a phase by the share it keeps busy
  // (kernels/plan/cost.h, receiving; one copy alone outruns two at once on a shared memory
  // system), where each process has a core (HostShare::coresShared false); the busy costs where
  // the processes take turns on the cores, whose sharing the calibrated busy costs hold already,
  // or where calibration measured the level with every process busy only.
  LinkCost hostShare(int r, double t) const {
    if (local_.alone.share >= 1 || local_.alone.coresShared) return local_;
    const int host = std::max(1, m_.hostProcesses());
    const int first = r / host * host, end = std::min(first + host, static_cast<int>(ranks_.size()));
    int busy = 1;
    for (int q = first; q < end; ++q) busy += q != r && ranks_[static_cast<size_t>(q)].cpu.busyAt(t);
    return local_.atShare(std::min(1.0, static_cast<double>(busy) / host));
  }
  // What step `s` of rank `r` pays for writing where a peer read (LinkCost::rewrite, copyRewrite).
  double rewriteOf(int r, StepId s) const {
    const RankRun& rr = ranks_[static_cast<size_t>(r)];
    return rr.rewritten.empty() ? 0.0 : rr.rewritten[s].seconds(local_);
  }

  Status start(int r, StepId s, double t) {
    RankRun& rr = ranks_[static_cast<size_t>(r)];
    const Step& st = rr.plan->steps[s];
    const double es = static_cast<double>(es_);
    switch (st.kind) {
      case StepKind::kReduce:
      case StepKind::kCopy:
      case StepKind::kDivide: {
        const double bytes = static_cast<double>(st.dst.count) * es;
        auto duration = [&](const LinkCost& k) {
          if (st.kind == StepKind::kReduce) return k.gamma * bytes * std::max<double>(1, st.inputCount - 1.0);
          if (st.kind == StepKind::kCopy) return k.copy * bytes;  // the flat level's (forWorkingSet)
          return k.gamma * bytes;
        };
        double d = duration(hostShare(r, rr.cpu.firstGap(t, duration(local_))));
        d += rewriteOf(r, s);
        const double begin = rr.cpu.firstGap(t, d);
        if (d > 0) rr.cpu.book(begin, begin + d, t);
        finishStep(r, s, begin + d);
        return Status::Ok();
      }
      case StepKind::kSend: {
        const double bytes = static_cast<double>(st.src.count) * es;
        const ChannelKey key{r, st.peer, st.tag};
        Channel& c = channel(key);
        const bool eager = bytes <= m_.eagerBytes;
        if (!c.recvs.empty()) {
          const Channel::Recv rv = c.recvs.front();
          c.recvs.pop_front();
          closeIfDrained(key, c);
          if (!eager) {
            rendezvous(r, s, st.peer, rv.step, bytes, t);
            return Status::Ok();
          }
          const Transfer x = transfer(r, st.peer, bytes, t);
          finishStep(r, s, x.departure);
          finishStep(st.peer, rv.step, x.arrival + rewriteOf(st.peer, rv.step));
        } else if (eager) {
          const Transfer x = transfer(r, st.peer, bytes, t);
          c.sends.push_back({s, t, x.arrival});
          finishStep(r, s, x.departure);
        } else {
          c.sends.push_back({s, t, -1.0});
        }
        return Status::Ok();
      }
      case StepKind::kRecv: {
        const ChannelKey key{st.peer, r, st.tag};
        Channel& c = channel(key);
        if (c.sends.empty()) {
          c.recvs.push_back({s, t});
          return Status::Ok();
        }
        const Channel::Send sd = c.sends.front();
        c.sends.pop_front();
        closeIfDrained(key, c);
        if (sd.arrival >= 0) {  // eager: already on its way
          finishStep(r, s, std::max(t, sd.arrival) + rewriteOf(r, s));
        } else {
          rendezvous(st.peer, sd.step, r, s, static_cast<double>(st.dst.count) * es, t);
        }
        return Status::Ok();
      }
      case StepKind::kNodeOp: {
        const NodeOpDesc& d = rr.plan->nodeOps[st.nodeOp];
        const int k = rr.nodeOps[d.members]++;
        Meeting& mt = meetings_[{d.members, k}];
        mt.arrived.push_back({r, s});
        mt.descs.resize(d.members.size());
        mt.descs[static_cast<size_t>(d.me)] = &d;
        mt.begin = std::max({mt.begin, t, rr.cpu.lastEnd()});
        if (mt.arrived.size() < d.members.size()) return Status::Ok();
        const double end = mt.begin + nodeOpTeamCost(mt.descs, es_, m_.costs.node);
        for (const auto& [member, step] : mt.arrived) {
          const double done = end + rewriteOf(member, step);  // its outputs where a peer read
          if (done > mt.begin) ranks_[static_cast<size_t>(member)].cpu.book(mt.begin, done, t);
          finishStep(member, step, done);
        }
        meetings_.erase({d.members, k});
        return Status::Ok();
      }
    }
    return makeStatus(strataInternalError, "rank %d step %u has an unknown kind", r, s);
  }

  struct Meeting {
    std::vector<std::pair<int, StepId>> arrived;
    std::vector<const NodeOpDesc*> descs;  // by team index
    double begin = 0;
  };

  const std::vector<Plan>& plans_;
  const Machine& m_;
  size_t es_;
  LinkCost local_;
  std::vector<RankRun> ranks_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
  std::unordered_map<ChannelKey, Channel, ChannelKeyHash> channels_;
  std::map<std::pair<std::vector<int>, int>, Meeting> meetings_;
  std::vector<SerialTimeline> tx_, rx_;
  std::vector<CopyWithinNode> copies_;  // those under way; their events' rank: -(index + 1)
  std::vector<size_t> freeCopies_;      // slots of copies_ made already
  std::vector<CoreTimeline> core_;  // one, where the machine has a core
  double finish_ = 0;
  size_t messages_ = 0, networkMessages_ = 0;
};

// Builds each rank's plan of one algorithm for one call, as the tuner's candidate would (the flat
// algorithms over the whole communicator, the compositions over the machine's nodes).
class PlanSource {
 public:
  Status init(const CollectiveArgs& args, const std::string& algorithm, const Machine& m) {
    args_ = args;
    args_.commSize = m.ranks();
    costs_ = m.formulaCosts();  // as the library builds them: from what the levels cost, a core's share too
    p_ = m.ranks();
    STRATA_CHECK(Topology::fromShape({m.ranksPerNode}, p_, 0, &topo_));
    const CollectiveArgs global = selectionArgs(args_);
    // The algorithm's record, flat or composition, and why it cannot serve the call, if it cannot.
    auto find = [&](const auto& records, auto** found, auto why) -> Status {
      for (const auto* r : records) {
        if (algorithm != r->name) continue;
        const std::string reason = why(r);
        STRATA_REQUIRE(reason.empty(), strataInvalidArgument, "%s: %s", r->name, reason.c_str());
        *found = r;
      }
      return Status::Ok();
    };
    STRATA_CHECK(find(flatAlgorithmsFor(args.coll), &flat_,
                      [&](const FlatAlgorithm* f) { return f->whyUnsupported(global, p_); }));
    STRATA_CHECK(find(hierAlgorithmsFor(args.coll), &hier_,
                      [&](const HierAlgorithm* h) { return h->whyUnsupported(global, topo_); }));
    if (flat_ != nullptr || hier_ != nullptr) return Status::Ok();
    return makeStatus(strataInvalidArgument, "%s has no algorithm named '%s'", collectiveName(args.coll),
                      algorithm.c_str());
  }

  void build(int r, Plan* plan) {
    if (flat_ != nullptr) {
      BuildOptions opt;
      opt.link = costs_.flat;
      *plan = buildFlatPlan(*flat_, args_, p_, r, opt);
      return;
    }
    *plan = Plan{};
    plan->algorithm = hier_->name;
    plan->divisor = p_;
    PlanBuilder b(plan);
    applyInPlaceAlias(b, args_, r);
    topo_.rank = r;
    hier_->build(b, args_, topo_, costs_);
    b.finish();
  }

 private:
  CollectiveArgs args_;
  LevelCosts costs_;
  Topology topo_;
  int p_ = 1;
  const FlatAlgorithm* flat_ = nullptr;
  const HierAlgorithm* hier_ = nullptr;
};

}  // namespace

Status timePlans(const std::vector<Plan>& plans, const Machine& m, size_t elemSize, PlanTiming* out) {
  STRATA_REQUIRE(static_cast<int>(plans.size()) == m.ranks(), strataInvalidArgument, "%zu plans for %d ranks",
                 plans.size(), m.ranks());
  *out = PlanTiming{};
  Timeline t(plans, m, elemSize);
  return t.run(out);
}

Status timeAlgorithm(const CollectiveArgs& args, const std::string& algorithm, const Machine& m, double maxSteps,
                     PlanTiming* out, bool* overBudget) {
  *overBudget = false;
  PlanSource source;
  STRATA_CHECK(source.init(args, algorithm, m));
  std::vector<Plan> plans(static_cast<size_t>(m.ranks()));
  double steps = 0;
  for (int r = 0; r < m.ranks(); ++r) {
    source.build(r, &plans[static_cast<size_t>(r)]);
    steps += static_cast<double>(plans[static_cast<size_t>(r)].size());
    if (maxSteps > 0 && steps > maxSteps) {
      *overBudget = true;
      return Status::Ok();
    }
  }
  return timePlans(plans, m, args.elemSize(), out);
}

}  // namespace strata::perf
