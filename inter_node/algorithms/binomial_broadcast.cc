// Binomial tree broadcast (002, "Binomial tree broadcast"): ceil(log2 p) rounds, each carrying the
// whole message. The small-message broadcast.
//   T(m) = ceil(log2 p)(alpha + beta m)
// with each round priced at the share of the ranks it keeps busy (kernels/plan/cost.h,
// binomialRound: the same sum where the host has a core per process).
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  buildBinomialBroadcast(b, g.rotated(a.root), Slice{BufferId::kSend, 0, a.count}, Slice{BufferId::kRecv, 0, a.count});
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  return binomialTreeTime(p, c, callBytes(a), 0, a.root);
}

}  // namespace

extern const FlatAlgorithm kBinomialBroadcast = {"binomial", Collective::kBroadcast, nullptr, build, cost,
                                                 "ceil(log p)(a + b m)"};

}  // namespace strata
