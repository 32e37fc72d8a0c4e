// Pipelined chain (linear array) broadcast (002, "Pipelined broadcast"): the message is cut into
// M blocks that flow down the chain root, root+1, ..., root+p-1; the last rank has its first block
// after p-1 rounds and a new one every round. The pipelining lemma (k = p-1, s = 1) gives
//   M* = sqrt((p-2) beta m / alpha),   T(m) = (p-2) alpha + 2 sqrt((p-2) alpha beta m) + beta m
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

size_t blocksFor(const CollectiveArgs& a, int p, const LinkCost& c, const BuildOptions& opt) {
  const double bytes = callBytes(a);
  const size_t byMinSize = std::max<size_t>(1, static_cast<size_t>(bytes / static_cast<double>(opt.minPipelineBytes)));
  const size_t cap = std::min({opt.maxPipelineBlocks, byMinSize, std::max<size_t>(1, a.count)});
  return pipelineBlocks(p - 1, 1, c, bytes, cap);
}

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions& opt) {
  const Group chain = g.rotated(a.root);
  const int n = chain.size();
  const int v = chain.me;
  const Slice src{BufferId::kSend, 0, a.count};
  const Slice dst{BufferId::kRecv, 0, a.count};
  const size_t M = blocksFor(a, n, broadcastPipelineLink(opt.link, n), opt);
  const BlockLayout blocks = BlockLayout::even(a.count, static_cast<int>(M), std::max<size_t>(1, 64 / a.elemSize()));
  if (v == 0) {
    b.label("chain-broadcast", 0);
    b.copy(dst, src);
  }
  // A block leaves after the one before it has left: blocks in flight together would share the
  // link and arrive together at the end, which is store-and-forward, not a pipeline.
  StepId lastSend = kNoStep;
  for (size_t k = 0; k < M; ++k) {
    const Slice block = dst.sub(blocks.offset[k], blocks.count[k]);
    if (block.count == 0) continue;
    b.label("chain-broadcast", static_cast<int>(k));
    const int tag = static_cast<int>(k);
    if (v > 0) b.recv(chain.rank(v - 1), block, tag);
    if (v + 1 < n) {
      lastSend = b.send(chain.rank(v + 1), v == 0 ? src.sub(blocks.offset[k], blocks.count[k]) : block, tag, {lastSend});
    }
  }
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  if (p == 1) return 0;
  BuildOptions opt;
  opt.link = broadcastPipelineLink(c, p);
  const size_t M = blocksFor(a, p, opt.link, opt);
  const double rounds = p - 1.0 + static_cast<double>(M) - 1;
  return pipelineTime(p - 1, 1, broadcastRoundsLink(c, p, static_cast<double>(M), rounds), callBytes(a), M);
}

}  // namespace

extern const FlatAlgorithm kChainBroadcast = {"chain", Collective::kBroadcast, nullptr, build, cost,
                                              "(p-1+M-1)(a + b m/M), M from the pipelining lemma"};

}  // namespace strata
