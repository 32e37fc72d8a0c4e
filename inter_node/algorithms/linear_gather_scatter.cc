// Linear (direct) gather and scatter, and their irregular variants (002, "Linear-array scatter",
// "Linear time irregular gather"): every rank exchanges its block with the root directly. The root
// handles p-1 messages, but no data travels twice and no rank but the root needs the counts, so
// this is the algorithm for large blocks and for gatherv/scatterv.
// Through a network the root's link carries its p-1 messages one after another (002's model), and
// the root's copy of its own block runs beside them:
//   T(m) = (p-1) alpha + (p-1)/p beta m
// On one host (LinkCost::oneHost) each message is its receiver's copy: the scatter's p-1 receivers
// copy their blocks at once, the root its own beside them (out of place), one round at the share
// of the host they keep busy; the gather's root copies the p-1 blocks one after another and its
// own (out of place; in place it is there already), the others waiting; the latencies overlap:
//   scatter: T(m) = alpha_r + beta_r m/p                   (_r: p busy, p-1 in place)
//   gather:  T(m) = alpha_1 + (p-1)/p beta_1 m + c_1 m/p   (_1: one busy; c: a copy within a rank)
// (the development VM's 8 ranks, 64 KiB - 16 MiB: the scatter measured 24-658 us, the gather
// 25-1447, against 119-5649 and 120-5853 through the network's formulas).
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
  if (c.oneHost) {
    const LinkCost r = receiving(c, a.inPlace ? p - 1 : p, p);  // out of place the root copies its own block too
    return r.alpha + r.beta * m / p;
  }
  return (p - 1) * c.alpha + (p - 1.0) / p * c.beta * m;
}
double costGather(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a) * p;
  if (c.oneHost) {
    const LinkCost one = receiving(c, 1, p);
    return one.alpha + (p - 1.0) / p * one.beta * m + (a.inPlace ? 0 : one.copy * m / p);
  }
  return (p - 1) * c.alpha + (p - 1.0) / p * c.beta * m;
}

constexpr const char* kGatherFormula = "(p-1) a + (p-1)/p b m; one host: a + (p-1)/p b m + c m/p, the root copying alone";
constexpr const char* kScatterFormula = "(p-1) a + (p-1)/p b m; one host: a + b m/p, the receivers copying at once";

}  // namespace

extern const FlatAlgorithm kLinearGather = {"linear", Collective::kGather, nullptr, buildGather, costGather,
                                            kGatherFormula};
extern const FlatAlgorithm kLinearScatter = {"linear", Collective::kScatter, nullptr, buildScatter, costScatter,
                                             kScatterFormula};
extern const FlatAlgorithm kLinearGatherv = {"linear", Collective::kGatherv, nullptr, buildGather, costGather,
                                             kGatherFormula};
extern const FlatAlgorithm kLinearScatterv = {"linear", Collective::kScatterv, nullptr, buildScatter, costScatter,
                                              kScatterFormula};

}  // namespace strata
