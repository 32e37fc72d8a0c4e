// Scan and exscan by dissemination (002, "Scan/Exscan in fully-connected networks", Hillis-Steele):
// in round k rank r sends its partial result, the reduction of ranks (r-2^k, r], to r + 2^k and
// adds the one received from r - 2^k in front of its own. The exclusive result is the sum of what
// was received, in rank order. ceil(log2 p) rounds of whole vectors: the small-vector scan.
//   T(m) = ceil(log2 p)(alpha + beta m + gamma m)
// The exscan reduces twice a round (the partial it sends on, the result it keeps), but not the
// partial in its last round (no more sends) nor the result in its first (a copy of what arrived):
//   T(m) = ceil(log2 p)(alpha + beta m + 2 gamma m) - 2 gamma m + c m
// (on 2 ranks one message and its copy: 2x the time the per-round rule had priced on the
// development VM at 16 MiB, its plan simulated and measured alike).
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const int p = g.size();
  const int r = g.me;
  const bool exclusive = a.coll == Collective::kExscan;
  const Slice input{BufferId::kSend, 0, a.count};
  const Slice result{BufferId::kRecv, 0, a.count};
  // The running partial alternates between two slots, so a round's send can still be in flight
  // while the next partial is formed.
  const Slice slots[2] = {b.scratch(a.count), b.scratch(a.count)};
  const Slice tmp = b.scratch(a.count);
  Slice partial = input;  // the reduction of ranks (r - 2^k, r]
  bool haveExclusive = false;
  int round = 0;
  for (int d = 1; d < p; d <<= 1, ++round) {
    b.label(exclusive ? "dissemination-exscan" : "dissemination-scan", round);
    if (r + d < p) b.send(g.rank(r + d), partial, round);
    if (r - d < 0) continue;
    b.recv(g.rank(r - d), tmp, round);
    // What arrives covers ranks (r - 2d, r - d]: earlier ranks, so it goes on the left.
    const bool lastReceive = r - 2 * d < 0;
    const bool moreSends = r + 2 * d < p;
    if (exclusive) {
      // The partial first: in place, the input it reads is the buffer the result goes to.
      if (moreSends) {
        const Slice next = slots[round % 2];
        b.reduce(next, {tmp, partial});
        partial = next;
      }
      if (!haveExclusive) b.copy(result, tmp);
      else b.reduce(result, {tmp, result});
      haveExclusive = true;
    } else {
      // After the last receive the partial is the whole prefix: form it in the receive buffer.
      const Slice next = lastReceive ? result : slots[round % 2];
      b.reduce(next, {tmp, partial});
      partial = next;
    }
  }
  if (!exclusive) b.copy(result, partial);  // rank 0's prefix is its input
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a);
  const int rounds = ceilLog2(p);
  if (a.coll != Collective::kExscan || rounds == 0) return rounds * (c.alpha + c.beta * m + c.gamma * m);
  return rounds * (c.alpha + c.beta * m + 2 * c.gamma * m) - 2 * c.gamma * m + c.copy * m;
}

}  // namespace

extern const FlatAlgorithm kDisseminationScan = {"dissemination", Collective::kScan, nullptr, build, cost,
                                                 "ceil(log p)(a + b m + g m)"};
extern const FlatAlgorithm kDisseminationExscan = {"dissemination", Collective::kExscan, nullptr, build, cost,
                                                   "ceil(log p)(a + b m + 2 g m) - 2 g m + c m"};

}  // namespace strata
