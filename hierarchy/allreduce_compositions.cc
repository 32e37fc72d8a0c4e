// Hierarchical allreduce (002, "Hierarchical, full-lane collectives"; "Hierarchical collectives").
//   fulllane: reduce-scatter(node) -> allreduce(lane, m/n) -> allgather(node); nodes of equal size.
//             T = RS_node(m) + AR_lane(m/n, N) + AG_node(m)
//   leader:   reduce(node, to member 0) -> allreduce(leaders, m) -> broadcast(node); any nodes.
//             T = Reduce_node(m) + AR_lane(m, N) + Bcast_node(m)
//   oneshot:  allreduce(node, every member reduces everything at once) -> allreduce(lane, m) on
//             every lane; the fewest rounds, for small vectors. T = AR1_node(m) + AR_lane(m, N)
#include "hierarchy/composition.h"
#include "intra_node/node_collectives.h"

namespace strata {
namespace {

size_t granule(const CollectiveArgs& a) { return std::max<size_t>(1, 64 / a.elemSize()); }

std::string fullLaneSupported(const CollectiveArgs&, const Topology& t) { return needRegular(t); }

void buildFullLane(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank), lane = t.laneGroup(t.rank);
  const int n = team.size();
  const BlockLayout blocks = BlockLayout::even(a.count, n, granule(a));
  const Slice in{BufferId::kSend, 0, a.count}, out{BufferId::kRecv, 0, a.count};
  const std::vector<Slice> inBlocks = blockSlices(in, blocks), outBlocks = blockSlices(out, blocks);
  const Slice mine = outBlocks[static_cast<size_t>(team.me)];
  b.label("node-reduce-scatter", 0);
  b.nodeOp(nodeReduceScatter(team, inBlocks, mine));
  NestedCall call(Collective::kAllReduce, mine.count, 0, true);
  buildLevel(b, a, call, lane, mine, mine, c.lane, 1);
  b.label("node-allgather", 0);
  std::vector<std::vector<Slice>> pieces;
  for (const Slice& s : outBlocks) pieces.push_back({s});
  b.nodeOp(nodeAllGather(team, pieces));
}

double costFullLane(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  const double m = callBytes(a);
  NestedCall call(Collective::kAllReduce, (a.count + n - 1) / n, 0, true);
  return nodeReduceScatterCost(m, n, c.node) + levelCost(a, call, N, c.lane) + nodeAllGatherCost(m, n, c.node);
}


void buildLeader(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank);
  const Slice in{BufferId::kSend, 0, a.count}, out{BufferId::kRecv, 0, a.count};
  b.label("node-reduce", 0);
  b.nodeOp(nodeReduce(team, 0, in, out));
  if (t.myLocalRank() == 0) {
    const Group leaders = representatives(t, t.nodes[0][0]);
    NestedCall call(Collective::kAllReduce, a.count, 0, true);
    buildLevel(b, a, call, leaders, out, out, representativesLink(c.lane, t), 1);
  }
  b.label("node-broadcast", 0);
  b.nodeOp(nodeBroadcast(team, 0, out, out));
}

double costLeader(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  const double m = callBytes(a);
  NestedCall call(Collective::kAllReduce, a.count, 0, true);
  return nodeReduceCost(m, n, c.node) +
         (N > 1 ? levelCost(a, call, N, representativesLink(c.lane, t)) : 0.0) + nodeBroadcastCost(m, n, c.node);
}

std::string oneShotSupported(const CollectiveArgs&, const Topology& t) {
  return t.numNodes() == 1 ? "" : needRegular(t);
}

void buildOneShot(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank), lane = t.laneGroup(t.rank);
  const Slice in{BufferId::kSend, 0, a.count}, out{BufferId::kRecv, 0, a.count};
  b.label("node-allreduce", 0);
  b.nodeOp(nodeAllReduce(team, in, out));
  NestedCall call(Collective::kAllReduce, a.count, 0, true);
  buildLevel(b, a, call, lane, out, out, c.lane, 1);
}

double costOneShot(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  NestedCall call(Collective::kAllReduce, a.count, 0, true);
  return nodeAllReduceCost(callBytes(a), n, c.node) + (N > 1 ? levelCost(a, call, N, c.lane) : 0.0);
}

}  // namespace

extern const HierAlgorithm kFullLaneAllReduce = {"fulllane", Collective::kAllReduce, fullLaneSupported, buildFullLane,
                                                 costFullLane, "RS_node(m) + AR_lane(m/n) + AG_node(m)"};
extern const HierAlgorithm kLeaderAllReduce = {"leader", Collective::kAllReduce, nullptr, buildLeader, costLeader,
                                               "Reduce_node(m) + AR_leaders(m) + Bcast_node(m)"};
extern const HierAlgorithm kOneShotAllReduce = {"oneshot", Collective::kAllReduce, oneShotSupported, buildOneShot,
                                                costOneShot, "AR1_node(m) + AR_lane(m)"};

}  // namespace strata
