// Van de Geijn broadcast = binomial scatter + ring allgather (002, "The Van de Geijn
// implementations": "Broadcast = Scatter + Allgather").
//   T(m) = ceil(log2 p) alpha + (p-1)/p beta m + (p-1)(alpha + beta m/p)
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const Group tree = g.rotated(a.root);
  const int n = tree.size();
  const size_t granule = std::max<size_t>(1, 64 / a.elemSize());
  // Block v belongs to virtual rank v, so every subtree's blocks are one contiguous range.
  const BlockLayout blocks = BlockLayout::even(a.count, n, granule);
  const Slice src{BufferId::kSend, 0, a.count};
  const Slice dst{BufferId::kRecv, 0, a.count};
  b.setPhase(0);
  const StepId lastScatterSend = buildBinomialScatter(b, tree, blocks, src, dst);
  std::vector<Slice> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out[static_cast<size_t>(i)] = dst.sub(blocks.offset[static_cast<size_t>(i)], blocks.count[static_cast<size_t>(i)]);
  const Slice mine = (tree.me == 0 ? src : dst).sub(blocks.offset[static_cast<size_t>(tree.me)], blocks.count[static_cast<size_t>(tree.me)]);
  b.setPhase(1);
  // The ring's sends wait for this rank's scatter sends: on a link the two would share, the ring's
  // blocks would slow the scatter's forwarding, which the ranks below are waiting for.
  buildRingAllGather(b, tree, mine, out, 0, lastScatterSend);
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a);
  return binomialSpreadTime(p, c, m, a.root) + (p - 1) * (c.alpha + c.beta * m / p);
}

}  // namespace

extern const FlatAlgorithm kScatterAllGatherBroadcast = {
    "scatter_allgather", Collective::kBroadcast, nullptr, build, cost,
    "ceil(log p) a + (p-1)/p b m + (p-1)(a + b m/p)"};

}  // namespace strata
