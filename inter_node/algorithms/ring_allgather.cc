// Ring allgather (002, "Linear-ring allgather").
//   T(m) = (p-1)(alpha + beta m/p) + c m/p        (m: the gathered vector; c m/p out of place)
// c m/p: the copy of the rank's own block from its send buffer, within the rank (LinkCost::copy);
// none in place, and none in the allgather phase of an allreduce, which prices its own phases.
#include "inter_node/algorithms/algorithm.h"

namespace strata {

void buildRingAllGather(PlanBuilder& b, const Group& g, Slice mine, const std::vector<Slice>& out, int tagBase,
                        StepId sendsAfter) {
  const int p = g.size();
  const int r = g.me;
  b.label("allgather", 0);
  b.copy(out[static_cast<size_t>(r)], mine);
  const int right = g.relative(1);
  const int left = g.relative(-1);
  auto block = [p](int i) { return ((i % p) + p) % p; };
  for (int s = 0; s < p - 1; ++s) {
    b.label("allgather", s);
    const int sendBlock = block(r - s);
    const int recvBlock = block(r - s - 1);
    const Slice& sendSlice = out[static_cast<size_t>(sendBlock)];
    if (sendSlice.count != 0) b.send(right, s == 0 ? mine : sendSlice, tagBase + s, {sendsAfter});
    if (out[static_cast<size_t>(recvBlock)].count != 0) b.recv(left, out[static_cast<size_t>(recvBlock)], tagBase + s);
  }
}

namespace {

// Allgather(v): block i of the receive buffer comes from rank i.
void buildAllGather(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const std::vector<Slice> out = blockSlices(Slice{BufferId::kRecv, 0, 0}, rankBlocks(a, g.size()));
  buildRingAllGather(b, g, Slice{BufferId::kSend, 0, a.count}, out);
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a) * p;
  return (p - 1) * (c.alpha + c.beta * m / p) + (a.inPlace ? 0 : c.copy * m / p);
}

}  // namespace

extern const FlatAlgorithm kRingAllGather = {"ring", Collective::kAllGather, nullptr, buildAllGather, cost,
                                             "(p-1)(a + b m/p) + c m/p"};
extern const FlatAlgorithm kRingAllGatherv = {"ring", Collective::kAllGatherv, nullptr, buildAllGather, cost,
                                              "(p-1)(a + b m/p) + c m/p"};

}  // namespace strata
