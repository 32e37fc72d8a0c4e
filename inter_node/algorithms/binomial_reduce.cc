// Binomial tree reduce (002, "Binomial tree reduction"): ceil(log2 p) rounds, each carrying and
// reducing the whole vector. The small-message reduce.
//   T(m) = ceil(log2 p)(alpha + beta m + gamma m)
// with each round priced at the share of the ranks it keeps busy (kernels/plan/cost.h,
// binomialRound: the same sum where the host has a core per process).
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const Group tree = g.rotated(a.root);
  // Only the root may write its receive buffer (NCCL: recvbuff is significant at the root only).
  const Slice acc = tree.me == 0 ? Slice{BufferId::kRecv, 0, a.count} : b.scratch(a.count);
  buildBinomialReduce(b, tree, Slice{BufferId::kSend, 0, a.count}, acc);
  if (tree.me == 0) divideIfAverage(b, a, acc);
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a);
  return binomialTreeTime(p, c, m, m, a.root);
}

}  // namespace

extern const FlatAlgorithm kBinomialReduce = {"binomial", Collective::kReduce, nullptr, build, cost,
                                              "ceil(log p)(a + b m + g m)"};

}  // namespace strata
