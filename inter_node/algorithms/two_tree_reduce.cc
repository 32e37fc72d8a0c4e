// Two-tree reduce (Sanders, Speck, Traff; 002, "Two (pipelined) binary trees", Example: Reduction):
// the broadcast run backwards. Each half of the vector is reduced up its own tree, pipelined in
// blocks; an inner node adds its children's blocks to its own, a leaf sends its own block, and the
// root adds both trees' sums to its input. Every rank's sends follow the order of the synchronous
// colour schedule (twoTreeReduceSchedule), one after the other, and so do its receives: posted up
// front, one child's stream of blocks took the receive link ahead of the block the schedule gives
// another (8 and 16 nodes at 256 MiB, simulated: 1.3x the formula, though no link carried more
// than beta m).
// Commutative operators (all of Strata's).
//   T(m) = (k-2) alpha + 2 sqrt((k-2) alpha beta m) + beta m + gamma m,   k = 2 depth
#include <algorithm>
#include <array>
#include <map>

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
  const Slice input{BufferId::kSend, 0, a.count};
  const size_t granule = std::max<size_t>(1, 64 / a.elemSize());
  const BlockLayout halves = BlockLayout::even(a.count, 2, granule);
  if (p == 1) {
    b.label("two-tree-reduce", 0);
    b.copy(Slice{BufferId::kRecv, 0, a.count}, input);
    divideIfAverage(b, a, Slice{BufferId::kRecv, 0, a.count});
    return;
  }
  const TwoTree tt = makeTwoTree(p);
  const size_t M = blocksPerHalf(a, tt.depth, opt);
  BlockLayout blocks[2];
  for (int t = 0; t < 2; ++t) blocks[t] = BlockLayout::even(halves.count[static_cast<size_t>(t)], static_cast<int>(M), granule);
  auto block = [&](Slice s, int t, size_t k) {
    return s.sub(halves.offset[static_cast<size_t>(t)] + blocks[t].offset[k], blocks[t].count[k]);
  };
  const auto schedule = twoTreeReduceSchedule(tt, M);
  // Where each child's blocks land: fromChild[t][c] for my child c in tree t (member 0: the tree
  // roots), and my receives from them in the schedule's order, one after the other.
  std::array<std::map<int, Slice>, 2> fromChild;
  struct Incoming {
    int step, tree, from;
    size_t block;
  };
  std::vector<Incoming> incoming;
  for (int u = 1; u < p; ++u) {
    for (const ScheduledSend& s : schedule[static_cast<size_t>(u)]) {
      if (s.to != v || blocks[s.tree].count[s.block] == 0) continue;
      incoming.push_back({s.step, s.tree, u, s.block});
      auto& slot = fromChild[static_cast<size_t>(s.tree)];
      if (slot.find(u) == slot.end()) slot.emplace(u, b.scratch(a.count));
    }
  }
  std::stable_sort(incoming.begin(), incoming.end(), [](const Incoming& x, const Incoming& y) { return x.step < y.step; });
  StepId lastRecv = kNoStep;
  for (const Incoming& in : incoming) {
    b.label("two-tree-reduce", in.step);
    b.setPhase(in.tree);
    lastRecv = b.recv(vg.rank(in.from), block(fromChild[static_cast<size_t>(in.tree)].at(in.from), in.tree, in.block),
                      static_cast<int>(in.block), {lastRecv});
  }
  if (v == 0) {
    const Slice result{BufferId::kRecv, 0, a.count};
    for (size_t k = 0; k < M; ++k) {
      for (int t = 0; t < 2; ++t) {
        if (blocks[t].count[k] == 0) continue;
        b.label("two-tree-reduce", static_cast<int>(k));
        b.setPhase(t);
        const Slice fromTree = fromChild[static_cast<size_t>(t)].at(tt.treeRoot[static_cast<size_t>(t)]);
        b.reduce(block(result, t, k), {block(input, t, k), block(fromTree, t, k)});
        divideIfAverage(b, a, block(result, t, k));
      }
    }
    return;
  }
  // Per tree: my partial sum of each block (my input alone where I am a leaf).
  Slice partial[2];
  for (int t = 0; t < 2; ++t) {
    const auto& children = fromChild[static_cast<size_t>(t)];
    partial[t] = children.empty() ? input : b.scratch(a.count);
    for (size_t k = 0; k < M; ++k) {
      if (blocks[t].count[k] == 0 || children.empty()) continue;
      b.label("two-tree-reduce", static_cast<int>(k));
      b.setPhase(t);
      std::vector<Slice> terms = {block(input, t, k)};
      for (const auto& [c, slot] : children) terms.push_back(block(slot, t, k));
      b.reduce(block(partial[t], t, k), terms);
    }
  }
  StepId lastSend = kNoStep;
  for (const ScheduledSend& s : schedule[static_cast<size_t>(v)]) {
    if (blocks[s.tree].count[s.block] == 0) continue;
    b.label("two-tree-reduce", s.step);
    b.setPhase(s.tree);
    lastSend = b.send(vg.rank(s.to), block(partial[s.tree], s.tree, s.block), static_cast<int>(s.block), {lastSend});
  }
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  if (p == 1) return 0;
  const TwoTree tt = makeTwoTree(p);
  BuildOptions opt;
  opt.link = c;
  const size_t M = blocksPerHalf(a, tt.depth, opt);
  // Each edge of the two trees carries its M blocks over their 2 (depth + M - 1) rounds.
  const double active = static_cast<double>(M) / (2 * (tt.depth + static_cast<double>(M) - 1));
  const LinkCost k = treeEdges(c, p, a.root, {&tt.parent[0], &tt.parent[1]}, active);
  return treePipelineTime(callBytes(a) / 2, tt.depth, k, M) + c.gamma * callBytes(a);
}

}  // namespace

extern const FlatAlgorithm kTwoTreeReduce = {"two_tree", Collective::kReduce, nullptr, build, cost,
                                             "(k-2) a + 2 sqrt((k-2) a b m) + b m + g m, k = 2 depth"};

}  // namespace strata
