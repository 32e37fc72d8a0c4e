// Dissemination barrier (002, "Bruck/Dissemination" pattern): in round k every rank signals rank
// r + 2^k and waits for rank r - 2^k; after ceil(log2 p) rounds every rank has heard, directly or
// transitively, from all others.
//   T = ceil(log2 p) alpha
#include "inter_node/algorithms/algorithm.h"

namespace strata {

namespace {

void build(PlanBuilder& b, const CollectiveArgs&, const Group& g, const BuildOptions&) {
  const int p = g.size();
  const Slice none{BufferId::kScratch, 0, 0};
  StepId previous = kNoStep;
  int round = 0;
  for (int dist = 1; dist < p; dist <<= 1, ++round) {
    b.label("dissemination", round);
    // The signal of round k may leave only after rounds 0..k-1's signals have arrived: each receive
    // completes after the previous one, so depending on the last covers them all.
    b.send(g.relative(dist), none, round, {previous});
    previous = b.recv(g.relative(-dist), none, round, {previous});
  }
}

double cost(const CollectiveArgs&, int p, const LinkCost& c) { return ceilLog2(p) * c.alpha; }

}  // namespace

extern const FlatAlgorithm kDisseminationBarrier = {"dissemination", Collective::kBarrier, nullptr, build, cost,
                                                    "ceil(log p) a"};

}  // namespace strata
