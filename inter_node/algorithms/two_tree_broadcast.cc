// Two-tree broadcast (Sanders, Speck, Traff; 002, "Two (pipelined) binary trees"): the message is
// split in two halves, each pipelined down its own binary tree; every non-root rank is an inner
// node of at most one tree, so each sends about as much as it receives and the pair of trees
// delivers at full bandwidth. Each rank's sends follow the order of the synchronous colour
// schedule of the scheduling lemma (twoTreeBroadcastSchedule), one after the other (one port);
// receives are posted up front.
//   T(m) = (k-2) alpha + 2 sqrt((k-2) alpha beta m) + beta m,   k = 2 depth
#include "inter_node/algorithms/algorithm.h"
#include "inter_node/algorithms/binary_trees.h"
#include "inter_node/algorithms/tree_pipeline.h"

namespace strata {
namespace {

size_t blocksPerHalf(const CollectiveArgs& a, int depth, const BuildOptions& opt) {
  return treePipelineBlocks(a, callBytes(a) / 2, depth, opt);
}

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions& opt) {
  const Group vg = g.rotated(a.root);
  const int p = vg.size();
  const int v = vg.me;
  const Slice src{BufferId::kSend, 0, a.count}, dst{BufferId::kRecv, 0, a.count};
  const size_t granule = std::max<size_t>(1, 64 / a.elemSize());
  const BlockLayout halves = BlockLayout::even(a.count, 2, granule);
  if (v == 0) {
    b.label("two-tree-broadcast", 0);
    b.copy(dst, src);
  }
  if (p == 1) return;
  const TwoTree tt = makeTwoTree(p);
  BuildOptions pipe = opt;
  pipe.link = broadcastPipelineLink(opt.link, p);
  const size_t M = blocksPerHalf(a, tt.depth, pipe);
  BlockLayout blocks[2];
  for (int t = 0; t < 2; ++t) blocks[t] = BlockLayout::even(halves.count[static_cast<size_t>(t)], static_cast<int>(M), granule);
  auto block = [&](Slice s, int t, size_t k) {
    return s.sub(halves.offset[static_cast<size_t>(t)] + blocks[t].offset[k], blocks[t].count[k]);
  };
  if (v != 0) {
    // Receive every block of both halves from the parents, posted up front.
    for (size_t k = 0; k < M; ++k) {
      for (int t = 0; t < 2; ++t) {
        if (blocks[t].count[k] == 0) continue;
        b.label("two-tree-broadcast", static_cast<int>(k));
        b.setPhase(t);
        b.recv(vg.rank(tt.parent[static_cast<size_t>(t)][static_cast<size_t>(v)]), block(dst, t, k), static_cast<int>(k));
      }
    }
  }
  const auto schedule = twoTreeBroadcastSchedule(tt, M);
  StepId lastSend = kNoStep;
  for (const ScheduledSend& s : schedule[static_cast<size_t>(v)]) {
    if (blocks[s.tree].count[s.block] == 0) continue;
    b.label("two-tree-broadcast", s.step);
    b.setPhase(s.tree);
    lastSend = b.send(vg.rank(s.to), block(v == 0 ? src : dst, s.tree, s.block), static_cast<int>(s.block), {lastSend});
  }
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  if (p == 1) return 0;
  const TwoTree tt = makeTwoTree(p);
  BuildOptions opt;
  opt.link = broadcastPipelineLink(c, p);
  const size_t M = blocksPerHalf(a, tt.depth, opt);
  // Both trees at once: every rank receives each block of both halves.
  const double rounds = 2 * tt.depth + 2 * (static_cast<double>(M) - 1);
  const LinkCost k = treeEdges(broadcastRoundsLink(c, p, static_cast<double>(M), rounds, 2), p, a.root,
                               {&tt.parent[0], &tt.parent[1]});
  return treePipelineTime(callBytes(a) / 2, tt.depth, k, M);
}

}  // namespace

extern const FlatAlgorithm kTwoTreeBroadcast = {"two_tree", Collective::kBroadcast, nullptr, build, cost,
                                                "(k-2) a + 2 sqrt((k-2) a b m) + b m, k = 2 depth"};

}  // namespace strata
