// Recursive-halving reduce-scatter (002, "The power of the hypercube/butterfly"): log2 p' rounds,
// each exchanging half of the remaining vector with partner r XOR 2^k; the pairing step folds p
// to a power of two p' first, and the pair's odd member hands the even one its block at the end.
//   T(m) = log2(p') alpha + (p'-1)/p' (beta + gamma) m  [+ alpha + (beta + gamma) m + alpha + beta m/p if p != p']
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
  double t = ceilLog2(p2) * c.alpha + (p2 - 1.0) / p2 * (c.beta + c.gamma) * m;
  if (p2 != p) t += 2 * c.alpha + (c.beta + c.gamma) * m + c.beta * m / p;
  return t;
}

}  // namespace

extern const FlatAlgorithm kRecursiveHalvingReduceScatter = {
    "recursive_halving", Collective::kReduceScatter, nullptr, build, cost,
    "log p' a + (p'-1)/p' (b + g) m [+ 2a + (b + g) m + b m/p if p != p']"};
extern const FlatAlgorithm kRecursiveHalvingReduceScatterv = {
    "recursive_halving", Collective::kReduceScatterv, nullptr, build, cost,
    "log p' a + (p'-1)/p' (b + g) m [+ 2a + (b + g) m + b m/p if p != p']"};

}  // namespace strata
