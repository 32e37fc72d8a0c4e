// Node ops in the simulator: each team member enters when it has nothing else to start; the op
// runs once every member has arrived.
#include "tests/verifier/simulator.h"

namespace strata::verify::detail {

std::string Simulator::teamKey(const std::vector<int>& members) {
  std::string k;
  for (int m : members) k += std::to_string(m) + ",";
  return k;
}

void Simulator::enterNodeOp(int r, StepId s) {
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

void Simulator::executeNodeOp(const std::vector<int>& members, const NodeRendezvous& rv) {
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

}  // namespace strata::verify::detail
