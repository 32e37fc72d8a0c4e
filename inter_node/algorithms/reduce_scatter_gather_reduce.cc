// Reduce = ring reduce-scatter + binomial gather (002, "Linear-ring reduce-scatter": "combining
// reduce-scatter with allgather/gather immediately gives" reduce). The large-message reduce.
//   T(m) = (p-1)(alpha + beta m/p) + (p-1)/p gamma m + ceil(log2 p) alpha + (p-1)/p beta m
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const Group tree = g.rotated(a.root);
  const int n = tree.size();
  const size_t granule = std::max<size_t>(1, 64 / a.elemSize());
  const BlockLayout blocks = BlockLayout::even(a.count, n, granule);
  // The root assembles the result in its receive buffer; the others in scratch laid out alike.
  const Slice image = tree.me == 0 ? Slice{BufferId::kRecv, 0, a.count} : b.scratch(a.count);
  std::vector<Slice> input(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) input[static_cast<size_t>(i)] = Slice{BufferId::kSend, blocks.offset[static_cast<size_t>(i)], blocks.count[static_cast<size_t>(i)]};
  const Slice mine = image.sub(blocks.offset[static_cast<size_t>(tree.me)], blocks.count[static_cast<size_t>(tree.me)]);
  b.setPhase(0);
  buildRingReduceScatter(b, tree, input, mine);
  divideIfAverage(b, a, mine);
  b.setPhase(1);
  buildBinomialGather(b, tree, blocks, mine, image);
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a);
  return (p - 1) * (c.alpha + c.beta * m / p) + (p - 1.0) / p * c.gamma * m + binomialSpreadTime(p, c, m, a.root);
}

}  // namespace

extern const FlatAlgorithm kReduceScatterGatherReduce = {
    "reduce_scatter_gather", Collective::kReduce, nullptr, build, cost,
    "(p-1)(a + b m/p) + (p-1)/p g m + ceil(log p) a + (p-1)/p b m"};

}  // namespace strata
