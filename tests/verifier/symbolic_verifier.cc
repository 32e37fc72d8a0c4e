#include "tests/verifier/symbolic_verifier.h"

#include <deque>
#include <map>
#include <optional>
#include <tuple>

#include "kernels/common/status.h"

namespace strata::verify {
namespace {

// One element: the ranks whose input it combines, the input element it derives from, and
// whether strataAvg's division was applied.
struct Cell {
  uint64_t mask = 0;
  int64_t elem = -1;  // -1: undefined
  bool divided = false;
  bool defined() const { return elem >= 0; }
  bool operator==(const Cell& o) const { return mask == o.mask && elem == o.elem && divided == o.divided; }
};

std::string maskText(uint64_t m) {
  std::string s = "{";
  bool first = true;
  for (int i = 0; i < 64; ++i) {
    if (m & (uint64_t{1} << i)) {
      int j = i;
      while (j + 1 < 64 && (m & (uint64_t{1} << (j + 1)))) ++j;
      s += (first ? "" : ",") + (j > i ? strformat("%d..%d", i, j) : strformat("%d", i));
      first = false;
      i = j;
    }
  }
  return s + "}";
}

std::string cellText(const Cell& c) {
  if (!c.defined()) return "undefined";
  return strformat("ranks %s of element %lld%s", maskText(c.mask).c_str(), static_cast<long long>(c.elem),
                   c.divided ? " (divided)" : "");
}

uint64_t allRanks(int p) { return p >= 64 ? ~uint64_t{0} : (uint64_t{1} << p) - 1; }

struct Buffer {
  std::vector<Cell> cells;
  std::vector<StepId> lastWriter;            // kNoStep: the initial contents
  std::vector<std::vector<StepId>> readers;  // since the last write
  void resize(size_t n) {
    cells.assign(n, Cell{});
    lastWriter.assign(n, kNoStep);
    readers.assign(n, {});
  }
};

struct RankState {
  const Plan* plan = nullptr;
  Buffer buf[kNumBufferIds];
  std::vector<uint32_t> remaining;
  std::vector<uint8_t> state;  // 0 waiting, 1 started, 2 done
  std::vector<uint64_t> know;  // per step: ranks this step causally follows (for barrier)
  std::vector<std::vector<uint64_t>> ancestors;
  std::deque<StepId> ready;
  size_t done = 0;
  // Elements of kSend that the call may write (in-place outputs that live in the send buffer).
  size_t sendWritableBegin = 0, sendWritableEnd = 0;
  // Node ops, as the executor runs them: entered one at a time, only when no other step is ready
  // to start, and nothing else starts until the whole team has arrived and the op is done.
  bool blocked = false;
  std::deque<StepId> pendingNodeOps;
  std::map<std::string, int> nodeOpsEntered;  // per team
};

struct NodeRendezvous {
  std::vector<std::pair<int, StepId>> arrived;  // (rank, step)
};

struct PostedSend {
  int rank;
  StepId step;
  std::vector<Cell> data;
  uint64_t know;
};
struct PostedRecv {
  int rank;
  StepId step;
};

using ChannelKey = std::tuple<int, int, int>;  // source, destination, tag

class Simulator {
 public:
  explicit Simulator(const Case& c) : c_(c), a_(c.args), p_(c.p) {
    for (int r = 0; r < p_; ++r) ra_.push_back(rankArgs(c.argsOf(r), r));
  }

  Result run() {
    if (static_cast<int>(c_.plans.size()) != p_) return fail("expected %d plans, got %zu", p_, c_.plans.size());
    if (p_ > 64) return fail("the verifier handles up to 64 ranks");
    ranks_.resize(static_cast<size_t>(p_));
    for (int r = 0; r < p_; ++r) {
      if (!init(r)) return result_;
    }
    bool progress = true;
    while (progress && result_.ok) {
      progress = false;
      for (int r = 0; r < p_ && result_.ok; ++r) {
        RankState& st = ranks_[static_cast<size_t>(r)];
        if (st.blocked) continue;
        while (!st.ready.empty() && result_.ok && !st.blocked) {
          const StepId s = st.ready.front();
          st.ready.pop_front();
          progress = true;
          if (st.plan->steps[s].kind == StepKind::kNodeOp) {
            st.pendingNodeOps.push_back(s);
            continue;
          }
          start(r, s);
        }
        if (!st.blocked && st.ready.empty() && !st.pendingNodeOps.empty() && result_.ok) {
          const StepId s = st.pendingNodeOps.front();
          st.pendingNodeOps.pop_front();
          enterNodeOp(r, s);
          progress = true;
        }
      }
    }
    if (!result_.ok) return result_;
    for (int r = 0; r < p_; ++r) {
      const RankState& st = ranks_[static_cast<size_t>(r)];
      if (st.done != st.plan->size()) {
        for (StepId s = 0; s < st.plan->size(); ++s) {
          if (st.state[s] == 1 && st.plan->steps[s].kind == StepKind::kNodeOp) {
            return fail("deadlock: rank %d waits in %s for its node team (%zu of %zu steps done)", r,
                        st.plan->describe(s, a_.type).c_str(), st.done, st.plan->size());
          }
        }
        for (StepId s = 0; s < st.plan->size(); ++s) {
          if (st.state[s] != 2) {
            return fail("deadlock: rank %d stuck at %s (%zu of %zu steps done)", r,
                        st.plan->describe(s, a_.type).c_str(), st.done, st.plan->size());
          }
        }
      }
    }
    for (int r = 0; r < p_ && result_.ok; ++r) checkOutput(r);
    if (result_.ok && a_.coll == Collective::kBarrier) {
      for (int r = 0; r < p_; ++r) {
        uint64_t k = uint64_t{1} << r;
        for (uint64_t x : ranks_[static_cast<size_t>(r)].know) k |= x;
        if (k != allRanks(p_)) {
          return fail("barrier: rank %d can leave before hearing from ranks outside %s", r, maskText(k).c_str());
        }
      }
    }
    return result_;
  }

 private:
  template <typename... Args>
  Result fail(const char* fmt, Args... args) {
    if (result_.ok) {
      result_.ok = false;
      result_.error = strformat(fmt, args...);
    }
    return result_;
  }

  bool init(int r) {
    RankState& st = ranks_[static_cast<size_t>(r)];
    st.plan = &c_.plans[static_cast<size_t>(r)];
    const Plan& plan = *st.plan;
    result_.totalSteps += plan.size();
    if (plan.size() > 16384) {
      fail("rank %d: %zu steps is more than the verifier checks", r, plan.size());
      return false;
    }
    const CollectiveArgs& ra = ra_[static_cast<size_t>(r)];
    const View sv = sendView(ra, r), rv = recvView(ra, r);
    const size_t se = sendElems(ra, r), re = recvElems(ra, r);
    // Buffer sizes: an aliased buffer is part of the one it aliases.
    size_t sendSize = 0, recvSize = 0;
    if (ra.inPlace && rv.buffer == BufferId::kSend) {
      sendSize = se;
    } else if (ra.inPlace && sv.buffer == BufferId::kRecv) {
      recvSize = re;
    } else {
      sendSize = se;
      recvSize = re;
    }
    st.buf[static_cast<int>(BufferId::kSend)].resize(sendSize);
    st.buf[static_cast<int>(BufferId::kRecv)].resize(recvSize);
    st.buf[static_cast<int>(BufferId::kScratch)].resize(plan.scratchCount);
    if (rv.buffer == BufferId::kSend) {
      st.sendWritableBegin = rv.offset;
      st.sendWritableEnd = rv.offset + re;
    }
    Buffer& in = st.buf[static_cast<int>(sv.buffer)];
    for (size_t i = 0; i < se; ++i) {
      if (sv.offset + i >= in.cells.size()) {
        fail("internal: rank %d send view out of range", r);
        return false;
      }
      in.cells[sv.offset + i] = Cell{uint64_t{1} << r, static_cast<int64_t>(i), false};
    }
    initial_.push_back(st.buf[static_cast<int>(rv.buffer)].cells);

    const size_t n = plan.size();
    st.remaining.resize(n);
    st.state.assign(n, 0);
    st.know.assign(n, 0);
    const size_t words = (n + 63) / 64;
    st.ancestors.assign(n, std::vector<uint64_t>(words, 0));
    for (StepId s = 0; s < n; ++s) {
      const Step& step = plan.steps[s];
      st.remaining[s] = step.depCount;
      for (uint32_t k = 0; k < step.depCount; ++k) {
        const StepId d = plan.deps[step.depBegin + k];
        if (d >= s) {
          fail("rank %d: step %u depends on later step %u", r, s, d);
          return false;
        }
        for (size_t w = 0; w < words; ++w) st.ancestors[s][w] |= st.ancestors[d][w];
        st.ancestors[s][d / 64] |= uint64_t{1} << (d % 64);
      }
      if (step.depCount == 0) st.ready.push_back(s);
    }
    return true;
  }

  bool isAncestor(const RankState& st, StepId a, StepId b) const {
    return (st.ancestors[b][a / 64] >> (a % 64)) & 1;
  }

  Buffer* bufferFor(int r, StepId s, const Slice& slice, bool write) {
    RankState& st = ranks_[static_cast<size_t>(r)];
    Buffer& b = st.buf[static_cast<int>(slice.buffer)];
    if (slice.end() > b.cells.size()) {
      fail("rank %d %s: %s[%zu,+%zu] is outside the buffer (%zu elements)", r, st.plan->describe(s, a_.type).c_str(),
           bufferName(slice.buffer), slice.offset, slice.count, b.cells.size());
      return nullptr;
    }
    if (write && slice.buffer == BufferId::kSend &&
        (slice.offset < st.sendWritableBegin || slice.end() > st.sendWritableEnd) && slice.count != 0) {
      fail("rank %d %s writes the caller's send buffer", r, st.plan->describe(s, a_.type).c_str());
      return nullptr;
    }
    return &b;
  }

  bool read(int r, StepId s, const Slice& slice, std::vector<Cell>* out) {
    RankState& st = ranks_[static_cast<size_t>(r)];
    Buffer* b = bufferFor(r, s, slice, false);
    if (b == nullptr) return false;
    out->resize(slice.count);
    for (size_t i = 0; i < slice.count; ++i) {
      const size_t e = slice.offset + i;
      const Cell& cell = b->cells[e];
      if (!cell.defined()) {
        fail("rank %d %s reads %s[%zu] before it is written", r, st.plan->describe(s, a_.type).c_str(),
             bufferName(slice.buffer), e);
        return false;
      }
      const StepId w = b->lastWriter[e];
      if (w != kNoStep && !isAncestor(st, w, s)) {
        fail("rank %d %s reads %s[%zu] written by step %u without depending on it", r,
             st.plan->describe(s, a_.type).c_str(), bufferName(slice.buffer), e, w);
        return false;
      }
      b->readers[e].push_back(s);
      (*out)[i] = cell;
    }
    return true;
  }

  bool write(int r, StepId s, const Slice& slice, const std::vector<Cell>& data) {
    RankState& st = ranks_[static_cast<size_t>(r)];
    Buffer* b = bufferFor(r, s, slice, true);
    if (b == nullptr) return false;
    for (size_t i = 0; i < slice.count; ++i) {
      const size_t e = slice.offset + i;
      const StepId w = b->lastWriter[e];
      if (w != kNoStep && w != s && !isAncestor(st, w, s)) {
        fail("rank %d %s overwrites %s[%zu] written by step %u without depending on it", r,
             st.plan->describe(s, a_.type).c_str(), bufferName(slice.buffer), e, w);
        return false;
      }
      for (StepId rd : b->readers[e]) {
        if (rd != s && !isAncestor(st, rd, s)) {
          fail("rank %d %s overwrites %s[%zu] that step %u reads without depending on it", r,
               st.plan->describe(s, a_.type).c_str(), bufferName(slice.buffer), e, rd);
          return false;
        }
      }
      b->cells[e] = data[i];
      b->lastWriter[e] = s;
      b->readers[e].clear();
    }
    return true;
  }

  void complete(int r, StepId s) {
    RankState& st = ranks_[static_cast<size_t>(r)];
    st.state[s] = 2;
    ++st.done;
    const Plan& plan = *st.plan;
    for (uint32_t k = plan.succBegin[s]; k < plan.succBegin[s + 1]; ++k) {
      const StepId next = plan.succ[k];
      if (--st.remaining[next] == 0) st.ready.push_back(next);
    }
  }

  void start(int r, StepId s) {
    RankState& st = ranks_[static_cast<size_t>(r)];
    const Plan& plan = *st.plan;
    const Step& step = plan.steps[s];
    st.state[s] = 1;
    uint64_t k = uint64_t{1} << r;
    for (uint32_t d = 0; d < step.depCount; ++d) k |= st.know[plan.deps[step.depBegin + d]];
    st.know[s] = k;
    switch (step.kind) {
      case StepKind::kSend: {
        if (step.peer < 0 || step.peer >= p_ || step.peer == r) {
          fail("rank %d %s: bad peer", r, plan.describe(s, a_.type).c_str());
          return;
        }
        PostedSend ps{r, s, {}, k};
        if (!read(r, s, step.src, &ps.data)) return;
        const ChannelKey key{r, step.peer, step.tag};
        sends_[key].push_back(std::move(ps));
        match(key);
        return;
      }
      case StepKind::kRecv: {
        if (step.peer < 0 || step.peer >= p_ || step.peer == r) {
          fail("rank %d %s: bad peer", r, plan.describe(s, a_.type).c_str());
          return;
        }
        const ChannelKey key{step.peer, r, step.tag};
        recvs_[key].push_back(PostedRecv{r, s});
        match(key);
        return;
      }
      case StepKind::kCopy: {
        std::vector<Cell> data;
        if (step.src.count != step.dst.count) {
          fail("rank %d %s: source and destination sizes differ", r, plan.describe(s, a_.type).c_str());
          return;
        }
        if (!read(r, s, step.src, &data) || !write(r, s, step.dst, data)) return;
        complete(r, s);
        return;
      }
      case StepKind::kReduce: {
        std::vector<Cell> acc, in;
        const Slice* inputs = plan.reduceInputs(step);
        for (uint32_t i = 0; i < step.inputCount; ++i) {
          if (inputs[i].count != step.dst.count) {
            fail("rank %d %s: input %u has %zu elements, output %zu", r, plan.describe(s, a_.type).c_str(), i,
                 inputs[i].count, step.dst.count);
            return;
          }
          if (!read(r, s, inputs[i], i == 0 ? &acc : &in)) return;
          if (i == 0) continue;
          for (size_t e = 0; e < acc.size(); ++e) {
            if (acc[e].elem != in[e].elem || (acc[e].mask & in[e].mask) || acc[e].divided || in[e].divided) {
              fail("rank %d %s: element %zu combines %s with %s", r, plan.describe(s, a_.type).c_str(), e,
                   cellText(acc[e]).c_str(), cellText(in[e]).c_str());
              return;
            }
            acc[e].mask |= in[e].mask;
          }
        }
        if (!write(r, s, step.dst, acc)) return;
        complete(r, s);
        return;
      }
      case StepKind::kDivide: {
        std::vector<Cell> data;
        if (!read(r, s, step.dst, &data)) return;
        for (size_t e = 0; e < data.size(); ++e) {
          if (a_.op != strataAvg || data[e].divided || data[e].mask != allRanks(p_)) {
            fail("rank %d %s: divides %s", r, plan.describe(s, a_.type).c_str(), cellText(data[e]).c_str());
            return;
          }
          data[e].divided = true;
        }
        if (!write(r, s, step.dst, data)) return;
        complete(r, s);
        return;
      }
      case StepKind::kNodeOp:
        fail("internal: rank %d %s started outside enterNodeOp", r, plan.describe(s, a_.type).c_str());
        return;
    }
  }

  static std::string teamKey(const std::vector<int>& members) {
    std::string k;
    for (int m : members) k += std::to_string(m) + ",";
    return k;
  }

  void enterNodeOp(int r, StepId s) {
    RankState& st = ranks_[static_cast<size_t>(r)];
    const Plan& plan = *st.plan;
    const Step& step = plan.steps[s];
    const NodeOpDesc& d = plan.nodeOps[step.nodeOp];
    st.state[s] = 1;
    st.blocked = true;
    uint64_t k = uint64_t{1} << r;
    for (uint32_t i = 0; i < step.depCount; ++i) k |= st.know[plan.deps[step.depBegin + i]];
    st.know[s] = k;
    if (d.me < 0 || d.me >= static_cast<int>(d.members.size()) || d.members[static_cast<size_t>(d.me)] != r) {
      fail("rank %d %s: the team does not list this rank at index %d", r, plan.describe(s, a_.type).c_str(), d.me);
      return;
    }
    const std::string key = teamKey(d.members);
    const int ordinal = st.nodeOpsEntered[key]++;
    NodeRendezvous& rv = rendezvous_[{key, ordinal}];
    rv.arrived.push_back({r, s});
    if (rv.arrived.size() == d.members.size()) executeNodeOp(d.members, rv);
  }

  void executeNodeOp(const std::vector<int>& members, const NodeRendezvous& rv) {
    const size_t n = members.size();
    std::vector<StepId> stepOf(n);
    std::vector<const NodeOpDesc*> desc(n);
    for (const auto& [rank, step] : rv.arrived) {
      const RankState& st = ranks_[static_cast<size_t>(rank)];
      const NodeOpDesc& d = st.plan->nodeOps[st.plan->steps[step].nodeOp];
      stepOf[static_cast<size_t>(d.me)] = step;
      desc[static_cast<size_t>(d.me)] = &d;
    }
    auto where = [&](size_t j) {
      return strformat("rank %d %s", members[j], ranks_[static_cast<size_t>(members[j])].plan->describe(stepOf[j], a_.type).c_str());
    };
    // Every member must describe the same pattern.
    for (size_t j = 0; j < n; ++j) {
      const NodeOpDesc& d = *desc[j];
      if (d.writeCounts != desc[0]->writeCounts || d.writeShared != desc[0]->writeShared ||
          d.fullSync != desc[0]->fullSync) {
        fail("%s: the node team's members disagree on the node op's pieces", where(j).c_str());
        return;
      }
      if (d.writes.size() != d.writeCounts[j].size()) {
        fail("%s: %zu pieces, the team expects %zu", where(j).c_str(), d.writes.size(), d.writeCounts[j].size());
        return;
      }
      for (size_t i = 0; i < d.writes.size(); ++i) {
        if (d.writes[i].count != d.writeCounts[j][i]) {
          fail("%s: piece %zu has %zu elements, the team expects %zu", where(j).c_str(), i, d.writes[i].count,
               d.writeCounts[j][i]);
          return;
        }
      }
    }
    // Snapshot every member's pieces, then let every member form its outputs.
    std::vector<std::vector<std::vector<Cell>>> pieces(n);
    for (size_t j = 0; j < n; ++j) {
      const NodeOpDesc& d = *desc[j];
      pieces[j].resize(d.writes.size());
      for (size_t i = 0; i < d.writes.size(); ++i) {
        if (!read(members[j], stepOf[j], d.writes[i], &pieces[j][i])) return;
      }
    }
    std::vector<uint64_t> know(n);
    for (size_t j = 0; j < n; ++j) know[j] = ranks_[static_cast<size_t>(members[j])].know[stepOf[j]];
    uint64_t everyone = 0;
    for (uint64_t k : know) everyone |= k;
    for (size_t j = 0; j < n; ++j) {
      const NodeOpDesc& d = *desc[j];
      uint64_t k = d.fullSync ? everyone : know[j];
      for (const NodeRead& r : d.reads) {
        std::vector<Cell> acc;
        for (size_t t = 0; t < r.sources.size(); ++t) {
          const NodePiece& src = r.sources[t];
          if (src.member >= n || src.index >= pieces[src.member].size()) {
            fail("%s: reads a piece that does not exist", where(j).c_str());
            return;
          }
          if (src.member != j && !d.writeShared[src.member][src.index]) {
            fail("%s: reads piece %u of member %u, which never enters the shared segment", where(j).c_str(), src.index,
                 src.member);
            return;
          }
          const std::vector<Cell>& in = pieces[src.member][src.index];
          if (in.size() != r.dst.count) {
            fail("%s: reads %zu elements from a piece of %zu", where(j).c_str(), r.dst.count, in.size());
            return;
          }
          k |= know[src.member];
          if (t == 0) {
            acc = in;
            continue;
          }
          for (size_t e = 0; e < acc.size(); ++e) {
            if (acc[e].elem != in[e].elem || (acc[e].mask & in[e].mask) || acc[e].divided || in[e].divided) {
              fail("%s: element %zu combines %s with %s", where(j).c_str(), e, cellText(acc[e]).c_str(), cellText(in[e]).c_str());
              return;
            }
            acc[e].mask |= in[e].mask;
          }
        }
        if (!write(members[j], stepOf[j], r.dst, acc)) return;
      }
      ranks_[static_cast<size_t>(members[j])].know[stepOf[j]] = k;
    }
    for (size_t j = 0; j < n; ++j) {
      RankState& st = ranks_[static_cast<size_t>(members[j])];
      st.blocked = false;
      complete(members[j], stepOf[j]);
    }
  }

  void match(const ChannelKey& key) {
    auto& sq = sends_[key];
    auto& rq = recvs_[key];
    while (!sq.empty() && !rq.empty() && result_.ok) {
      PostedSend ps = std::move(sq.front());
      sq.pop_front();
      const PostedRecv pr = rq.front();
      rq.pop_front();
      RankState& rs = ranks_[static_cast<size_t>(pr.rank)];
      const Step& recvStep = rs.plan->steps[pr.step];
      if (recvStep.dst.count != ps.data.size()) {
        fail("message from rank %d to rank %d tag %d: %zu elements sent (%s) but %zu expected (%s)", ps.rank, pr.rank,
             recvStep.tag, ps.data.size(),
             ranks_[static_cast<size_t>(ps.rank)].plan->describe(ps.step, a_.type).c_str(), recvStep.dst.count,
             rs.plan->describe(pr.step, a_.type).c_str());
        return;
      }
      ++result_.messages;
      if (!write(pr.rank, pr.step, recvStep.dst, ps.data)) return;
      rs.know[pr.step] |= ps.know;
      complete(ps.rank, ps.step);
      complete(pr.rank, pr.step);
    }
  }

  std::optional<Cell> expected(int r, size_t i) const {
    const int64_t n = static_cast<int64_t>(a_.count);
    const int64_t idx = static_cast<int64_t>(i);
    const uint64_t all = allRanks(p_);
    const bool avg = a_.op == strataAvg;
    const auto one = [](int rank) { return uint64_t{1} << rank; };
    switch (a_.coll) {
      case Collective::kAllReduce: return Cell{all, idx, avg};
      case Collective::kReduce: return Cell{all, idx, avg};
      case Collective::kBroadcast: return Cell{one(a_.root), idx, false};
      case Collective::kAllGather:
      case Collective::kGather: return Cell{one(static_cast<int>(idx / n)), idx % n, false};
      case Collective::kReduceScatter: return Cell{all, r * n + idx, avg};
      case Collective::kScatter: return Cell{one(a_.root), r * n + idx, false};
      case Collective::kAllToAll: return Cell{one(static_cast<int>(idx / n)), r * n + idx % n, false};
      case Collective::kScan: return Cell{allRanks(r + 1), idx, false};
      case Collective::kExscan:
        if (r == 0) return std::nullopt;
        return Cell{allRanks(r), idx, false};
      case Collective::kShift: return Cell{one(((r - a_.shift) % p_ + p_) % p_), idx, false};
      case Collective::kAllGatherv:
      case Collective::kGatherv: {
        const CollectiveArgs& mine = ra_[static_cast<size_t>(r)];
        for (int j = 0; j < p_; ++j) {
          const size_t d = mine.displs[static_cast<size_t>(j)], c = mine.counts[static_cast<size_t>(j)];
          if (i >= d && i < d + c) return Cell{one(j), static_cast<int64_t>(i - d), false};
        }
        return std::nullopt;  // a gap: must stay untouched
      }
      case Collective::kScatterv: {
        const CollectiveArgs& root = ra_[static_cast<size_t>(a_.root)];
        return Cell{one(a_.root), static_cast<int64_t>(root.sendDispls[static_cast<size_t>(r)] + i), false};
      }
      case Collective::kAllToAllv: {
        const CollectiveArgs& mine = ra_[static_cast<size_t>(r)];
        for (int j = 0; j < p_; ++j) {
          const size_t d = mine.displs[static_cast<size_t>(j)], c = mine.counts[static_cast<size_t>(j)];
          if (i >= d && i < d + c) {
            const size_t theirs = ra_[static_cast<size_t>(j)].sendDispls[static_cast<size_t>(r)];
            return Cell{one(j), static_cast<int64_t>(theirs + (i - d)), false};
          }
        }
        return std::nullopt;
      }
      case Collective::kReduceScatterv: {
        size_t prefix = 0;
        for (int j = 0; j < r; ++j) prefix += ra_[static_cast<size_t>(r)].counts[static_cast<size_t>(j)];
        return Cell{all, static_cast<int64_t>(prefix + i), avg};
      }
      default: return std::nullopt;
    }
  }

  void checkOutput(int r) {
    const RankState& st = ranks_[static_cast<size_t>(r)];
    const View rv = recvView(ra_[static_cast<size_t>(r)], r);
    const size_t re = recvElems(ra_[static_cast<size_t>(r)], r);
    const Buffer& b = st.buf[static_cast<int>(rv.buffer)];
    for (size_t i = 0; i < re; ++i) {
      const Cell& got = b.cells[rv.offset + i];
      std::optional<Cell> want = expected(r, i);
      if (!want) want = initial_[static_cast<size_t>(r)][rv.offset + i];  // must be untouched
      if (!(got == *want)) {
        fail("rank %d recv[%zu] holds %s, expected %s", r, i, cellText(got).c_str(), cellText(*want).c_str());
        return;
      }
    }
  }

  const Case& c_;
  const CollectiveArgs& a_;
  int p_;
  std::vector<CollectiveArgs> ra_;  // each rank's arguments
  std::vector<RankState> ranks_;
  std::vector<std::vector<Cell>> initial_;
  std::map<ChannelKey, std::deque<PostedSend>> sends_;
  std::map<ChannelKey, std::deque<PostedRecv>> recvs_;
  std::map<std::pair<std::string, int>, NodeRendezvous> rendezvous_;
  Result result_;
};

}  // namespace

CollectiveArgs rankArgs(const CollectiveArgs& a, int rank) {
  CollectiveArgs r = a;
  if (isRooted(a.coll) && rank != a.root) r.inPlace = false;
  if (a.coll == Collective::kBarrier) r.inPlace = false;
  return r;
}

View sendView(const CollectiveArgs& a, int rank) {
  if (!a.inPlace) return {BufferId::kSend, 0};
  const InPlaceAlias alias = inPlaceAlias(a, rank);
  return alias.sendInsideRecv ? View{BufferId::kRecv, alias.offset} : View{BufferId::kSend, 0};
}

View recvView(const CollectiveArgs& a, int rank) {
  if (!a.inPlace) return {BufferId::kRecv, 0};
  const InPlaceAlias alias = inPlaceAlias(a, rank);
  return alias.sendInsideRecv ? View{BufferId::kRecv, 0} : View{BufferId::kSend, alias.offset};
}

size_t sendElems(const CollectiveArgs& a, int rank) {
  const BufferUse u = sendUse(a, rank);
  return u.used ? u.elems : 0;  // a plan that reads an insignificant buffer reads out of range
}

size_t recvElems(const CollectiveArgs& a, int rank) {
  // Exscan's rank 0 passes a receive buffer all the same, which must stay untouched: it is checked.
  const BufferUse u = recvUse(a, rank);
  return u.used || specOf(a.coll).recvHolders == Holders::kAllButRankZero ? u.elems : 0;
}

const CollectiveArgs& Case::argsOf(int rank) const {
  return perRank.empty() ? args : perRank[static_cast<size_t>(rank)];
}

Result run(const Case& c) {
  Simulator sim(c);
  return sim.run();
}

}  // namespace strata::verify
