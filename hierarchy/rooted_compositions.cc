// Hierarchical broadcast and reduce (002, "Hierarchical, full-lane collectives").
//   broadcast fulllane: scatter(root's node) -> broadcast(lane, m/n) -> allgather(node)
//   broadcast leader:   broadcast(one rank per node, the root on its node) -> broadcast(node)
//   reduce fulllane:    reduce-scatter(node) -> reduce(lane, m/n) -> gather(root's node)
//   reduce leader:      reduce(node, to one rank per node) -> reduce(those ranks, to the root)
#include "hierarchy/composition.h"
#include "intra_node/node_collectives.h"

namespace strata {
namespace {

size_t granule(const CollectiveArgs& a) { return std::max<size_t>(1, 64 / a.elemSize()); }
std::string regular(const CollectiveArgs&, const Topology& t) { return needRegular(t); }

int rootNode(const CollectiveArgs& a, const Topology& t) { return t.nodeOf[static_cast<size_t>(a.root)]; }
int rootLocal(const CollectiveArgs& a, const Topology& t) { return t.localRankOf[static_cast<size_t>(a.root)]; }

void buildBroadcastFullLane(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank), lane = t.laneGroup(t.rank);
  const BlockLayout blocks = BlockLayout::even(a.count, team.size(), granule(a));
  const Slice in{BufferId::kSend, 0, a.count}, out{BufferId::kRecv, 0, a.count};
  const std::vector<Slice> outBlocks = blockSlices(out, blocks);
  const Slice mine = outBlocks[static_cast<size_t>(team.me)];
  if (t.myNode() == rootNode(a, t)) {
    std::vector<std::vector<Slice>> inPieces, outPieces;
    for (int k = 0; k < team.size(); ++k) {
      inPieces.push_back({in.sub(blocks.offset[static_cast<size_t>(k)], blocks.count[static_cast<size_t>(k)])});
      outPieces.push_back({outBlocks[static_cast<size_t>(k)]});
    }
    b.label("node-scatter", 0);
    b.nodeOp(nodeScatter(team, rootLocal(a, t), inPieces, outPieces));
  }
  NestedCall call(Collective::kBroadcast, mine.count, laneIndexOfNode(rootNode(a, t)), true);
  buildLevel(b, a, call, lane, mine, mine, c.lane, 1);
  std::vector<std::vector<Slice>> pieces;
  for (const Slice& s : outBlocks) pieces.push_back({s});
  b.label("node-allgather", 0);
  b.nodeOp(nodeAllGather(team, pieces));
}

double costBroadcastFullLane(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  const double m = callBytes(a);
  NestedCall call(Collective::kBroadcast, (a.count + n - 1) / n, 0, true);
  // In place the root's own block is already in its receive buffer: its node scatter copies none.
  return nodeScatterCost(m, n, c.node, !a.inPlace) + levelCost(a, call, N, c.lane) + nodeAllGatherCost(m, n, c.node);
}

void buildBroadcastLeader(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank);
  const Slice in{BufferId::kSend, 0, a.count}, out{BufferId::kRecv, 0, a.count};
  const Group reps = representatives(t, a.root);
  // On one node the root's copy of its send buffer into its receive buffer runs inside the node
  // broadcast, round by round beside its writes into its slot, not before it as a level of one
  // member (2 ranks on the development VM, out of place: 1 MiB in 53-60 us, 72-76 with the copy
  // first; 4 MiB 186-207 against 251-261).
  const bool oneNode = t.numNodes() == 1;
  if (isRepresentative(t, a.root) && !oneNode) {
    NestedCall call(Collective::kBroadcast, a.count, rootNode(a, t), a.inPlace);
    buildLevel(b, a, call, reps, in, out, representativesLink(c.lane, t), 1);
  }
  const int rep = t.myNode() == rootNode(a, t) ? rootLocal(a, t) : 0;
  b.label("node-broadcast", 0);
  b.nodeOp(nodeBroadcast(team, rep, oneNode ? in : out, out));
}

double costBroadcastLeader(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  if (N == 1) return nodeBroadcastCost(callBytes(a), n, c.node, !a.inPlace);
  NestedCall call(Collective::kBroadcast, a.count, 0, false);
  return levelCost(a, call, N, representativesLink(c.lane, t)) + nodeBroadcastCost(callBytes(a), n, c.node);
}

void buildReduceFullLane(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank), lane = t.laneGroup(t.rank);
  const BlockLayout blocks = BlockLayout::even(a.count, team.size(), granule(a));
  const Slice in{BufferId::kSend, 0, a.count};
  // Only the root may write its receive buffer: the node's partial sums live in scratch.
  const Slice partial = b.scratch(blocks.count[static_cast<size_t>(team.me)]);
  b.label("node-reduce-scatter", 0);
  b.nodeOp(nodeReduceScatter(team, blocks.count.empty() ? std::vector<Slice>{} : blockSlices(in, blocks), partial));
  NestedCall call(Collective::kReduce, partial.count, laneIndexOfNode(rootNode(a, t)), true);
  buildLevel(b, a, call, lane, partial, partial, c.lane, 1);
  if (t.myNode() == rootNode(a, t)) {
    std::vector<std::vector<Slice>> inPieces, outPieces;
    const Slice out{BufferId::kRecv, 0, a.count};
    for (int k = 0; k < team.size(); ++k) {
      inPieces.push_back({k == team.me ? partial : Slice{BufferId::kScratch, partial.offset, blocks.count[static_cast<size_t>(k)]}});
      outPieces.push_back({out.sub(blocks.offset[static_cast<size_t>(k)], blocks.count[static_cast<size_t>(k)])});
    }
    b.label("node-gather", 0);
    b.nodeOp(nodeGather(team, rootLocal(a, t), inPieces, outPieces));
  }
}

double costReduceFullLane(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  const double m = callBytes(a);
  NestedCall call(Collective::kReduce, (a.count + n - 1) / n, 0, true);
  return nodeReduceScatterCost(m, n, c.node) + levelCost(a, call, N, c.lane) + nodeGatherCost(m, n, c.node);
}

void buildReduceLeader(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank);
  const Slice in{BufferId::kSend, 0, a.count};
  const bool rep = isRepresentative(t, a.root);
  const int repLocal = t.myNode() == rootNode(a, t) ? rootLocal(a, t) : 0;
  const Slice partial = t.rank == a.root ? Slice{BufferId::kRecv, 0, a.count} : (rep ? b.scratch(a.count) : Slice{});
  b.label("node-reduce", 0);
  b.nodeOp(nodeReduce(team, repLocal, in, partial));
  if (rep) {
    NestedCall call(Collective::kReduce, a.count, rootNode(a, t), true);
    buildLevel(b, a, call, representatives(t, a.root), partial, partial, representativesLink(c.lane, t), 1);
  }
}

double costReduceLeader(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  NestedCall call(Collective::kReduce, a.count, 0, true);
  return nodeReduceCost(callBytes(a), n, c.node) +
         (N > 1 ? levelCost(a, call, N, representativesLink(c.lane, t)) : 0.0);
}

}  // namespace

extern const HierAlgorithm kFullLaneBroadcast = {"fulllane", Collective::kBroadcast, regular, buildBroadcastFullLane,
                                                 costBroadcastFullLane, "Scatter_node(m) + Bcast_lane(m/n) + AG_node(m)"};
extern const HierAlgorithm kLeaderBroadcast = {"leader", Collective::kBroadcast, nullptr, buildBroadcastLeader,
                                               costBroadcastLeader, "Bcast_leaders(m) + Bcast_node(m)"};
extern const HierAlgorithm kFullLaneReduce = {"fulllane", Collective::kReduce, regular, buildReduceFullLane,
                                              costReduceFullLane, "RS_node(m) + Reduce_lane(m/n) + Gather_node(m)"};
extern const HierAlgorithm kLeaderReduce = {"leader", Collective::kReduce, nullptr, buildReduceLeader,
                                            costReduceLeader, "Reduce_node(m) + Reduce_leaders(m)"};

}  // namespace strata
