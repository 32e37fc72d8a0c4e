// Binomial tree scatter (002, "Binomial tree-like, divide-and-conquer scatter") on the tree of
// binomial_tree.cc: the gather run backwards. The root sends each child's subtree range of its send buffer (copied into scratch
// first when the range wraps past rank p - 1); an inner member receives its subtree's blocks into
// scratch, forwards the children's ranges and keeps its own; a leaf receives straight into its
// receive buffer.
//   T(m) = ceil(log2 p) alpha + (p-1)/p beta m + c w m/p  (m: the scattered bytes; the root's copy of
//   its own block runs while the first child receives; w: the blocks of the subtree that wraps,
//   copied into scratch first, where it is the first send)
// with each round priced at the share of the ranks it keeps busy (kernels/plan/cost.h,
// binomialRound: the same sum where the host has a core per process).
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const Group tree = g.rotated(a.root);
  const BinomialLinks t = binomialLinks(tree);
  const int p = tree.size();
  const int v = tree.me;
  const size_t n = a.count;
  const Slice out{BufferId::kRecv, 0, n};
  b.label("binomial-scatter", 0);
  if (t.parent >= 0) {
    if (t.children.empty()) {
      b.recv(tree.rank(t.parent), out, 0);
      return;
    }
    const Slice image = b.scratch(static_cast<size_t>(t.subtreeEnd - v) * n);
    b.recv(tree.rank(t.parent), image, 0);
    int round = 0;
    StepId lastSend = kNoStep;
    for (auto c = t.children.rbegin(); c != t.children.rend(); ++c) {  // largest subtree first, one at a time
      b.label("binomial-scatter", round++);
      lastSend = b.send(tree.rank(c->member),
                        image.sub(static_cast<size_t>(c->member - v) * n, static_cast<size_t>(c->subtreeEnd - c->member) * n),
                        0, {lastSend});
    }
    b.copy(out, image.sub(0, n));
    return;
  }
  const Slice send{BufferId::kSend, 0, n * static_cast<size_t>(p)};
  int round = 0;
  // One send at a time, largest subtree first: each has the link to itself for its round (sends in
  // flight together would share it and all finish at the end).
  StepId lastSend = kNoStep;
  for (auto c = t.children.rbegin(); c != t.children.rend(); ++c) {
    b.label("binomial-scatter", round++);
    const int len = c->subtreeEnd - c->member;
    const int firstRank = (c->member + a.root) % p;
    if (firstRank + len <= p) {
      lastSend = b.send(tree.rank(c->member), send.sub(static_cast<size_t>(firstRank) * n, static_cast<size_t>(len) * n), 0,
                        {lastSend});
    } else {
      const Slice tmp = b.scratch(static_cast<size_t>(len) * n);
      const int head = p - firstRank;
      b.copy(tmp.sub(0, static_cast<size_t>(head) * n), send.sub(static_cast<size_t>(firstRank) * n, static_cast<size_t>(head) * n));
      b.copy(tmp.sub(static_cast<size_t>(head) * n, static_cast<size_t>(len - head) * n), send.sub(0, static_cast<size_t>(len - head) * n));
      lastSend = b.send(tree.rank(c->member), tmp, 0, {lastSend});
    }
  }
  b.label("binomial-scatter", 0);
  b.copy(out, send.sub(static_cast<size_t>(a.root) * n, n));
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a) * p;
  // The subtree that wraps is copied into scratch before it is sent: before everything where it
  // is the first send (the largest subtree goes first), else while an earlier send is under way.
  const WrappedSubtree w = binomialWrappedSubtree(p, a.root);
  return binomialSpreadTime(p, c, m, a.root) + (w.last ? c.copy * w.blocks * m / p : 0);
}

}  // namespace

extern const FlatAlgorithm kBinomialScatter = {"binomial", Collective::kScatter, nullptr, build, cost,
                                               "ceil(log p) a + (p-1)/p b m + c w m/p"};

}  // namespace strata
