// Scan and exscan over a pipelined in-order binary tree (002, "Pipelined binary tree", Scan/Exscan:
// up and down phases; Sanders, Traff 2006). Every subtree of the in-order tree covers consecutive
// ranks. Up: a node sends its parent the reduction of its subtree, left sum, own input, right sum,
// in rank order. Down: a node gets from its parent the reduction of all ranks before its subtree
// (none for subtrees that start at rank 0), forms its exclusive prefix with its left sum and its
// inclusive prefix with its input, passes the first on to its left child and the second to its
// right child. Both phases are pipelined in blocks: the large-vector scan.
// The seed bounds it by twice the reduction's time, (4 depth - 4) alpha + ... + 4 beta m; the up
// and down phases of different blocks overlap, as the seed notes they can, so the plan's pipeline
// delivers a block every s rounds, s the messages of its busiest rank in one direction (up to
// three: from both children and the parent's prefix, or to the parent and both children; two on
// trees of up to 5 ranks):
//   T(m) = (k + s(M-1)) (alpha + beta m/M) + 3 gamma m,   k = 4 depth (two messages a level up
//   and two down), M = sqrt((k - s) beta m / (s alpha)) blocks.
#include <algorithm>

#include "inter_node/algorithms/algorithm.h"
#include "inter_node/algorithms/binary_trees.h"
#include "inter_node/algorithms/tree_pipeline.h"

namespace strata {
namespace {

struct ScanRounds {
  int k = 0;  // rounds of the first block, up to the root and down to the deepest rank
  int s = 1;  // rounds per further block: the busiest rank's messages in one direction
};

ScanRounds scanRounds(const BinaryTree& tree, int p) {
  ScanRounds r;
  r.k = 4 * tree.depth;
  for (int v = 0; v < p; ++v) {
    const bool left = tree.children[static_cast<size_t>(v)][0] >= 0;
    const bool right = tree.children[static_cast<size_t>(v)][1] >= 0;
    int first = 0, last = 0;
    subtreeRange(tree, v, &first, &last);
    const bool prefix = first > 0;
    const int in = int{left} + int{right} + int{prefix};
    const int out = int{tree.parent[static_cast<size_t>(v)] >= 0} + int{left && prefix} + int{right};
    r.s = std::max({r.s, in, out});
  }
  return r;
}

size_t scanBlocks(const CollectiveArgs& a, const BinaryTree& tree, int p, const BuildOptions& opt) {
  const ScanRounds r = scanRounds(tree, p);
  return cappedPipelineBlocks(a, callBytes(a), r.k, r.s, opt);
}

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions& opt) {
  const int p = g.size();
  const int v = g.me;
  const bool exclusive = a.coll == Collective::kExscan;
  const BinaryTree tree = inOrderTree(p);
  const Slice input{BufferId::kSend, 0, a.count};
  const Slice result{BufferId::kRecv, 0, a.count};
  const size_t M = scanBlocks(a, tree, p, opt);
  const BlockLayout blocks = BlockLayout::even(a.count, static_cast<int>(M), std::max<size_t>(1, 64 / a.elemSize()));
  const int left = tree.children[static_cast<size_t>(v)][0];
  const int right = tree.children[static_cast<size_t>(v)][1];
  const int parent = tree.parent[static_cast<size_t>(v)];
  int first = 0, last = 0;
  subtreeRange(tree, v, &first, &last);
  const bool hasPrefix = first > 0;  // some rank precedes my subtree
  const Slice leftSum = left >= 0 ? b.scratch(a.count) : Slice{};
  const Slice rightSum = right >= 0 ? b.scratch(a.count) : Slice{};
  const Slice up = (left >= 0 || right >= 0) && parent >= 0 ? b.scratch(a.count) : input;
  const Slice prefix = hasPrefix ? b.scratch(a.count) : Slice{};
  // The inclusive prefix goes to the right child; for exscan the receive buffer holds the
  // exclusive one, so the inclusive one needs its own place.
  const Slice inclusive = exclusive ? b.scratch(a.count) : result;
  // A block's receives from the children wait for both of the previous block's: posted all at
  // once, one child's whole stream would take the receive link ahead of the other's first block,
  // and the up phase, which needs both, stalls the tree.
  StepId prevLeft = kNoStep, prevRight = kNoStep;
  for (size_t k = 0; k < M; ++k) {
    if (blocks.count[k] == 0) continue;
    auto blk = [&](Slice s) { return s.sub(blocks.offset[k], blocks.count[k]); };
    const int tag = static_cast<int>(k);
    // Up phase.
    b.setPhase(0);
    b.label("scan-up", tag);
    std::vector<Slice> terms;
    const StepId afterLeft = prevLeft, afterRight = prevRight;
    if (left >= 0) {
      prevLeft = b.recv(g.rank(left), blk(leftSum), tag, {afterLeft, afterRight});
      terms.push_back(blk(leftSum));
    }
    terms.push_back(blk(input));
    if (right >= 0) {
      prevRight = b.recv(g.rank(right), blk(rightSum), tag, {afterLeft, afterRight});
      terms.push_back(blk(rightSum));
    }
    if (parent >= 0) {
      b.reduce(blk(up), terms);
      b.send(g.rank(parent), blk(up), tag);
    }
    // Down phase.
    b.setPhase(1);
    b.label("scan-down", tag);
    if (hasPrefix) b.recv(g.rank(parent), blk(prefix), tag);
    // exclusive prefix of v = prefix op leftSum (whichever exist)
    std::vector<Slice> excl;
    if (hasPrefix) excl.push_back(blk(prefix));
    if (left >= 0) excl.push_back(blk(leftSum));
    if (left >= 0 && hasPrefix) b.send(g.rank(left), blk(prefix), tag);
    // The inclusive prefix first: in place, the input it reads is where the exclusive one goes.
    std::vector<Slice> incl = excl;
    incl.push_back(blk(input));
    b.reduce(blk(inclusive), incl);
    if (right >= 0) b.send(g.rank(right), blk(inclusive), tag);
    if (exclusive && !excl.empty()) b.reduce(blk(result), excl);
  }
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  if (p <= 1) return 3 * c.gamma * callBytes(a);
  const BinaryTree tree = inOrderTree(p);
  BuildOptions opt;
  opt.link = c;
  const ScanRounds r = scanRounds(tree, p);
  return pipelineTime(r.k, r.s, c, callBytes(a), scanBlocks(a, tree, p, opt)) + 3 * c.gamma * callBytes(a);
}

}  // namespace

extern const FlatAlgorithm kInOrderTreeScan = {"pipelined_tree", Collective::kScan, nullptr, build, cost,
                                               "(k + s(M-1))(a + b m/M) + 3 g m, k = 4 depth, s <= 3"};
extern const FlatAlgorithm kInOrderTreeExscan = {"pipelined_tree", Collective::kExscan, nullptr, build, cost,
                                                 "(k + s(M-1))(a + b m/M) + 3 g m, k = 4 depth, s <= 3"};

}  // namespace strata
