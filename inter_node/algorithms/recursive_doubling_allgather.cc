// Recursive doubling allgather and allgatherv (002, "The power of the hypercube/butterfly:
// Allgather"): log2 p' rounds exchanging everything gathered so far with partner r XOR 2^k; for p
// not a power of two the pairs (2j, 2j+1), j < p - p', first merge their blocks into the odd
// member, which afterwards hands the even one the whole result. The blocks are gathered in rank
// order in the receive buffer, or in scratch when the displacements leave gaps.
//   T(m) = log2(p') alpha + (p' - 1 + sum_k min(rem, 2^k)) beta m/p + c m/p
//          [+ 2 alpha + beta (m/p + m) if rem = p - p' > 0]
// Round k exchanges 2^k virtual blocks, and the merged ones (2m/p each) sit in the first rem: the
// group holding them sends (2^k + min(rem, 2^k)) m/p, and every round waits for it. With p a power
// of two this is (p-1)/p beta m. (c m/p: the copy of the rank's own block into the receive buffer,
// LinkCost::copy.)
#include <algorithm>

#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const int p = g.size();
  const int me = g.me;
  const BlockLayout blocks = rankBlocks(a, p);
  const BlockLayout packed = packedLayout(blocks);
  const bool direct = isPacked(blocks);
  const size_t total = packed.total();
  const Slice image = direct ? Slice{BufferId::kRecv, 0, total} : b.scratch(total);
  auto rankBlock = [&](int i) { return image.sub(packed.offset[static_cast<size_t>(i)], packed.count[static_cast<size_t>(i)]); };
  const Fold f = makeFold(g);
  BlockLayout vblocks;
  vblocks.offset.resize(static_cast<size_t>(f.p2));
  vblocks.count.resize(static_cast<size_t>(f.p2));
  for (int j = 0; j < f.p2; ++j) {
    const int firstRank = j < f.rem ? 2 * j : j + f.rem;
    const int n = j < f.rem ? 2 : 1;
    vblocks.offset[static_cast<size_t>(j)] = packed.offset[static_cast<size_t>(firstRank)];
    size_t c = 0;
    for (int t = 0; t < n; ++t) c += packed.count[static_cast<size_t>(firstRank + t)];
    vblocks.count[static_cast<size_t>(j)] = c;
  }
  const bool folded = me < 2 * f.rem;
  const bool even = me % 2 == 0;
  b.setPhase(0);
  b.label("pair-merge", 0);
  const Slice own{BufferId::kSend, 0, a.count};
  b.copy(rankBlock(me), own);
  if (folded && even && rankBlock(me).count) b.send(g.rank(me + 1), rankBlock(me), 0);
  StepId merged = kNoStep;
  if (folded && !even && rankBlock(me - 1).count) merged = b.recv(g.rank(me - 1), rankBlock(me - 1), 0);
  if (f.vme >= 0) {
    b.setPhase(1);
    // Unfolded, my virtual block is my own block: the first round sends it from the send buffer.
    // Folded, my pair's block comes in first: my first send carries it.
    buildRecursiveDoubling(b, f.vpeers, f.vme, vblocks, image, 0, folded ? nullptr : &own, merged);
  }
  b.setPhase(2);
  b.label("pair-result", 0);
  if (folded && even && total) b.recv(g.rank(me + 1), image, 0);
  if (folded && !even && total) b.send(g.rank(me - 1), image, 0);
  if (!direct) {
    b.label("unpack", 0);
    for (int i = 0; i < p; ++i) {
      b.copy(Slice{BufferId::kRecv, blocks.offset[static_cast<size_t>(i)], blocks.count[static_cast<size_t>(i)]}, rankBlock(i));
    }
  }
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const int p2 = floorPow2(p);
  const int rem = p - p2;
  const double m = callBytes(a) * p;
  // Round k sends the largest group's 2^k + min(rem, 2^k) blocks of m/p, at its own crossings.
  double t = a.inPlace ? 0 : c.copy * m / p;  // own block: a copy
  for (int k = 1; k < p2; k <<= 1) {
    const double largest = k + std::min(rem, k);  // a group's blocks: its k, one more per pair in it
    const LinkCost r = butterflyRound(c, p, k, [k, rem, largest](int j) {
      const int base = j & ~(k - 1);
      return (k + std::max(0, std::min(base + k, rem) - base)) / largest;
    });
    t += r.alpha + largest * r.beta * m / p;
  }
  if (rem > 0) t += 2 * c.alpha + c.beta * (m / p + m);
  return t;
}

}  // namespace

extern const FlatAlgorithm kRecursiveDoublingAllGather = {
    "recursive_doubling", Collective::kAllGather, nullptr, build, cost,
    "log p' a + (p'-1 + sum_k min(rem,2^k)) b m/p + c m/p [+ 2a + b(m/p + m) if rem > 0]"};
extern const FlatAlgorithm kRecursiveDoublingAllGatherv = {
    "recursive_doubling", Collective::kAllGatherv, nullptr, build, cost,
    "log p' a + (p'-1 + sum_k min(rem,2^k)) b m/p + c m/p [+ 2a + b(m/p + m) if rem > 0]"};

}  // namespace strata
