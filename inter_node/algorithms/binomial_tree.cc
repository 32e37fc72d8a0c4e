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

BinomialLinks binomialLinks(const Group& g) {
  const int n = g.size();
  const int v = g.me;
  BinomialLinks t;
  const int low = v == 0 ? rootSpan(n) : (v & -v);
  t.parent = v == 0 ? -1 : v - low;
  t.subtreeEnd = std::min(v + low, n);
  for (int mask = 1; mask < low; mask <<= 1) {
    if (v + mask < n) t.children.push_back({v + mask, std::min(v + 2 * mask, n)});
  }
  return t;
}

WrappedSubtree binomialWrappedSubtree(int p, int root) {
  if (p <= 1 || root % p == 0) return {};
  const BinomialLinks t = binomialLinks(Group::world(p, 0));
  for (const BinomialLinks::Child& c : t.children) {
    const int len = c.subtreeEnd - c.member;
    if ((c.member + root) % p + len > p) {
      const BinomialLinks::Child& last = t.children.back();
      return {len, &c == &last, len >= last.subtreeEnd - last.member};
    }
  }
  return {};
}

void buildBinomialBroadcast(PlanBuilder& b, const Group& g, Slice src, Slice dst, int tagBase) {
  const BinomialLinks t = binomialLinks(g);
  b.label("binomial-broadcast", 0);
  Slice cur = src;
  if (t.parent < 0) {
    b.copy(dst, src);
  } else {
    b.recv(g.rank(t.parent), dst, tagBase);
    cur = dst;
  }
  // Children, largest subtree first, so the deepest path starts earliest; one send at a time, so
  // that each has the link to itself for its round (sends in flight together share the link and
  // would all finish at the end).
  int round = 0;
  StepId lastSend = kNoStep;
  for (auto c = t.children.rbegin(); c != t.children.rend(); ++c, ++round) {
    b.label("binomial-broadcast", round);
    lastSend = b.send(g.rank(c->member), cur, tagBase, {lastSend});
  }
}

void buildBinomialReduce(PlanBuilder& b, const Group& g, Slice input, Slice acc, int tagBase) {
  const BinomialLinks t = binomialLinks(g);
  Slice cur = input;
  int round = 0;
  // Children, smallest subtree first: they finish first.
  for (const BinomialLinks::Child& c : t.children) {
    b.label("binomial-reduce", round++);
    // Each child has its own slot, so all receives are posted at once.
    const Slice tmp = b.scratch(input.count);
    b.recv(g.rank(c.member), tmp, tagBase);
    b.reduce(acc, {cur, tmp});
    cur = acc;
  }
  if (t.parent >= 0) {
    b.label("binomial-reduce", round);
    b.send(g.rank(t.parent), cur, tagBase);
    return;
  }
  b.copy(acc, cur);  // the root of a one-member group
}

void buildBinomialGather(PlanBuilder& b, const Group& g, const BlockLayout& blocks, Slice mine, Slice image,
                         int tagBase) {
  const BinomialLinks t = binomialLinks(g);
  const int v = g.me;
  b.label("binomial-gather", 0);
  b.copy(blockRange(image, blocks, v, v + 1), mine);
  int round = 0;
  for (const BinomialLinks::Child& c : t.children) {
    b.label("binomial-gather", round++);
    const Slice child = blockRange(image, blocks, c.member, c.subtreeEnd);
    if (child.count != 0) b.recv(g.rank(c.member), child, tagBase);
  }
  if (t.parent >= 0) {
    b.label("binomial-gather", round);
    const Slice subtree = blockRange(image, blocks, v, t.subtreeEnd);
    if (subtree.count != 0) b.send(g.rank(t.parent), subtree, tagBase);
  }
}

StepId buildBinomialScatter(PlanBuilder& b, const Group& g, const BlockLayout& blocks, Slice source, Slice image,
                            int tagBase) {
  const BinomialLinks t = binomialLinks(g);
  const int v = g.me;
  b.label("binomial-scatter", 0);
  Slice cur = source;
  if (t.parent >= 0) {
    const Slice subtree = blockRange(image, blocks, v, t.subtreeEnd);
    if (subtree.count != 0) b.recv(g.rank(t.parent), subtree, tagBase);
    cur = image;
  }
  int round = 0;
  StepId lastSend = kNoStep;  // one send at a time, largest subtree first (as the broadcast)
  for (auto c = t.children.rbegin(); c != t.children.rend(); ++c, ++round) {
    b.label("binomial-scatter", round);
    const Slice child = blockRange(cur, blocks, c->member, c->subtreeEnd);
    if (child.count != 0) lastSend = b.send(g.rank(c->member), child, tagBase, {lastSend});
  }
  return lastSend;
}

}  // namespace strata
