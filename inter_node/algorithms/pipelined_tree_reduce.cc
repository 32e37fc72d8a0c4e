// Pipelined binary tree reduce (002, "Pipelined binary tree", Reduction): leaves send their blocks
// up; an inner node adds the blocks of its two children to its own and sends the sum on. Every
// node has the same work per block, so the M blocks flow as a pipeline.
//   T(m) = (k-2) alpha + 2 sqrt(2(k-2) alpha beta m) + 2 (beta + gamma) m,  k = 2 depth
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
  const Slice input{BufferId::kSend, 0, a.count};
  const size_t M = treePipelineBlocks(a, callBytes(a), tree.depth, opt, heapTreeFanout(p));
  const BlockLayout blocks = BlockLayout::even(a.count, static_cast<int>(M), std::max<size_t>(1, 64 / a.elemSize()));
  const int nChildren = tree.childCount(v);
  // Only the root writes its receive buffer; inner nodes sum in scratch.
  const Slice acc = v == 0 ? Slice{BufferId::kRecv, 0, a.count} : (nChildren ? b.scratch(a.count) : input);
  std::vector<Slice> fromChild;
  for (int c : tree.children[static_cast<size_t>(v)]) {
    if (c >= 0) fromChild.push_back(b.scratch(a.count));
  }
  const int parent = tree.parent[static_cast<size_t>(v)];
  StepId lastSend = kNoStep;  // one block on the way up at a time (see chain_broadcast.cc)
  for (size_t k = 0; k < M; ++k) {
    if (blocks.count[k] == 0) continue;
    b.label("tree-reduce", static_cast<int>(k));
    std::vector<Slice> terms = {input.sub(blocks.offset[k], blocks.count[k])};
    int i = 0;
    for (int c : tree.children[static_cast<size_t>(v)]) {
      if (c < 0) continue;
      const Slice tmp = fromChild[static_cast<size_t>(i++)].sub(blocks.offset[k], blocks.count[k]);
      b.recv(vg.rank(c), tmp, static_cast<int>(k));
      terms.push_back(tmp);
    }
    const Slice sum = acc.sub(blocks.offset[k], blocks.count[k]);
    b.reduce(sum, terms);
    if (parent >= 0) lastSend = b.send(vg.rank(parent), sum, static_cast<int>(k), {lastSend});
    else divideIfAverage(b, a, sum);
  }
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  if (p <= 1) return 0;  // the root alone: its local copy is priced with every candidate's
  const BinaryTree tree = heapTree(p);
  BuildOptions opt;
  opt.link = c;
  const int fan = heapTreeFanout(p);
  const size_t M = treePipelineBlocks(a, callBytes(a), tree.depth, opt, fan);
  // Each edge carries its M blocks over the pipeline's fan (depth + M - 1) rounds.
  const double active = static_cast<double>(M) / (fan * (tree.depth + static_cast<double>(M) - 1));
  return treePipelineTime(callBytes(a), tree.depth, treeEdges(c, p, a.root, {&tree.parent}, active), M, fan) +
         fan * c.gamma * callBytes(a);
}

}  // namespace

extern const FlatAlgorithm kPipelinedTreeReduce = {"pipelined_tree", Collective::kReduce, nullptr, build, cost,
                                                   "(k-2) a + 2 sqrt(2(k-2) a b m) + 2 (b + g) m, k = 2 depth (p = 2: one child, (b + g) m)"};

}  // namespace strata
