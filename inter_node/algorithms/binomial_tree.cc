// Binomial trees rooted at member 0 of a group (002, "The power of trees": binomial tree gather,
// reduction, broadcast; "Binomial tree-like, divide-and-conquer scatter" for p not a power of
// two). Member v's parent is v - lowbit(v); its children are v + 2^k for 2^k < lowbit(v), and its
// subtree is the range [v, v + lowbit(v)) clipped to p. Rooted collectives rotate their group so
// that the root is member 0.
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

// Element range of blocks [lo, hi) clipped to n members; blocks are consecutive in `whole`.
Slice blockRange(Slice whole, const BlockLayout& blocks, int lo, int hi) {
  hi = std::min(hi, blocks.size());
  if (lo >= hi) return whole.sub(0, 0);
  const size_t begin = blocks.offset[static_cast<size_t>(lo)];
  const size_t end = blocks.offset[static_cast<size_t>(hi - 1)] + blocks.count[static_cast<size_t>(hi - 1)];
  return whole.sub(begin, end - begin);
}

// The smallest power of two >= n (the root's "lowbit").
int rootSpan(int n) {
  int span = 1;
  while (span < n) span <<= 1;
  return span;
}

}  // namespace

void buildBinomialBroadcast(PlanBuilder& b, const Group& g, Slice src, Slice dst, int tagBase) {
  const int n = g.size();
  const int v = g.me;
  b.label("binomial-broadcast", 0);
  Slice cur = src;
  int mask = 1;
  if (v == 0) {
    b.copy(dst, src);
    mask = rootSpan(n);
  } else {
    while ((v & mask) == 0) mask <<= 1;
    b.recv(g.rank(v - mask), dst, tagBase);
    cur = dst;
  }
  // Children, largest subtree first, so the deepest path starts earliest.
  int round = 0;
  for (mask >>= 1; mask > 0; mask >>= 1, ++round) {
    if (v + mask < n) {
      b.label("binomial-broadcast", round);
      b.send(g.rank(v + mask), cur, tagBase);
    }
  }
}

void buildBinomialReduce(PlanBuilder& b, const Group& g, Slice input, Slice acc, int tagBase) {
  const int n = g.size();
  const int v = g.me;
  Slice cur = input;
  int round = 0;
  for (int mask = 1; mask < n; mask <<= 1, ++round) {
    b.label("binomial-reduce", round);
    if (v & mask) {
      b.send(g.rank(v - mask), cur, tagBase);
      return;
    }
    if (v + mask < n) {
      // Each child has its own slot, so all receives are posted at once.
      const Slice tmp = b.scratch(input.count);
      b.recv(g.rank(v + mask), tmp, tagBase);
      b.reduce(acc, {cur, tmp});
      cur = acc;
    }
  }
  b.copy(acc, cur);  // the root of a one-member group
}

void buildBinomialGather(PlanBuilder& b, const Group& g, const BlockLayout& blocks, Slice mine, Slice image,
                         int tagBase) {
  const int n = g.size();
  const int v = g.me;
  b.label("binomial-gather", 0);
  b.copy(blockRange(image, blocks, v, v + 1), mine);
  int round = 0;
  for (int mask = 1; mask < n; mask <<= 1, ++round) {
    b.label("binomial-gather", round);
    if (v & mask) {
      const Slice subtree = blockRange(image, blocks, v, v + mask);
      if (subtree.count != 0) b.send(g.rank(v - mask), subtree, tagBase);
      return;
    }
    if (v + mask < n) {
      const Slice child = blockRange(image, blocks, v + mask, v + 2 * mask);
      if (child.count != 0) b.recv(g.rank(v + mask), child, tagBase);
    }
  }
}

void buildBinomialScatter(PlanBuilder& b, const Group& g, const BlockLayout& blocks, Slice source, Slice image,
                          int tagBase) {
  const int n = g.size();
  const int v = g.me;
  b.label("binomial-scatter", 0);
  Slice cur = source;
  int mask = 1;
  if (v == 0) {
    mask = rootSpan(n);
  } else {
    while ((v & mask) == 0) mask <<= 1;
    const Slice subtree = blockRange(image, blocks, v, v + mask);
    if (subtree.count != 0) b.recv(g.rank(v - mask), subtree, tagBase);
    cur = image;
  }
  int round = 0;
  for (mask >>= 1; mask > 0; mask >>= 1, ++round) {
    if (v + mask < n) {
      b.label("binomial-scatter", round);
      const Slice child = blockRange(cur, blocks, v + mask, v + 2 * mask);
      if (child.count != 0) b.send(g.rank(v + mask), child, tagBase);
    }
  }
}

}  // namespace strata
