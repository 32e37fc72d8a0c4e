// Pairwise-exchange alltoall and alltoallv (002, "Direct alltoall, fully-connected network",
// "Telephone exchange algorithm (1-factoring)"): p-1 rounds; in round i rank r exchanges with
// r XOR i when p is a power of two (a 1-factor: partners pair up), else sends to (r+i) mod p and
// receives from (r-i) mod p. Every block travels once, directly.
//   T(m) = (p-1)(alpha + beta m/p) + c m/p               (m: a rank's send bytes; c: a copy within
//   the rank, its own block's; in place also the whole input's, c m)
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const int p = g.size();
  const int r = g.me;
  BlockLayout sendBlocks, recvBlocks;
  if (a.coll == Collective::kAllToAllv) {
    sendBlocks.count = a.sendCounts;
    sendBlocks.offset = a.sendDispls;
    recvBlocks.count = a.counts;
    recvBlocks.offset = a.displs;
  } else {
    sendBlocks = recvBlocks = BlockLayout::uniform(p, a.count);
  }
  std::vector<Slice> in = blockSlices(Slice{BufferId::kSend, 0, 0}, sendBlocks);
  const std::vector<Slice> out = blockSlices(Slice{BufferId::kRecv, 0, 0}, recvBlocks);
  if (a.inPlace) {
    // One buffer is both input and output: keep a copy of the input to send from.
    size_t extent = 0;
    for (const Slice& s : in) extent = std::max(extent, s.end());
    const Slice copy = b.scratch(extent);
    b.label("alltoall-in-place-copy", 0);
    b.copy(copy, Slice{BufferId::kSend, 0, extent});
    for (Slice& s : in) s = copy.sub(s.offset, s.count);
  }
  const bool pow2 = (p & (p - 1)) == 0;
  b.label("pairwise", 0);
  b.copy(out[static_cast<size_t>(r)], in[static_cast<size_t>(r)]);
  // Every round's send is posted at once: chained round by round (a sendrecv a round, which
  // strata-model's one-message-at-a-time NICs favour where p is not a power of two), it measured
  // 1.07-1.46x slower on the development VM's shared memory (5 ranks, 256 KiB to 4 MiB).
  for (int i = 1; i < p; ++i) {
    b.label("pairwise", i);
    const int to = pow2 ? (r ^ i) : (r + i) % p;
    const int from = pow2 ? (r ^ i) : (r - i + p) % p;
    if (in[static_cast<size_t>(to)].count != 0) b.send(g.rank(to), in[static_cast<size_t>(to)], i);
    if (out[static_cast<size_t>(from)].count != 0) b.recv(g.rank(from), out[static_cast<size_t>(from)], i);
  }
}

// Plus the copies within the rank: its own block, and in place the whole input first.
double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a) * p;
  double t = c.copy * (m / p + (a.inPlace ? m : 0));
  if (!c.pricesCrossings()) return t + (p - 1) * (c.alpha + c.beta * m / p);
  const bool xorPartners = (p & (p - 1)) == 0;
  for (int i = 1; i < p; ++i) {  // round i's partners, at the round's crossings
    const LinkCost k = xorPartners ? butterflyRound(c, p, i) : shiftRound(c, p, i);
    t += k.alpha + k.beta * m / p;
  }
  return t;
}

}  // namespace

extern const FlatAlgorithm kPairwiseAllToAll = {"pairwise", Collective::kAllToAll, nullptr, build, cost,
                                                "(p-1)(a + b m/p) + c m/p"};
extern const FlatAlgorithm kPairwiseAllToAllv = {"pairwise", Collective::kAllToAllv, nullptr, build, cost,
                                                 "(p-1)(a + b m/p) + c m/p"};

}  // namespace strata
