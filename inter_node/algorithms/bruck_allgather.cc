// Bruck (dissemination) allgather and allgatherv (002, "'Bruck'/'Dissemination' Allgather
// algorithm"; Bruck, Ho, Kipnis, Upfal, Weathersby 1997): blocks are kept rotated, block i being
// rank r+i's; in the round with distance d, rank r sends its first min(d, p-d) blocks to r-d and
// appends as many from r+d. ceil(log2 p) rounds for any p; a final rotation puts the blocks in rank
// order (rank 0 with packed blocks works in its receive buffer directly). The rotation copies the
// whole gathered buffer on every other rank: a local copy (copy per byte) the seed's formula leaves
// out, and what makes Bruck slower than recursive doubling where both serve; and, as in every
// allgather out of place, the copy of the rank's own block (m/p).
//   T(m) = ceil(log2 p) alpha + (p-1)/p beta m + (m + m/p) copy        (in place too: the rotated
//   working range starts with the own block; on one rank only the own block, out of place)
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const int p = g.size();
  const int r = g.me;
  const BlockLayout blocks = rankBlocks(a, p);
  const Slice recvAll{BufferId::kRecv, 0, 0};
  // rotated[i] = block (r + i) mod p, back to back
  std::vector<size_t> rot(static_cast<size_t>(p) + 1, 0);
  for (int i = 0; i < p; ++i) rot[static_cast<size_t>(i) + 1] = rot[static_cast<size_t>(i)] + blocks.count[static_cast<size_t>((r + i) % p)];
  // Rank 0 of packed blocks gathers in rank order already, and one block (a level of one member)
  // is its own rotation: both work in the receive buffer.
  const bool direct = (r == 0 && isPacked(blocks)) || p == 1;
  const Slice work = direct ? Slice{BufferId::kRecv, blocks.offset[0], rot.back()} : b.scratch(rot.back());
  auto range = [&](int lo, int hi) { return work.sub(rot[static_cast<size_t>(lo)], rot[static_cast<size_t>(hi)] - rot[static_cast<size_t>(lo)]); };
  b.label("bruck-allgather", 0);
  b.copy(range(0, 1), Slice{BufferId::kSend, 0, a.count});
  int round = 0;
  for (int d = 1; d < p; d <<= 1, ++round) {
    b.label("bruck-allgather", round);
    const int c = std::min(d, p - d);
    const Slice out = range(0, c), in = range(d, d + c);
    if (out.count != 0) b.send(g.relative(-d), out, round);
    if (in.count != 0) b.recv(g.relative(d), in, round);
  }
  if (direct) return;
  b.label("bruck-unrotate", 0);
  if (isPacked(blocks)) {  // two runs: ranks r..p-1, then 0..r-1
    b.copy(recvAll.sub(blocks.offset[static_cast<size_t>(r)], rot[static_cast<size_t>(p - r)]), range(0, p - r));
    if (r > 0) b.copy(recvAll.sub(0, rot.back() - rot[static_cast<size_t>(p - r)]), range(p - r, p));
  } else {
    for (int i = 0; i < p; ++i) {
      const int owner = (r + i) % p;
      b.copy(recvAll.sub(blocks.offset[static_cast<size_t>(owner)], blocks.count[static_cast<size_t>(owner)]), range(i, i + 1));
    }
  }
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a) * p;
  const double rotation = p > 1 ? m : 0, ownBlock = p > 1 || !a.inPlace ? m / p : 0;
  // The round of distance d sends min(d, p - d) blocks of m/p (p - 1 over the rounds).
  double t = (rotation + ownBlock) * c.copy;
  for (int d = 1; d < p; d <<= 1) {
    const LinkCost k = shiftRound(c, p, d);
    t += k.alpha + std::min(d, p - d) * k.beta * m / p;
  }
  return t;
}

}  // namespace

extern const FlatAlgorithm kBruckAllGather = {"bruck", Collective::kAllGather, nullptr, build, cost,
                                              "ceil(log p) a + (p-1)/p b m + (m + m/p) c"};
extern const FlatAlgorithm kBruckAllGatherv = {"bruck", Collective::kAllGatherv, nullptr, build, cost,
                                               "ceil(log p) a + (p-1)/p b m + (m + m/p) c"};

}  // namespace strata
