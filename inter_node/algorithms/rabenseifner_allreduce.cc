// Rabenseifner allreduce: recursive-halving reduce-scatter + recursive-doubling allgather, with
// the pairing pre- and post-step for p not a power of two (002, "The Van de Geijn
// implementations", "The power of the hypercube/butterfly"). With p' = 2^floor(log2 p):
//   T(m) = 2 log2(p') alpha + 2(p'-1)/p' beta m + (p'-1)/p' gamma m
//          [+ 2(alpha + beta m) + gamma m when p != p']
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const Fold f = makeFold(g);
  const Slice sendAll{BufferId::kSend, 0, a.count};
  const Slice recvAll{BufferId::kRecv, 0, a.count};
  const size_t granule = std::max<size_t>(1, 64 / a.elemSize());
  const BlockLayout vblocks = BlockLayout::even(a.count, f.p2, granule);
  const bool folded = g.me < 2 * f.rem;
  const bool even = g.me % 2 == 0;

  b.setPhase(0);
  b.label("pair-reduce", 0);
  Slice in = sendAll;
  if (folded && even) {
    b.send(g.rank(g.me + 1), sendAll, 0);
  } else if (folded) {
    const Slice tmp = b.scratch(a.count);
    b.recv(g.rank(g.me - 1), tmp, 0);
    b.reduce(recvAll, {sendAll, tmp});
    in = recvAll;
  }
  if (f.vme >= 0) {
    b.setPhase(1);
    const Slice mine = recvAll.sub(vblocks.offset[static_cast<size_t>(f.vme)], vblocks.count[static_cast<size_t>(f.vme)]);
    buildRecursiveHalving(b, f.vpeers, f.vme, vblocks, in, {mine}, 0, &recvAll);
    divideIfAverage(b, a, mine);
    b.setPhase(2);
    buildRecursiveDoubling(b, f.vpeers, f.vme, vblocks, recvAll, 0);
  }
  b.setPhase(3);
  b.label("pair-result", 0);
  if (folded && even) {
    b.recv(g.rank(g.me + 1), recvAll, 0);
  } else if (folded) {
    b.send(g.rank(g.me - 1), recvAll, 0);
  }
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const int p2 = floorPow2(p);
  const double m = callBytes(a);
  // Round `mask` of the halving and of the doubling each moves mask/p' of m (summing to (p'-1)/p').
  double t = 0;
  for (int mask = 1; mask < p2; mask <<= 1) {
    const LinkCost k = butterflyRound(c, p, mask);
    t += 2 * k.alpha + 2.0 * mask / p2 * k.beta * m + static_cast<double>(mask) / p2 * k.gamma * m;
  }
  if (p2 != p) t += 2 * (c.alpha + c.beta * m) + c.gamma * m;
  return t;
}

}  // namespace

extern const FlatAlgorithm kRabenseifnerAllReduce = {
    "rabenseifner", Collective::kAllReduce, nullptr, build, cost,
    "2 log p' a + 2(p'-1)/p' b m + (p'-1)/p' g m [+ 2(a + b m) + g m if p != p']"};

}  // namespace strata
