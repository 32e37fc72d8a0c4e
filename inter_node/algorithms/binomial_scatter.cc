// Binomial tree scatter (002, "Binomial tree-like, divide-and-conquer scatter"): the gather run
// backwards. The root sends each child's subtree range of its send buffer (copied into scratch
// first when the range wraps past rank p - 1); an inner member receives its subtree's blocks into
// scratch, forwards the children's ranges and keeps its own; a leaf receives straight into its
// receive buffer.
//   T(m) = ceil(log2 p) alpha + (p-1)/p beta m          (m: the scattered bytes)
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const Group tree = g.rotated(a.root);
  const int p = tree.size();
  const int v = tree.me;
  const size_t n = a.count;
  const Slice out{BufferId::kRecv, 0, n};
  if (v != 0) {
    int low = 1;
    while ((v & low) == 0 && low < p) low <<= 1;
    const int subtree = std::min(low, p - v);
    b.label("binomial-scatter", 0);
    if (subtree == 1) {
      b.recv(tree.rank(v - low), out, 0);
      return;
    }
    const Slice image = b.scratch(static_cast<size_t>(subtree) * n);
    b.recv(tree.rank(v - low), image, 0);
    int round = 0;
    for (int mask = low >> 1; mask > 0; mask >>= 1, ++round) {
      if (v + mask >= p) continue;
      b.label("binomial-scatter", round);
      const int len = std::min(mask, p - v - mask);
      b.send(tree.rank(v + mask), image.sub(static_cast<size_t>(mask) * n, static_cast<size_t>(len) * n), 0);
    }
    b.copy(out, image.sub(0, n));
    return;
  }
  const Slice send{BufferId::kSend, 0, n * static_cast<size_t>(p)};
  int span = 1;
  while (span < p) span <<= 1;
  int round = 0;
  for (int mask = span >> 1; mask > 0; mask >>= 1, ++round) {
    b.label("binomial-scatter", round);
    const int len = std::min(mask, p - mask);
    const int firstRank = (mask + a.root) % p;
    if (firstRank + len <= p) {
      b.send(tree.rank(mask), send.sub(static_cast<size_t>(firstRank) * n, static_cast<size_t>(len) * n), 0);
    } else {
      const Slice tmp = b.scratch(static_cast<size_t>(len) * n);
      const int head = p - firstRank;
      b.copy(tmp.sub(0, static_cast<size_t>(head) * n), send.sub(static_cast<size_t>(firstRank) * n, static_cast<size_t>(head) * n));
      b.copy(tmp.sub(static_cast<size_t>(head) * n, static_cast<size_t>(len - head) * n), send.sub(0, static_cast<size_t>(len - head) * n));
      b.send(tree.rank(mask), tmp, 0);
    }
  }
  b.label("binomial-scatter", 0);
  b.copy(out, send.sub(static_cast<size_t>(a.root) * n, n));
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a) * p;
  return ceilLog2(p) * c.alpha + (p - 1.0) / p * c.beta * m;
}

}  // namespace

extern const FlatAlgorithm kBinomialScatter = {"binomial", Collective::kScatter, nullptr, build, cost,
                                               "ceil(log p) a + (p-1)/p b m"};

}  // namespace strata
