// Recursive-halving reduce-scatter (002, "The power of the hypercube/butterfly"): log2 p' rounds,
// each exchanging half of the remaining vector with partner r XOR 2^k; the pairing step folds p
// to a power of two p' first, and the pair's odd member hands the even one its block at the end.
//   T(m) = log2(p') alpha + (p'-1)/p' (beta + gamma) m                       (p = p')
//   T(m) = (log2(p') + 2) alpha + (beta + gamma) m + beta m/p + sum over the rounds of
//          beta max(k, s) + gamma k                                            (p != p')
// k and s: what the busiest member keeps and sends in a round, its pair's double block among them
// (for p = 3: k = 2m/3, s = m/3).
#include <algorithm>

#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const int p = g.size();
  const BlockLayout blocks = rankBlocks(a, p);  // consecutive in the send buffer
  const size_t total = blocks.total();
  const Fold f = makeFold(g);
  const Slice sendAll{BufferId::kSend, 0, total};
  const Slice result{BufferId::kRecv, 0, blocks.count[static_cast<size_t>(g.me)]};
  // Virtual rank j covers the blocks of the real ranks that it stands for: 2j and 2j+1 for the
  // folded pairs, j + rem otherwise. Those are consecutive, so each virtual block is a range.
  BlockLayout vblocks;
  vblocks.offset.resize(static_cast<size_t>(f.p2));
  vblocks.count.resize(static_cast<size_t>(f.p2));
  for (int j = 0; j < f.p2; ++j) {
    const int first = j < f.rem ? 2 * j : j + f.rem;
    const int n = j < f.rem ? 2 : 1;
    vblocks.offset[static_cast<size_t>(j)] = blocks.offset[static_cast<size_t>(first)];
    size_t c = 0;
    for (int t = 0; t < n; ++t) c += blocks.count[static_cast<size_t>(first + t)];
    vblocks.count[static_cast<size_t>(j)] = c;
  }
  const bool folded = g.me < 2 * f.rem;
  const bool even = g.me % 2 == 0;
  // The user's send buffer is never written: partial sums live in scratch. A folded odd member's
  // virtual block is its even partner's block, then its own: the partner's part is reduced into
  // scratch and sent on, its own (like every other member's) straight into the result.
  const Slice partnerBlock = folded && !even ? b.scratch(blocks.count[static_cast<size_t>(g.me - 1)]) : Slice{};

  b.setPhase(0);
  b.label("pair-reduce", 0);
  Slice in = sendAll;
  if (folded && even) {
    b.send(g.rank(g.me + 1), sendAll, 0);
  } else if (folded) {
    const Slice tmp = b.scratch(total);
    b.recv(g.rank(g.me - 1), tmp, 0);
    b.reduce(tmp, {sendAll, tmp});
    in = tmp;
  }
  if (f.vme >= 0) {
    b.setPhase(1);
    buildRecursiveHalving(b, f.vpeers, f.vme, vblocks, in, folded ? std::vector<Slice>{partnerBlock, result}
                                                                    : std::vector<Slice>{result}, 0);
  }
  b.setPhase(2);
  b.label("pair-result", 0);
  if (folded && even) {
    if (result.count) b.recv(g.rank(g.me + 1), result, 0);
  } else {
    if (folded) {
      divideIfAverage(b, a, partnerBlock);
      if (partnerBlock.count) b.send(g.rank(g.me - 1), partnerBlock, 0);
    }
    divideIfAverage(b, a, result);
  }
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const int p2 = floorPow2(p);
  const double m = callBytes(a) * p;
  if (p2 == p) {  // round `mask` sends and adds mask/p' of m, each round at its own crossings
    double t = 0;
    for (int mask = p2 / 2; mask >= 1; mask >>= 1) {
      const LinkCost k = butterflyRound(c, p, mask);
      t += k.alpha + static_cast<double>(mask) / p2 * (k.beta + k.gamma) * m;
    }
    return t;
  }
  // Folded: virtual block j < rem is a pair's two blocks. The busiest member is virtual rank 0's
  // odd one: it receives and adds its partner's vector, keeps the range [0, mask) of virtual blocks
  // in each round (the most pairs; it receives and adds that, and sends [mask, 2 mask)), and hands
  // its partner's block back at the end.
  const int rem = p - p2;
  auto blocks = [rem](int lo, int hi) { return (hi - lo) + std::max(0, std::min(hi, rem) - lo); };  // of m/p
  double t = 2 * c.alpha + (c.beta + c.gamma) * m + c.beta * m / p;
  for (int mask = p2 / 2; mask >= 1; mask >>= 1) {
    const double kept = blocks(0, mask) * m / p, sent = blocks(mask, 2 * mask) * m / p;
    const double largest = std::max(blocks(0, mask), blocks(mask, 2 * mask));
    const LinkCost k = butterflyRound(c, p, mask, [mask, &blocks, largest](int j) {  // the half it hands over
      const int other = (j & ~(mask - 1)) ^ mask;
      return blocks(other, other + mask) / largest;
    });
    t += k.alpha + k.beta * std::max(kept, sent) + k.gamma * kept;
  }
  return t;
}

}  // namespace

extern const FlatAlgorithm kRecursiveHalvingReduceScatter = {
    "recursive_halving", Collective::kReduceScatter, nullptr, build, cost,
    "log p' a + (p'-1)/p' (b + g) m; folded: + 2a + (b + g) m + b m/p, the rounds by the busiest's blocks"};
extern const FlatAlgorithm kRecursiveHalvingReduceScatterv = {
    "recursive_halving", Collective::kReduceScatterv, nullptr, build, cost,
    "log p' a + (p'-1)/p' (b + g) m; folded: + 2a + (b + g) m + b m/p, the rounds by the busiest's blocks"};

}  // namespace strata
