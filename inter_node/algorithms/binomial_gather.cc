// Binomial tree gather (002, "Binomial tree gather"; "Binomial gather/scatter with root != 0") on
// the tree of binomial_tree.cc. Virtual ranks v = rank - root: member v collects the blocks of its
// subtree in scratch, in virtual order, and sends them to its parent in one message. The root receives
// each subtree straight into its receive buffer unless the subtree's ranks wrap past p - 1; those
// land in scratch and are copied in two pieces.
//   T(m) = ceil(log2 p) alpha + (p-1)/p beta m + c m/p + c w m/p
//   (m: the gathered bytes; c m/p: the root's own block, a copy within it: on one host,
//   LinkCost::oneHost, where the root's core also copies each message it receives; through a
//   network it runs beside the first receive; none in place. w: the blocks of the subtree that
//   wraps, copied out of scratch: where it arrives last or on one host; else beside later receives)
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
  const Slice mine{BufferId::kSend, 0, n};
  b.label("binomial-gather", 0);
  if (t.parent >= 0) {
    if (t.children.empty()) {  // a leaf sends its own block, no copy
      b.send(tree.rank(t.parent), mine, 0);
      return;
    }
    // My subtree's blocks in virtual order, mine first.
    const Slice image = b.scratch(static_cast<size_t>(t.subtreeEnd - v) * n);
    b.copy(image.sub(0, n), mine);
    int round = 0;
    for (const BinomialLinks::Child& c : t.children) {
      b.label("binomial-gather", round++);
      b.recv(tree.rank(c.member),
             image.sub(static_cast<size_t>(c.member - v) * n, static_cast<size_t>(c.subtreeEnd - c.member) * n), 0);
    }
    b.send(tree.rank(t.parent), image, 0);
    return;
  }
  // The root: its own block, then each child's subtree.
  const Slice recv{BufferId::kRecv, 0, n * static_cast<size_t>(p)};
  b.copy(recv.sub(static_cast<size_t>(a.root) * n, n), mine);
  int round = 0;
  for (const BinomialLinks::Child& c : t.children) {
    b.label("binomial-gather", round++);
    const int len = c.subtreeEnd - c.member;
    const int firstRank = (c.member + a.root) % p;
    if (firstRank + len <= p) {
      b.recv(tree.rank(c.member), recv.sub(static_cast<size_t>(firstRank) * n, static_cast<size_t>(len) * n), 0);
    } else {
      const Slice tmp = b.scratch(static_cast<size_t>(len) * n);
      b.recv(tree.rank(c.member), tmp, 0);
      const int head = p - firstRank;  // blocks up to rank p-1, then from rank 0
      b.copy(recv.sub(static_cast<size_t>(firstRank) * n, static_cast<size_t>(head) * n), tmp.sub(0, static_cast<size_t>(head) * n));
      b.copy(recv.sub(0, static_cast<size_t>(len - head) * n), tmp.sub(static_cast<size_t>(head) * n, static_cast<size_t>(len - head) * n));
    }
  }
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a) * p;
  // The subtree that wraps lands in scratch and is copied into place after it arrives: after the
  // whole gather where it is the last to arrive (no subtree larger), or where the root's core
  // copies every message.
  const WrappedSubtree w = binomialWrappedSubtree(p, a.root);
  const double wrapped = w.largest || c.oneHost ? w.blocks * m / p : 0;
  return binomialSpreadTime(p, c, m, a.root) + c.copy * ((a.inPlace || !c.oneHost ? 0 : m / p) + wrapped);
}

}  // namespace

extern const FlatAlgorithm kBinomialGather = {"binomial", Collective::kGather, nullptr, build, cost,
                                              "ceil(log p) a + (p-1)/p b m + c w m/p; one host: + c m/p"};

}  // namespace strata
