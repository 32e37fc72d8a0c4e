// Ring reduce-scatter (002, "Linear-ring reduce-scatter").
//   T(m) = (p-1)(alpha + beta m/p) + (p-1)/p gamma m
// Optimal in the beta term, linear in the alpha term: the large-message algorithm.
#include "inter_node/algorithms/algorithm.h"

namespace strata {

void buildRingReduceScatter(PlanBuilder& b, const Group& g, const std::vector<Slice>& input, Slice result,
                            int tagBase) {
  const int p = g.size();
  const int r = g.me;
  if (p == 1) {
    b.label("reduce-scatter", 0);
    b.copy(result, input[0]);
    return;
  }
  size_t maxBlock = 0;
  for (const Slice& s : input) maxBlock = std::max(maxBlock, s.count);
  // Two slots: the partial sum received in round s is completed in place and forwarded in round
  // s+1 while round s+1's block arrives in the other slot.
  const Slice slot[2] = {b.scratch(maxBlock), b.scratch(maxBlock)};
  const int right = g.relative(1);
  const int left = g.relative(-1);
  auto block = [p](int i) { return ((i % p) + p) % p; };
  for (int s = 0; s < p - 1; ++s) {
    b.label("reduce-scatter", s);
    const int sendBlock = block(r - s - 1);
    const int recvBlock = block(r - s - 2);
    const size_t sendCount = input[static_cast<size_t>(sendBlock)].count;
    const size_t recvCount = input[static_cast<size_t>(recvBlock)].count;
    // send: my own input the first round, the partial sum completed last round afterwards
    if (sendCount != 0) {
      const Slice src = s == 0 ? input[static_cast<size_t>(sendBlock)] : slot[(s - 1) % 2].sub(0, sendCount);
      b.send(right, src, tagBase + s);
    }
    if (recvCount != 0) {
      const Slice tmp = slot[s % 2].sub(0, recvCount);
      b.recv(left, tmp, tagBase + s);
      // recvReduce: add my contribution; the last round's block is mine and goes to the result.
      const Slice dst = s == p - 2 ? result : tmp;
      b.reduce(dst, {tmp, input[static_cast<size_t>(recvBlock)]});
    }
  }
}

namespace {

// Reduce-scatter(v) collective: block i of the send buffer goes to rank i.
void buildReduceScatter(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const int p = g.size();
  const BlockLayout blocks = rankBlocks(a, p);
  const std::vector<Slice> input = blockSlices(Slice{BufferId::kSend, 0, 0}, blocks);
  const Slice result{BufferId::kRecv, 0, blocks.count[static_cast<size_t>(g.me)]};
  buildRingReduceScatter(b, g, input, result);
  divideIfAverage(b, a, result);
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double m = callBytes(a) * p;  // the whole vector
  return (p - 1) * (c.alpha + c.beta * m / p) + (p - 1.0) / p * c.gamma * m;
}

}  // namespace

extern const FlatAlgorithm kRingReduceScatter = {
    "ring", Collective::kReduceScatter, nullptr, buildReduceScatter, cost,
    "(p-1)(a + b m/p) + (p-1)/p g m"};
extern const FlatAlgorithm kRingReduceScatterv = {
    "ring", Collective::kReduceScatterv, nullptr, buildReduceScatter, cost,
    "(p-1)(a + b m/p) + (p-1)/p g m"};

}  // namespace strata
