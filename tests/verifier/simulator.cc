// The simulator's scheduling: ranks start their ready steps, messages match in order per channel.
#include "tests/verifier/simulator.h"

namespace strata::verify::detail {

Result Simulator::run() {
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

bool Simulator::init(int r) {
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

void Simulator::complete(int r, StepId s) {
  RankState& st = ranks_[static_cast<size_t>(r)];
  st.state[s] = 2;
  ++st.done;
  const Plan& plan = *st.plan;
  for (uint32_t k = plan.succBegin[s]; k < plan.succBegin[s + 1]; ++k) {
    const StepId next = plan.succ[k];
    if (--st.remaining[next] == 0) st.ready.push_back(next);
  }
}

void Simulator::start(int r, StepId s) {
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

void Simulator::match(const ChannelKey& key) {
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

}  // namespace strata::verify::detail
