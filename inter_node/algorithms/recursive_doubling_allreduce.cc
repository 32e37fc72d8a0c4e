// Recursive doubling allreduce: log2 p rounds of whole-vector exchange with partner r XOR 2^k
// (002, "The power of the hypercube/butterfly"), with the pairing pre- and post-step when p is not
// a power of two. The small-message algorithm: few rounds, every round carries the whole vector.
//   T(m) = log2(p') (alpha + beta m + gamma m)  [+ 2(alpha + beta m) + gamma m when p != p']
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const Fold f = makeFold(g);
  const Slice sendAll{BufferId::kSend, 0, a.count};
  const Slice recvAll{BufferId::kRecv, 0, a.count};
  const bool folded = g.me < 2 * f.rem;
  const bool even = g.me % 2 == 0;

  b.setPhase(0);
  b.label("pair-reduce", 0);
  Slice cur = sendAll;
  const Slice tmp = b.scratch(a.count);
  if (folded && even) {
    b.send(g.rank(g.me + 1), sendAll, 0);
  } else if (folded) {
    b.recv(g.rank(g.me - 1), tmp, 0);
    b.reduce(recvAll, {sendAll, tmp});
    cur = recvAll;
  }
  if (f.vme >= 0) {
    b.setPhase(1);
    int round = 0;
    for (int mask = 1; mask < f.p2; mask <<= 1, ++round) {
      b.label("recursive-doubling", round);
      const int partner = f.vpeers[static_cast<size_t>(f.vme ^ mask)];
      b.send(partner, cur, round);
      b.recv(partner, tmp, round);
      // Both partners add the same two vectors, so every rank ends with identical bits.
      b.reduce(recvAll, {cur, tmp});
      cur = recvAll;
    }
    b.copy(recvAll, cur);
    divideIfAverage(b, a, recvAll);
  }
  b.setPhase(2);
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
  double t = 0;
  for (int mask = 1; mask < p2; mask <<= 1) {  // log2 p' rounds, each at its own crossings
    const LinkCost k = butterflyRound(c, p, mask);
    t += k.alpha + k.beta * m + k.gamma * m;
  }
  if (p2 != p) t += 2 * (c.alpha + c.beta * m) + c.gamma * m;
  return t;
}

}  // namespace

extern const FlatAlgorithm kRecursiveDoublingAllReduce = {
    "recursive_doubling", Collective::kAllReduce, nullptr, build, cost,
    "log p' (a + b m + g m) [+ 2(a + b m) + g m if p != p']"};

}  // namespace strata
