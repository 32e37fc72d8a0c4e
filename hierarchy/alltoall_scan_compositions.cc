// Hierarchical alltoall, scan, exscan and barrier (002, "Hierarchical, full-lane collectives";
// "Hierarchical collectives": Scan = Reduce(node) -> Exscan(C) -> Scan(node), for ranks numbered
// node by node).
//   alltoall fulllane: alltoall(lane; node k' gets the blocks for all its ranks) -> alltoall(node)
//   scan fulllane:     reduce-scatter(node) -> exscan(lane) -> allgather(node), with scan(node)
//   scan leader:       reduce(node) -> exscan(leaders) -> broadcast(node), with scan(node)
//   (either on one node: scan(node) alone)
//   barrier:           barrier(node) -> dissemination(leaders) -> barrier(node)
#include "hierarchy/composition.h"
#include "intra_node/node_collectives.h"

namespace strata {
namespace {

std::string regular(const CollectiveArgs&, const Topology& t) { return needRegular(t); }
std::string regularConsecutive(const CollectiveArgs&, const Topology& t) {
  const std::string r = needRegular(t);
  return r.empty() ? needConsecutive(t) : r;
}
std::string consecutive(const CollectiveArgs&, const Topology& t) { return needConsecutive(t); }

size_t rankOf(const Topology& t, int node, int local) {
  return static_cast<size_t>(t.nodes[static_cast<size_t>(node)][static_cast<size_t>(local)]);
}

// ---- alltoall ----
void buildAllToAllFullLane(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank), lane = t.laneGroup(t.rank);
  const size_t blk = a.count;
  const int n = team.size(), N = t.numNodes();
  const size_t per = static_cast<size_t>(n) * blk;  // one node's blocks
  const Slice send{BufferId::kSend, 0, blk * static_cast<size_t>(t.size)};
  const Slice recv{BufferId::kRecv, 0, blk * static_cast<size_t>(t.size)};
  // In place, keep the input: the node step below writes the receive buffer while the lane step
  // may still read blocks of it.
  Slice input = send;
  if (a.inPlace) {
    input = b.scratch(send.count);
    b.label("alltoall-in-place-copy", 0);
    b.copy(input, send);
  }
  // Lane step: to node k' go the blocks of all of k''s ranks, in local-rank order.
  Slice packed = b.scratch(per * static_cast<size_t>(N));
  b.label("lane-pack", 0);
  for (int k = 0; k < N; ++k) {
    for (int l = 0; l < n; ++l) b.copy(packed.sub((static_cast<size_t>(k) * n + l) * blk, blk), input.sub(rankOf(t, k, l) * blk, blk));
  }
  const Slice fromLane = b.scratch(per * static_cast<size_t>(N));
  NestedCall call(Collective::kAllToAll, per, 0, false);
  buildLevel(b, a, call, lane, packed, fromLane, c.lane, 1);
  // fromLane[k''][l'] = from rank (k'', me), for member l' of my node. Node step: member l' gets
  // fromLane[k''][l'] for every k'', stored at rank (k'', me)'s position.
  std::vector<std::vector<Slice>> inPieces(static_cast<size_t>(n)), outPieces(static_cast<size_t>(n));
  for (int dest = 0; dest < n; ++dest) {
    for (int k = 0; k < N; ++k) inPieces[static_cast<size_t>(dest)].push_back(fromLane.sub((static_cast<size_t>(k) * n + dest) * blk, blk));
  }
  for (int src = 0; src < n; ++src) {
    for (int k = 0; k < N; ++k) outPieces[static_cast<size_t>(src)].push_back(recv.sub(rankOf(t, k, src) * blk, blk));
  }
  b.label("node-alltoall", 0);
  b.nodeOp(nodeAllToAllPieces(team, inPieces, outPieces));
}

double costAllToAllFullLane(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  const double mine = callBytes(a) * t.size;
  NestedCall call(Collective::kAllToAll, a.count * static_cast<size_t>(n), 0, false);
  // The lane pack, and in place the input's copy first, are copies within the rank.
  const double copies = (a.inPlace ? 2 : 1) * mine;
  return c.node.copy * copies + levelCost(a, call, N, c.lane) + nodeAllToAllCost(mine, n, c.node);
}

// ---- scan / exscan ----
// result = E (reduction of the earlier nodes) op S (my node's prefix), whichever exist.
void combinePrefix(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, Slice E, Slice S, Slice out) {
  const bool exclusive = a.coll == Collective::kExscan;
  const bool earlierNodes = t.myNode() > 0;
  const bool earlierMembers = !exclusive || t.myLocalRank() > 0;
  b.label("combine-prefix", 0);
  if (earlierNodes && earlierMembers) b.reduce(out, {E, S});
  else if (earlierNodes) b.copy(out, E);
  else if (earlierMembers) b.copy(out, S);
}

// On one node no node has earlier nodes: the node's total (its reduce-scatter or reduce, then the
// lanes' or leaders' exscan) would feed nothing, and the node scan writes the receive buffer itself
// (in place too: each member's slot holds its input for the members after it). True where it built
// that.
bool buildScanOnOneNode(PlanBuilder& b, const CollectiveArgs& a, const Topology& t) {
  if (t.numNodes() > 1) return false;
  b.label("node-scan", 0);
  b.nodeOp(nodeScan(t.nodeGroup(t.rank), Slice{BufferId::kSend, 0, a.count}, Slice{BufferId::kRecv, 0, a.count},
                    a.coll == Collective::kExscan));
  return true;
}
double scanOnOneNodeCost(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  return nodeScanCost(callBytes(a), t.maxNodeSize(), c.node, a.coll == Collective::kExscan, a.inPlace);
}

void buildScanFullLane(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  if (buildScanOnOneNode(b, a, t)) return;
  const Group team = t.nodeGroup(t.rank), lane = t.laneGroup(t.rank);
  const int n = team.size();
  const bool exclusive = a.coll == Collective::kExscan;
  const BlockLayout blocks = BlockLayout::even(a.count, n, std::max<size_t>(1, 64 / a.elemSize()));
  const Slice in{BufferId::kSend, 0, a.count}, out{BufferId::kRecv, 0, a.count};
  const Slice total = b.scratch(blocks.count[static_cast<size_t>(team.me)]);
  const Slice E = b.scratch(a.count), S = b.scratch(a.count);
  b.label("node-reduce-scatter", 0);
  b.nodeOp(nodeReduceScatter(team, blockSlices(in, blocks), total));
  const Slice myE = E.sub(blocks.offset[static_cast<size_t>(team.me)], blocks.count[static_cast<size_t>(team.me)]);
  NestedCall call(Collective::kExscan, total.count, 0, false);
  buildLevel(b, a, call, lane, total, myE, c.lane, 1);
  if (t.myNode() > 0) {
    std::vector<std::vector<Slice>> pieces;
    for (int k = 0; k < n; ++k) pieces.push_back({E.sub(blocks.offset[static_cast<size_t>(k)], blocks.count[static_cast<size_t>(k)])});
    b.label("node-allgather", 0);
    b.nodeOp(nodeAllGather(team, pieces));
  }
  b.label("node-scan", 0);
  b.nodeOp(nodeScan(team, in, S, exclusive));
  combinePrefix(b, a, t, E, S, out);
}

double costScanFullLane(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  if (N == 1) return scanOnOneNodeCost(a, t, c);
  const double m = callBytes(a);
  NestedCall call(Collective::kExscan, (a.count + n - 1) / n, 0, false);
  return nodeReduceScatterCost(m, n, c.node) + levelCost(a, call, N, c.lane) + nodeAllGatherCost(m, n, c.node) +
         nodeScanCost(m, n, c.node, a.coll == Collective::kExscan) + c.node.gamma * 2 * m;
}

void buildScanLeader(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  if (buildScanOnOneNode(b, a, t)) return;
  const Group team = t.nodeGroup(t.rank);
  const bool exclusive = a.coll == Collective::kExscan;
  const Slice in{BufferId::kSend, 0, a.count}, out{BufferId::kRecv, 0, a.count};
  const bool leader = team.me == 0;
  const Slice total = leader ? b.scratch(a.count) : Slice{};
  const Slice E = b.scratch(a.count), S = b.scratch(a.count);
  b.label("node-reduce", 0);
  b.nodeOp(nodeReduce(team, 0, in, total));
  if (leader) {
    NestedCall call(Collective::kExscan, a.count, 0, false);
    buildLevel(b, a, call, representatives(t, t.nodes[0][0]), total, E, representativesLink(c.lane, t), 1);
  }
  if (t.myNode() > 0) {
    b.label("node-broadcast", 0);
    b.nodeOp(nodeBroadcast(team, 0, E, E));
  }
  b.label("node-scan", 0);
  b.nodeOp(nodeScan(team, in, S, exclusive));
  combinePrefix(b, a, t, E, S, out);
}

double costScanLeader(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  if (N == 1) return scanOnOneNodeCost(a, t, c);
  const double m = callBytes(a);
  NestedCall call(Collective::kExscan, a.count, 0, false);
  return nodeReduceCost(m, n, c.node) + levelCost(a, call, N, representativesLink(c.lane, t)) +
         nodeBroadcastCost(m, n, c.node) + nodeScanCost(m, n, c.node, a.coll == Collective::kExscan) +
         c.node.gamma * 2 * m;
}

// ---- barrier ----
void buildBarrier(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank);
  b.label("node-barrier", 0);
  const StepId first = b.nodeOp(nodeBarrier(team));
  const StepId leadersFrom = b.nextStepId();
  if (team.me == 0) {
    NestedCall call(Collective::kBarrier, 0, 0, false);
    buildLevel(b, a, call, representatives(t, t.nodes[0][0]), Slice{}, Slice{}, representativesLink(c.lane, t), 1);
  }
  b.label("node-barrier", 1);
  const StepId last = b.nodeOp(nodeBarrier(team));
  // The leaders' messages carry no data: order them after the node's arrival and the node's
  // release after all of them, explicitly.
  for (StepId s = leadersFrom; s < last; ++s) {
    b.addDependency(s, first);
    b.addDependency(last, s);
  }
}

double costBarrier(const CollectiveArgs&, const Topology& t, const LevelCosts& c) {
  return 2 * nodeBarrierCost(t.maxNodeSize(), c.node) + ceilLog2(t.numNodes()) * representativesLink(c.lane, t).alpha;
}

}  // namespace

extern const HierAlgorithm kFullLaneAllToAll = {"fulllane", Collective::kAllToAll, regular, buildAllToAllFullLane,
                                                costAllToAllFullLane, "pack + AA_lane(n blocks) + AA_node"};
extern const HierAlgorithm kFullLaneScan = {"fulllane", Collective::kScan, regularConsecutive, buildScanFullLane,
                                            costScanFullLane, "RS_node + Exscan_lane(m/n) + AG_node + Scan_node"};
extern const HierAlgorithm kFullLaneExscan = {"fulllane", Collective::kExscan, regularConsecutive, buildScanFullLane,
                                              costScanFullLane, "RS_node + Exscan_lane(m/n) + AG_node + Exscan_node"};
extern const HierAlgorithm kLeaderScan = {"leader", Collective::kScan, consecutive, buildScanLeader, costScanLeader,
                                          "Reduce_node + Exscan_leaders(m) + Bcast_node + Scan_node"};
extern const HierAlgorithm kLeaderExscan = {"leader", Collective::kExscan, consecutive, buildScanLeader, costScanLeader,
                                            "Reduce_node + Exscan_leaders(m) + Bcast_node + Exscan_node"};
extern const HierAlgorithm kHierBarrier = {"hierarchical", Collective::kBarrier, nullptr, buildBarrier, costBarrier,
                                           "2 Barrier_node + ceil(log N) a_lane"};

}  // namespace strata
