// Circular shift: rank r sends its vector to (r + q) mod p (003, "Circular shift on mesh and
// hypercube"; 000, "Circular shift").
//   direct: one exchange, T(m) = alpha + beta m, the right choice on a fully connected network.
//   ring:   min(q, p-q) hops between neighbours, in the shorter direction (000, the q-shift on a
//           ring), T(m) = min(q, p-q)(alpha + beta m).
// Each plus the copies its plan makes within the rank, at the level's copy cost.
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

int normalShift(const CollectiveArgs& a, int p) { return ((a.shift % p) + p) % p; }


void buildDirect(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const int q = normalShift(a, g.size());
  const Slice in{BufferId::kSend, 0, a.count}, out{BufferId::kRecv, 0, a.count};
  b.label("shift-direct", 0);
  if (q == 0) {
    b.copy(out, in);
    return;
  }
  // In place, the incoming vector waits in scratch until the outgoing one has left.
  const Slice landing = a.inPlace ? b.scratch(a.count) : out;
  b.send(g.relative(q), in, 0);
  b.recv(g.relative(-q), landing, 0);
  b.copy(out, landing);
}

void buildRing(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const int p = g.size();
  const int q = normalShift(a, p);
  const Slice in{BufferId::kSend, 0, a.count}, out{BufferId::kRecv, 0, a.count};
  const int hops = std::min(q, p - q);
  const int dir = q <= p - q ? 1 : -1;
  const Slice slots[2] = {b.scratch(a.count), b.scratch(a.count)};
  Slice cur = in;
  for (int h = 0; h < hops; ++h) {
    b.label("shift-ring", h);
    b.send(g.relative(dir), cur, h);
    b.recv(g.relative(-dir), slots[h % 2], h);
    cur = slots[h % 2];
  }
  b.label("shift-ring", hops);
  b.copy(out, cur);
}

// A shift by 0 (mod p) is the copy into the receive buffer; in place, nothing. The direct exchange
// in place lands in scratch and copies from there; the ring copies its last hop's slot.
double ownCopy(const CollectiveArgs& a, const LinkCost& c) { return a.inPlace ? 0 : c.copy * callBytes(a); }
double costDirect(const CollectiveArgs& a, int p, const LinkCost& c) {
  if (normalShift(a, p) == 0) return ownCopy(a, c);
  return c.alpha + c.beta * callBytes(a) + (a.inPlace ? c.copy * callBytes(a) : 0);
}
double costRing(const CollectiveArgs& a, int p, const LinkCost& c) {
  const int q = normalShift(a, p);
  if (q == 0) return ownCopy(a, c);
  return std::min(q, p - q) * (c.alpha + c.beta * callBytes(a)) + c.copy * callBytes(a);
}

}  // namespace

extern const FlatAlgorithm kDirectShift = {"direct", Collective::kShift, nullptr, buildDirect, costDirect, "a + b m"};
extern const FlatAlgorithm kRingShift = {"ring", Collective::kShift, nullptr, buildRing, costRing,
                                         "min(q, p-q)(a + b m)"};

}  // namespace strata
