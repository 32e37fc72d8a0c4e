// Hierarchical allgather, reduce-scatter, gather and scatter (002, "Hierarchical, full-lane
// collectives"; "Hierarchical collectives" for the representative forms). Blocks are in rank
// order; a lane holds, on every node, the ranks with one local index, so lane data sits at strided
// rank positions and the node steps move lists of pieces.
//   allgather fulllane:   allgather(lane) -> allgather(node)
//   allgather leader:     gather(node) -> allgatherv(leaders) -> broadcast(node)
//   reducescatter full:   reduce-scatter(node, strided) -> reduce-scatter(lane)
//   reducescatter leader: reduce(node) -> reduce-scatterv(leaders) -> scatter(node)
//   gather fulllane:      gather(lane) -> gather(root's node);  leader: gather(node) -> gatherv(reps)
//   scatter fulllane:     scatter(root's node) -> scatter(lane); leader: scatterv(reps) -> scatter(node)
#include "hierarchy/composition.h"
#include "intra_node/node_collectives.h"

namespace strata {
namespace {

std::string regular(const CollectiveArgs&, const Topology& t) { return needRegular(t); }
std::string consecutive(const CollectiveArgs&, const Topology& t) { return needConsecutive(t); }

int rootNode(const CollectiveArgs& a, const Topology& t) { return t.nodeOf[static_cast<size_t>(a.root)]; }
int rootLocal(const CollectiveArgs& a, const Topology& t) { return t.localRankOf[static_cast<size_t>(a.root)]; }
size_t rankOf(const Topology& t, int node, int local) {
  return static_cast<size_t>(t.nodes[static_cast<size_t>(node)][static_cast<size_t>(local)]);
}
// The blocks (c elements each, in rank order) of local rank `local` on every node.
std::vector<Slice> laneBlocks(const Topology& t, Slice whole, size_t c, int local) {
  std::vector<Slice> out;
  for (int k = 0; k < t.numNodes(); ++k) out.push_back(whole.sub(rankOf(t, k, local) * c, c));
  return out;
}
// Node k's blocks (consecutive ranks): one range.
Slice nodeRange(const Topology& t, Slice whole, size_t c, int node) {
  return whole.sub(static_cast<size_t>(t.nodes[static_cast<size_t>(node)].front()) * c,
                   t.nodes[static_cast<size_t>(node)].size() * c);
}

// ---- allgather ----
void buildAllGatherFullLane(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank), lane = t.laneGroup(t.rank);
  const size_t n = a.count;
  const Slice recv{BufferId::kRecv, 0, n * static_cast<size_t>(t.size)};
  NestedCall call(Collective::kAllGatherv, n, 0, a.inPlace);
  for (int k = 0; k < t.numNodes(); ++k) {
    call.counts.push_back(n);
    call.displs.push_back(rankOf(t, k, team.me) * n);
  }
  buildLevel(b, a, call, lane, Slice{BufferId::kSend, 0, n}, recv, c.lane, 1);
  std::vector<std::vector<Slice>> pieces;
  for (int l = 0; l < team.size(); ++l) pieces.push_back(laneBlocks(t, recv, n, l));
  b.label("node-allgather", 0);
  b.nodeOp(nodeAllGather(team, pieces));
}

double costAllGatherFullLane(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  // The lane's allgather out of place: its formula prices the copy of the rank's own block from its
  // send buffer.
  NestedCall call(Collective::kAllGather, a.count, 0, a.inPlace);
  return levelCost(a, call, N, c.lane) + nodeAllGatherCost(callBytes(a) * t.size, n, c.node);
}

void buildAllGatherLeader(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank);
  const size_t n = a.count;
  const Slice recv{BufferId::kRecv, 0, n * static_cast<size_t>(t.size)};
  const Slice mine{BufferId::kSend, 0, n};
  std::vector<std::vector<Slice>> inPieces, outPieces;
  for (int l = 0; l < team.size(); ++l) {
    inPieces.push_back({mine});
    outPieces.push_back({recv.sub(rankOf(t, t.myNode(), l) * n, n)});
  }
  b.label("node-gather", 0);
  b.nodeOp(nodeGather(team, 0, inPieces, outPieces));
  if (team.me == 0) {
    NestedCall call(Collective::kAllGatherv, n * team.ranks.size(), 0, true);
    for (int k = 0; k < t.numNodes(); ++k) {
      call.counts.push_back(t.nodes[static_cast<size_t>(k)].size() * n);
      call.displs.push_back(static_cast<size_t>(t.nodes[static_cast<size_t>(k)].front()) * n);
    }
    buildLevel(b, a, call, representatives(t, t.nodes[0][0]), nodeRange(t, recv, n, t.myNode()), recv,
               representativesLink(c.lane, t), 1);
  }
  b.label("node-broadcast", 0);
  b.nodeOp(nodeBroadcast(team, 0, recv, recv));
}

double costAllGatherLeader(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  const double total = callBytes(a) * t.size;
  NestedCall call(Collective::kAllGather, a.count * static_cast<size_t>(n), 0, true);
  // In place each leader's own block is already in its receive buffer: its node gather copies none.
  return nodeGatherCost(callBytes(a) * n, n, c.node, !a.inPlace) +
         (N > 1 ? levelCost(a, call, N, representativesLink(c.lane, t)) : 0.0) +
         nodeBroadcastCost(total, n, c.node);
}

// ---- reduce-scatter ----
void buildReduceScatterFullLane(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank), lane = t.laneGroup(t.rank);
  const size_t n = a.count;
  const int N = t.numNodes();
  const Slice send{BufferId::kSend, 0, n * static_cast<size_t>(t.size)};
  // Member l's share: the node's partial sums of every node's local-rank-l block, in node order.
  // On one node that is the result itself: no lane step, no copy.
  const Slice share = N == 1 ? Slice{BufferId::kRecv, 0, n} : b.scratch(n * static_cast<size_t>(N));
  std::vector<std::vector<Slice>> blocks;
  for (int l = 0; l < team.size(); ++l) blocks.push_back(laneBlocks(t, send, n, l));
  std::vector<Slice> results;
  for (int k = 0; k < N; ++k) results.push_back(share.sub(static_cast<size_t>(k) * n, n));
  b.label("node-reduce-scatter", 0);
  b.nodeOp(nodeReduceScatterPieces(team, blocks, results));
  if (N == 1) {
    if (a.op == strataAvg) b.divide(share);
    return;
  }
  NestedCall call(Collective::kReduceScatter, n, 0, false);
  buildLevel(b, a, call, lane, share, Slice{BufferId::kRecv, 0, n}, c.lane, 1);
}

double costReduceScatterFullLane(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  NestedCall call(Collective::kReduceScatter, a.count, 0, false);
  return nodeReduceScatterCost(callBytes(a) * t.size, n, c.node) + levelCost(a, call, N, c.lane);
}

void buildReduceScatterLeader(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank);
  const size_t n = a.count, total = n * static_cast<size_t>(t.size);
  const Slice send{BufferId::kSend, 0, total};
  const bool leader = team.me == 0, oneNode = t.numNodes() == 1;
  const Slice sum = leader ? b.scratch(total) : Slice{};
  // On one node the node's sums are what the leader scatters: no level of one member copying them.
  const Slice mineOfNode = leader ? (oneNode ? sum : b.scratch(n * team.ranks.size())) : Slice{};
  b.label("node-reduce", 0);
  b.nodeOp(nodeReduce(team, 0, send, sum));
  if (leader && oneNode && a.op == strataAvg) b.divide(sum);
  if (leader && !oneNode) {
    NestedCall call(Collective::kReduceScatterv, n * team.ranks.size(), 0, false);
    for (int k = 0; k < t.numNodes(); ++k) call.counts.push_back(t.nodes[static_cast<size_t>(k)].size() * n);
    buildLevel(b, a, call, representatives(t, t.nodes[0][0]), sum, mineOfNode, representativesLink(c.lane, t), 1);
  }
  std::vector<std::vector<Slice>> inPieces, outPieces;
  for (int l = 0; l < team.size(); ++l) {
    inPieces.push_back({leader ? mineOfNode.sub(static_cast<size_t>(l) * n, n) : Slice{BufferId::kScratch, 0, n}});
    outPieces.push_back({Slice{BufferId::kRecv, 0, n}});
  }
  b.label("node-scatter", 0);
  b.nodeOp(nodeScatter(team, 0, inPieces, outPieces));
}

double costReduceScatterLeader(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  const double total = callBytes(a) * t.size;
  NestedCall call(Collective::kReduceScatter, a.count * static_cast<size_t>(n), 0, false);
  return nodeReduceCost(total, n, c.node) + (N > 1 ? levelCost(a, call, N, representativesLink(c.lane, t)) : 0.0) +
         nodeScatterCost(callBytes(a) * n, n, c.node);
}

// ---- gather ----
void buildGatherFullLane(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank), lane = t.laneGroup(t.rank);
  const size_t n = a.count;
  const int N = t.numNodes();
  const bool onRootNode = t.myNode() == rootNode(a, t);
  // On the root's node, each member collects its lane's blocks in node order.
  const Slice laneBuf = onRootNode ? b.scratch(n * static_cast<size_t>(N)) : Slice{};
  NestedCall call(Collective::kGather, n, laneIndexOfNode(rootNode(a, t)), false);
  buildLevel(b, a, call, lane, Slice{BufferId::kSend, 0, n}, laneBuf, c.lane, 1);
  if (!onRootNode) return;
  const Slice recv{BufferId::kRecv, 0, n * static_cast<size_t>(t.size)};
  std::vector<std::vector<Slice>> inPieces, outPieces;
  for (int l = 0; l < team.size(); ++l) {
    std::vector<Slice> in;
    for (int k = 0; k < N; ++k) in.push_back(laneBuf.sub(static_cast<size_t>(k) * n, n));
    inPieces.push_back(in);
    outPieces.push_back(laneBlocks(t, recv, n, l));
  }
  b.label("node-gather", 0);
  b.nodeOp(nodeGather(team, rootLocal(a, t), inPieces, outPieces));
}

double costGatherFullLane(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  NestedCall call(Collective::kGather, a.count, 0, false);
  return levelCost(a, call, N, c.lane) + nodeGatherCost(callBytes(a) * t.size, n, c.node);
}

void buildGatherLeader(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank);
  const size_t n = a.count;
  const bool rep = isRepresentative(t, a.root);
  const int repLocal = t.myNode() == rootNode(a, t) ? rootLocal(a, t) : 0;
  const Slice recv{BufferId::kRecv, 0, n * static_cast<size_t>(t.size)};
  // The root gathers its node's blocks in place; other representatives in scratch.
  const Slice nodeBuf = t.rank == a.root ? nodeRange(t, recv, n, t.myNode())
                                         : (rep ? b.scratch(n * team.ranks.size()) : Slice{});
  std::vector<std::vector<Slice>> inPieces, outPieces;
  for (int l = 0; l < team.size(); ++l) {
    inPieces.push_back({Slice{BufferId::kSend, 0, n}});
    outPieces.push_back({rep ? nodeBuf.sub(static_cast<size_t>(l) * n, n) : Slice{BufferId::kRecv, 0, n}});
  }
  b.label("node-gather", 0);
  b.nodeOp(nodeGather(team, repLocal, inPieces, outPieces));
  if (rep) {
    NestedCall call(Collective::kGatherv, nodeBuf.count, rootNode(a, t), t.rank == a.root);
    for (int k = 0; k < t.numNodes(); ++k) {
      call.counts.push_back(t.nodes[static_cast<size_t>(k)].size() * n);
      call.displs.push_back(static_cast<size_t>(t.nodes[static_cast<size_t>(k)].front()) * n);
    }
    buildLevel(b, a, call, representatives(t, a.root), nodeBuf, recv, representativesLink(c.lane, t), 1);
  }
}

double costGatherLeader(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  NestedCall call(Collective::kGather, a.count * static_cast<size_t>(n), 0, false);
  // In place the root's own block is already in its receive buffer; the other nodes'
  // representatives, gathering into scratch at the same time, still copy theirs.
  return nodeGatherCost(callBytes(a) * n, n, c.node, !(a.inPlace && N == 1)) +
         (N > 1 ? levelCost(a, call, N, representativesLink(c.lane, t)) : 0.0);
}

// ---- scatter ----
void buildScatterFullLane(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank), lane = t.laneGroup(t.rank);
  const size_t n = a.count;
  const int N = t.numNodes();
  const bool onRootNode = t.myNode() == rootNode(a, t);
  // On one node the node scatter writes each member's receive buffer: no lane of one member copying
  // out of a lane buffer.
  const Slice laneBuf = N == 1 ? Slice{BufferId::kRecv, 0, n} : onRootNode ? b.scratch(n * static_cast<size_t>(N)) : Slice{};
  if (onRootNode) {
    const Slice send{BufferId::kSend, 0, n * static_cast<size_t>(t.size)};
    std::vector<std::vector<Slice>> inPieces, outPieces;
    for (int l = 0; l < team.size(); ++l) {
      inPieces.push_back(laneBlocks(t, send, n, l));
      std::vector<Slice> out;
      for (int k = 0; k < N; ++k) out.push_back(laneBuf.sub(static_cast<size_t>(k) * n, n));
      outPieces.push_back(out);
    }
    b.label("node-scatter", 0);
    b.nodeOp(nodeScatter(team, rootLocal(a, t), inPieces, outPieces));
  }
  if (N == 1) return;
  NestedCall call(Collective::kScatter, n, laneIndexOfNode(rootNode(a, t)), false);
  buildLevel(b, a, call, lane, laneBuf, Slice{BufferId::kRecv, 0, n}, c.lane, 1);
}

double costScatterFullLane(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  NestedCall call(Collective::kScatter, a.count, 0, false);
  // On one node in place the root's own block is already in its receive buffer (on more, the node
  // scatter writes a lane buffer).
  return (N > 1 ? levelCost(a, call, N, c.lane) : 0.0) +
         nodeScatterCost(callBytes(a) * t.size, n, c.node, !(a.inPlace && N == 1));
}

void buildScatterLeader(PlanBuilder& b, const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const Group team = t.nodeGroup(t.rank);
  const size_t n = a.count;
  const bool rep = isRepresentative(t, a.root);
  const int repLocal = t.myNode() == rootNode(a, t) ? rootLocal(a, t) : 0;
  const Slice send{BufferId::kSend, 0, n * static_cast<size_t>(t.size)};
  const Slice nodeBuf = t.rank == a.root ? nodeRange(t, send, n, t.myNode())
                                         : (rep ? b.scratch(n * team.ranks.size()) : Slice{});
  if (rep) {
    NestedCall call(Collective::kScatterv, nodeBuf.count, rootNode(a, t), t.rank == a.root);
    for (int k = 0; k < t.numNodes(); ++k) {
      call.sendCounts.push_back(t.nodes[static_cast<size_t>(k)].size() * n);
      call.sendDispls.push_back(static_cast<size_t>(t.nodes[static_cast<size_t>(k)].front()) * n);
    }
    buildLevel(b, a, call, representatives(t, a.root), send, nodeBuf, representativesLink(c.lane, t), 1);
  }
  std::vector<std::vector<Slice>> inPieces, outPieces;
  for (int l = 0; l < team.size(); ++l) {
    inPieces.push_back({rep ? nodeBuf.sub(static_cast<size_t>(l) * n, n) : Slice{BufferId::kSend, 0, n}});
    outPieces.push_back({Slice{BufferId::kRecv, 0, n}});
  }
  b.label("node-scatter", 0);
  b.nodeOp(nodeScatter(team, repLocal, inPieces, outPieces));
}

double costScatterLeader(const CollectiveArgs& a, const Topology& t, const LevelCosts& c) {
  const int n = t.maxNodeSize(), N = t.numNodes();
  NestedCall call(Collective::kScatter, a.count * static_cast<size_t>(n), 0, false);
  // In place the root's own block is already in its receive buffer; the other nodes'
  // representatives, scattering out of scratch, still copy theirs.
  return nodeScatterCost(callBytes(a) * n, n, c.node, !(a.inPlace && N == 1)) +
         (N > 1 ? levelCost(a, call, N, representativesLink(c.lane, t)) : 0.0);
}

}  // namespace

extern const HierAlgorithm kFullLaneAllGather = {"fulllane", Collective::kAllGather, regular, buildAllGatherFullLane,
                                                 costAllGatherFullLane, "AG_lane(m/n) + AG_node(m)"};
extern const HierAlgorithm kLeaderAllGather = {"leader", Collective::kAllGather, consecutive, buildAllGatherLeader,
                                               costAllGatherLeader, "Gather_node + AGv_leaders(m) + Bcast_node(m)"};
extern const HierAlgorithm kFullLaneReduceScatter = {"fulllane", Collective::kReduceScatter, regular,
                                                     buildReduceScatterFullLane, costReduceScatterFullLane,
                                                     "RS_node(m) + RS_lane(m/n)"};
extern const HierAlgorithm kLeaderReduceScatter = {"leader", Collective::kReduceScatter, consecutive,
                                                   buildReduceScatterLeader, costReduceScatterLeader,
                                                   "Reduce_node(m) + RSv_leaders(m) + Scatter_node"};
extern const HierAlgorithm kFullLaneGather = {"fulllane", Collective::kGather, regular, buildGatherFullLane,
                                              costGatherFullLane, "Gather_lane(m/n) + Gather_node(m)"};
extern const HierAlgorithm kLeaderGather = {"leader", Collective::kGather, consecutive, buildGatherLeader, costGatherLeader,
                                            "Gather_node + Gatherv_reps(m)"};
extern const HierAlgorithm kFullLaneScatter = {"fulllane", Collective::kScatter, regular, buildScatterFullLane,
                                               costScatterFullLane, "Scatter_node(m) + Scatter_lane(m/n)"};
extern const HierAlgorithm kLeaderScatter = {"leader", Collective::kScatter, consecutive, buildScatterLeader,
                                             costScatterLeader, "Scatterv_reps(m) + Scatter_node"};

}  // namespace strata
