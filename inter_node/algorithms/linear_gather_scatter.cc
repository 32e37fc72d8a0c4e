// Linear (direct) gather and scatter, and their irregular variants (002, "Linear-array scatter",
// "Linear time irregular gather"): every rank exchanges its block with the root directly. The root
// handles p-1 messages, but no data travels twice and no rank but the root needs the counts, so
// this is the algorithm for large blocks and for gatherv/scatterv.
//   gather:  T(m) = (p-1) alpha + (p-1)/p beta m + c m/p   (c m/p: the root's own block, a copy within it;
//                                                           none in place)
//   scatter: T(m) = (p-1) alpha + (p-1)/p beta m           (the root's copy runs beside the sends)
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void buildGather(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const int p = g.size();
  const Slice mine{BufferId::kSend, 0, a.count};
  b.label("linear-gather", 0);
  if (g.me != a.root) {
    if (a.count != 0) b.send(g.rank(a.root), mine, 0);
    return;
  }
  const BlockLayout blocks = rankBlocks(a, p);
  const std::vector<Slice> out = blockSlices(Slice{BufferId::kRecv, 0, 0}, blocks);
  for (int j = 0; j < p; ++j) {
    b.label("linear-gather", j);
    if (j == g.me) b.copy(out[static_cast<size_t>(j)], mine.sub(0, out[static_cast<size_t>(j)].count));
    else if (out[static_cast<size_t>(j)].count != 0) b.recv(g.rank(j), out[static_cast<size_t>(j)], 0);
  }
}

void buildScatter(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const int p = g.size();
  const Slice out{BufferId::kRecv, 0, a.count};
  b.label("linear-scatter", 0);
  if (g.me != a.root) {
    if (a.count != 0) b.recv(g.rank(a.root), out, 0);
    return;
  }
  CollectiveArgs layoutArgs = a;
  layoutArgs.counts = a.sendCounts;
  layoutArgs.displs = a.sendDispls;
  const BlockLayout blocks = rankBlocks(layoutArgs, p);
  const std::vector<Slice> in = blockSlices(Slice{BufferId::kSend, 0, 0}, blocks);
  for (int j = 0; j < p; ++j) {
    b.label("linear-scatter", j);
    if (j == g.me) b.copy(out.sub(0, in[static_cast<size_t>(j)].count), in[static_cast<size_t>(j)]);
    else if (in[static_cast<size_t>(j)].count != 0) b.send(g.rank(j), in[static_cast<size_t>(j)], 0);
  }
}

double costScatter(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a) * p;
  return (p - 1) * c.alpha + (p - 1.0) / p * c.beta * m;
}
// The gather's root copies its own block as well as receiving the others' (a message within a node
// is its receiver's copy: the two add up), out of place (in place the block is already there); the
// scatter's root copies its own while the others receive.
double costGather(const CollectiveArgs& a, int p, const LinkCost& c) {
  return costScatter(a, p, c) + (a.inPlace ? 0 : c.copy * callBytes(a));
}

}  // namespace

extern const FlatAlgorithm kLinearGather = {"linear", Collective::kGather, nullptr, buildGather, costGather,
                                            "(p-1) a + (p-1)/p b m + c m/p"};
extern const FlatAlgorithm kLinearScatter = {"linear", Collective::kScatter, nullptr, buildScatter, costScatter,
                                             "(p-1) a + (p-1)/p b m"};
extern const FlatAlgorithm kLinearGatherv = {"linear", Collective::kGatherv, nullptr, buildGather, costGather,
                                             "(p-1) a + (p-1)/p b m + c m/p"};
extern const FlatAlgorithm kLinearScatterv = {"linear", Collective::kScatterv, nullptr, buildScatter, costScatter,
                                              "(p-1) a + (p-1)/p b m"};

}  // namespace strata
