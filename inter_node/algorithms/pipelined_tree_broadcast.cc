// Pipelined binary tree broadcast (002, "Pipelined binary tree"): the message is cut into M blocks;
// every inner node receives a block from its parent and passes it to its two children. A node gets
// a new block every second round; the pipelining lemma with k = 2 depth, s = 2 gives M and
//   T(m) = (k-2) alpha + 2 sqrt(2(k-2) alpha beta m) + 2 beta m
#include "inter_node/algorithms/algorithm.h"
#include "inter_node/algorithms/binary_trees.h"
#include "inter_node/algorithms/tree_pipeline.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions& opt) {
  const Group vg = g.rotated(a.root);
  const int p = vg.size();
  const int v = vg.me;
  const BinaryTree tree = heapTree(p);
  const Slice src{BufferId::kSend, 0, a.count}, dst{BufferId::kRecv, 0, a.count};
  BuildOptions pipe = opt;
  pipe.link = broadcastPipelineLink(opt.link, p);
  const size_t M = treePipelineBlocks(a, callBytes(a), tree.depth, pipe, heapTreeFanout(p));
  const BlockLayout blocks = BlockLayout::even(a.count, static_cast<int>(M), std::max<size_t>(1, 64 / a.elemSize()));
  if (v == 0) {
    b.label("tree-broadcast", 0);
    b.copy(dst, src);
  }
  const int parent = tree.parent[static_cast<size_t>(v)];
  StepId lastSend = kNoStep;  // one send at a time, block by block (see chain_broadcast.cc)
  for (size_t k = 0; k < M; ++k) {
    if (blocks.count[k] == 0) continue;
    b.label("tree-broadcast", static_cast<int>(k));
    const Slice mine = dst.sub(blocks.offset[k], blocks.count[k]);
    const Slice from = v == 0 ? src.sub(blocks.offset[k], blocks.count[k]) : mine;
    if (parent >= 0) b.recv(vg.rank(parent), mine, static_cast<int>(k));
    for (int c : tree.children[static_cast<size_t>(v)]) {
      if (c >= 0) lastSend = b.send(vg.rank(c), from, static_cast<int>(k), {lastSend});
    }
  }
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const BinaryTree tree = heapTree(p);
  BuildOptions opt;
  opt.link = broadcastPipelineLink(c, p);
  const int fan = heapTreeFanout(p);
  const size_t M = treePipelineBlocks(a, callBytes(a), tree.depth, opt, fan);
  const double rounds = fan * tree.depth + fan * (static_cast<double>(M) - 1);
  const LinkCost k = treeEdges(broadcastRoundsLink(c, p, static_cast<double>(M), rounds), p, a.root, {&tree.parent});
  return treePipelineTime(callBytes(a), tree.depth, k, M, fan);
}

}  // namespace

extern const FlatAlgorithm kPipelinedTreeBroadcast = {"pipelined_tree", Collective::kBroadcast, nullptr, build, cost,
                                                      "(k-2) a + 2 sqrt(2(k-2) a b m) + 2 b m, k = 2 depth (p = 2: one child, b m)"};

}  // namespace strata
