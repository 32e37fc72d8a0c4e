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
//   T(m) = (k + s(M-1)) (alpha + beta m/M) + G gamma m,   M = sqrt((k - s) beta m / (s alpha)) blocks,
// k the rounds the first block's messages take on this tree, one port a rank and direction (the
// seed's 4 depth bounds it: two messages a level up and two down; on 2 ranks it is 1, one message
// up), G the busiest rank's reductions of the whole vector (at most 4, an exscan's 5).
#include <algorithm>
#include <set>

#include "inter_node/algorithms/algorithm.h"
#include "inter_node/algorithms/binary_trees.h"
#include "inter_node/algorithms/tree_pipeline.h"

namespace strata {
namespace {

struct ScanRounds {
  int k = 0;  // rounds of the first block, up to the root and down to the deepest rank
  int s = 1;  // rounds per further block: the busiest rank's messages in one direction
  int reductions = 0;  // the busiest rank's reductions of a whole vector (each pass over it)
};

// The first block's rounds: its messages one round each, a rank sending one and receiving one at a
// time (the plan's sends and receives of block 0, in the order its dependencies allow). Up: each
// rank hears from its children (the one ready first first) and sends on the reduction of its
// subtree; down: a rank with ranks before its subtree gets their reduction from its parent, passes
// it on to its left child, and sends its inclusive prefix (after its left child's sum) to its right
// child.
int firstBlockRounds(const BinaryTree& tree, int p) {
  // Each port's busy rounds; a message takes the first round from `ready` in which both are free
  // (a round booked later leaves the rounds before it to messages ready sooner).
  std::vector<std::set<int>> tx(static_cast<size_t>(p)), rx(static_cast<size_t>(p));
  auto message = [&](int from, int to, int ready) {
    int t = ready;
    while (tx[static_cast<size_t>(from)].count(t) || rx[static_cast<size_t>(to)].count(t)) ++t;
    tx[static_cast<size_t>(from)].insert(t);
    rx[static_cast<size_t>(to)].insert(t);
    return t + 1;
  };
  std::vector<int> upReady(static_cast<size_t>(p), 0), leftSum(static_cast<size_t>(p), 0), prefix(static_cast<size_t>(p), 0);
  int last = 0;
  // A pre-order from the root (every parent before its children); reversed, children come first.
  std::vector<int> order, stack;
  if (tree.root >= 0) stack.push_back(tree.root);
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    order.push_back(v);
    for (int c : tree.children[static_cast<size_t>(v)]) {
      if (c >= 0) stack.push_back(c);
    }
  }
  // Up, children before parents.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int v = *it;
    const auto& ch = tree.children[static_cast<size_t>(v)];
    std::vector<int> kids;
    for (int c : ch) {
      if (c >= 0) kids.push_back(c);
    }
    std::stable_sort(kids.begin(), kids.end(), [&](int a, int b) { return upReady[static_cast<size_t>(a)] < upReady[static_cast<size_t>(b)]; });
    int ready = 0;
    for (int c : kids) {
      const int arrived = message(c, v, upReady[static_cast<size_t>(c)]);
      if (c == ch[0]) leftSum[static_cast<size_t>(v)] = arrived;
      ready = std::max(ready, arrived);
    }
    upReady[static_cast<size_t>(v)] = ready;
    last = std::max(last, ready);
  }
  // Down, parents before children.
  for (const int v : order) {
    const int left = tree.children[static_cast<size_t>(v)][0], right = tree.children[static_cast<size_t>(v)][1];
    int first = 0, end = 0;
    subtreeRange(tree, v, &first, &end);
    const bool hasPrefix = first > 0;
    if (left >= 0 && hasPrefix) {
      prefix[static_cast<size_t>(left)] = message(v, left, prefix[static_cast<size_t>(v)]);
      last = std::max(last, prefix[static_cast<size_t>(left)]);
    }
    if (right >= 0) {
      const int inclusive = std::max(prefix[static_cast<size_t>(v)], left >= 0 ? leftSum[static_cast<size_t>(v)] : 0);
      prefix[static_cast<size_t>(right)] = message(v, right, inclusive);
      last = std::max(last, prefix[static_cast<size_t>(right)]);
    }
  }
  return last;
}

// The rounds, and the most reductions any rank makes: its subtree's sum (left sum, input, right
// sum) where it has a parent and children; its inclusive prefix (the ranks before its subtree, its
// left sum, its input; alone its input, a pass over it too, unless that is its receive buffer in
// place); an exscan's exclusive one (of the first two) besides.
ScanRounds scanRounds(const BinaryTree& tree, int p, bool exclusive, bool inPlace) {
  ScanRounds r;
  r.k = firstBlockRounds(tree, p);
  for (int v = 0; v < p; ++v) {
    const bool left = tree.children[static_cast<size_t>(v)][0] >= 0;
    const bool right = tree.children[static_cast<size_t>(v)][1] >= 0;
    const bool parent = tree.parent[static_cast<size_t>(v)] >= 0;
    int first = 0, last = 0;
    subtreeRange(tree, v, &first, &last);
    const bool prefix = first > 0;
    const int in = int{left} + int{right} + int{prefix};
    const int out = int{parent} + int{left && prefix} + int{right};
    r.s = std::max({r.s, in, out});
    const int before = int{prefix} + int{left};  // the exclusive prefix's terms
    int reductions = parent && (left || right) ? int{left} + int{right} : 0;
    reductions += before > 0 ? before : (inPlace && !exclusive ? 0 : 1);
    if (exclusive && before > 0) reductions += std::max(1, before - 1);
    r.reductions = std::max(r.reductions, reductions);
  }
  return r;
}

// The blocks, from the rounds alone (the same on every rank, whichever is in place).
size_t scanBlocks(const CollectiveArgs& a, const ScanRounds& r, const BuildOptions& opt) {
  return cappedPipelineBlocks(a, callBytes(a), r.k, r.s, opt);
}

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions& opt) {
  const int p = g.size();
  const int v = g.me;
  const bool exclusive = a.coll == Collective::kExscan;
  const BinaryTree tree = inOrderTree(p);
  const Slice input{BufferId::kSend, 0, a.count};
  const Slice result{BufferId::kRecv, 0, a.count};
  const size_t M = scanBlocks(a, scanRounds(tree, p, exclusive, a.inPlace), opt);
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
  const BinaryTree tree = inOrderTree(p);
  const ScanRounds r = scanRounds(tree, p, a.coll == Collective::kExscan, a.inPlace);
  if (p <= 1) return r.reductions * c.gamma * callBytes(a);
  BuildOptions opt;
  opt.link = c;
  return pipelineTime(r.k, r.s, c, callBytes(a), scanBlocks(a, r, opt)) + r.reductions * c.gamma * callBytes(a);
}

}  // namespace

extern const FlatAlgorithm kInOrderTreeScan = {"pipelined_tree", Collective::kScan, nullptr, build, cost,
                                               "(k + s(M-1))(a + b m/M) + G g m, k: the first block's rounds, s <= 3, G <= 5"};
extern const FlatAlgorithm kInOrderTreeExscan = {"pipelined_tree", Collective::kExscan, nullptr, build, cost,
                                                 "(k + s(M-1))(a + b m/M) + G g m, k: the first block's rounds, s <= 3, G <= 5"};

}  // namespace strata
