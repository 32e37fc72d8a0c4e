// Topology: which ranks share a node (the node team) and which have the same local rank on every
// node (the lanes). The communicator computes it once at creation, from MPI_Comm_split_type or a
// virtual node shape; here it is pure data, so the compositions and the tests can build it.
#pragma once

#include <string>
#include <vector>

#include "kernels/common/status.h"
#include "kernels/plan/group.h"

namespace strata {

struct Topology {
  int size = 1;
  int rank = 0;
  bool virtualNodes = false;
  std::vector<int> nodeOf;                // node index of each rank
  std::vector<int> localRankOf;           // index of each rank within its node
  std::vector<std::vector<int>> nodes;    // members of each node, ascending ranks

  int numNodes() const { return static_cast<int>(nodes.size()); }
  int myNode() const { return nodeOf[static_cast<size_t>(rank)]; }
  int myLocalRank() const { return localRankOf[static_cast<size_t>(rank)]; }
  int nodeSize(int node) const { return static_cast<int>(nodes[static_cast<size_t>(node)].size()); }
  int maxNodeSize() const;
  // All nodes have the same number of ranks.
  bool regular() const;
  // Every node's ranks are consecutive and nodes follow each other in rank order.
  bool consecutive() const;
  // The node team of `r` (members in rank order) and its lane: the ranks with the same local rank,
  // one per node that has one, in node order.
  Group nodeGroup(int r) const;
  Group laneGroup(int r) const;
  std::vector<int> laneMembers(int localRank) const;
  // "2x4", "3+5", "1x8"
  std::string shapeText() const;

  // Nodes from a node key per rank (equal keys: same node); nodes are numbered in order of their
  // smallest rank.
  static Topology fromNodeKeys(const std::vector<int>& key, int rank);
  // Virtual nodes: shape {k} cuts the ranks into nodes of k consecutive ranks (the last may be
  // smaller); several values are explicit node sizes that must add up to `size`.
  static Status fromShape(const std::vector<int>& shape, int size, int rank, Topology* out);
};

}  // namespace strata
