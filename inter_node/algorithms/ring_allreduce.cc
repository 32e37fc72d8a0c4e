// Ring allreduce = ring reduce-scatter + ring allgather (002, "Linear-ring reduce-scatter":
// "combining reduce-scatter with allgather immediately gives" allreduce).
//   T(m) = 2(p-1) alpha + 2(p-1)/p beta m + (p-1)/p gamma m
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const int p = g.size();
  // Blocks of whole 64-byte lines keep every block's vector loads aligned.
  const size_t granule = std::max<size_t>(1, 64 / a.elemSize());
  const BlockLayout blocks = BlockLayout::even(a.count, p, granule);
  std::vector<Slice> input(static_cast<size_t>(p)), out(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) {
    input[static_cast<size_t>(i)] = Slice{BufferId::kSend, blocks.offset[static_cast<size_t>(i)], blocks.count[static_cast<size_t>(i)]};
    out[static_cast<size_t>(i)] = Slice{BufferId::kRecv, blocks.offset[static_cast<size_t>(i)], blocks.count[static_cast<size_t>(i)]};
  }
  const Slice mine = out[static_cast<size_t>(g.me)];
  b.setPhase(0);
  buildRingReduceScatter(b, g, input, mine);
  divideIfAverage(b, a, mine);
  b.setPhase(1);
  buildRingAllGather(b, g, mine, out);
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a);
  return 2 * (p - 1) * c.alpha + 2.0 * (p - 1) / p * c.beta * m + (p - 1.0) / p * c.gamma * m;
}

}  // namespace

extern const FlatAlgorithm kRingAllReduce = {"ring", Collective::kAllReduce, nullptr, build, cost,
                                             "2(p-1) a + 2(p-1)/p b m + (p-1)/p g m"};

}  // namespace strata
