// Ring alltoall, store and forward (000, "All-to-All Personalized Communication on a ring"): in
// step k every rank passes to its right neighbour a packet of p-k blocks; of the packet it
// receives, the first block is its own (from rank r-k) and the rest travel on. Only neighbours
// talk, as on a ring network; the volume is the ring's p(p-1)/2 blocks.
//   T(m) = (p-1) alpha + beta (m/p) p(p-1)/2 + c (2p-1) m/p   (m: a rank's send bytes; c: a copy
//   within the rank: the packing and each step's block out of the packet)
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const int p = g.size();
  const int r = g.me;
  const size_t n = a.count;
  const size_t pn = n * static_cast<size_t>(p);
  const Slice send{BufferId::kSend, 0, pn}, recv{BufferId::kRecv, 0, pn};
  auto block = [n](Slice s, int i) { return s.sub(static_cast<size_t>(i) * n, n); };
  // In place, the packing copies read the input before any received block overwrites it (the
  // builder orders those writes after the reads), and the own block is already in place.
  b.label("ring-alltoall", 0);
  // Packet of step 1: the blocks for r+1, ..., r+p-1, in that order.
  const Slice packets[2] = {b.scratch(pn), b.scratch(pn)};
  if (p > 1) {
    const int head = p - 1 - r;  // blocks r+1 .. p-1
    b.copy(packets[0].sub(0, static_cast<size_t>(head) * n), send.sub(static_cast<size_t>(r + 1) * n, static_cast<size_t>(head) * n));
    b.copy(packets[0].sub(static_cast<size_t>(head) * n, static_cast<size_t>(r) * n), send.sub(0, static_cast<size_t>(r) * n));
  }
  b.copy(block(recv, r), block(send, r));
  Slice outgoing = packets[0].sub(0, static_cast<size_t>(p - 1) * n);
  for (int k = 1; k < p; ++k) {
    b.label("ring-alltoall", k);
    const size_t len = static_cast<size_t>(p - k) * n;
    const Slice incoming = packets[k % 2].sub(0, len);
    if (len != 0) {
      b.send(g.relative(1), outgoing, k);
      b.recv(g.relative(-1), incoming, k);
    }
    b.copy(block(recv, (r - k + p) % p), incoming.sub(0, n));
    outgoing = incoming.sub(n, len - n);
  }
}

// Plus the copies within the rank: the first packet's p - 1 blocks, each step's block out of the
// packet it received, and out of place its own block.
double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double blockBytes = callBytes(a);
  const double copied = 2.0 * (p - 1) + (a.inPlace ? 0 : 1);
  return (p - 1) * c.alpha + c.beta * blockBytes * p * (p - 1) / 2.0 + c.copy * blockBytes * copied;
}

}  // namespace

extern const FlatAlgorithm kRingAllToAll = {"ring", Collective::kAllToAll, nullptr, build, cost,
                                            "(p-1) a + b (m/p) p(p-1)/2 + c (2p-1) m/p"};

}  // namespace strata
