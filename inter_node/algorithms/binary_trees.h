// Binary trees for the pipelined tree algorithms (002, "The power of fixed-degree trees",
// "Two (pipelined) binary trees").
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <vector>

#include "kernels/plan/cost.h"

namespace strata {

// A rooted binary tree over nodes 0..n-1; parent -1 at the root, children -1 when absent.
struct BinaryTree {
  int root = -1;
  std::vector<int> parent;
  std::vector<std::array<int, 2>> children;  // [left, right]
  int depth = 0;                             // levels below the root

  int size() const { return static_cast<int>(parent.size()); }
  int childCount(int v) const {
    return (children[static_cast<size_t>(v)][0] >= 0) + (children[static_cast<size_t>(v)][1] >= 0);
  }
};

// In-order tree: node i sits at position i+1 of the tree built on the lowest set bit (002,
// "Complete, balanced, binary tree: Naming (in-order)"): the parent of position v with lowest set
// bit H is v-H when bit 2H of v is set or v+H is past the end, else v+H. Every subtree covers a
// consecutive range of nodes, so reductions over it follow rank order.
BinaryTree inOrderTree(int n);
// Heap (BFS) numbering: children 2i+1 and 2i+2.
BinaryTree heapTree(int n);
// The consecutive range [first, last] of nodes in v's subtree of an in-order tree.
void subtreeRange(const BinaryTree& t, int v, int* first, int* last);

// The two trees of the two-tree algorithms (Sanders, Speck, Traff; 002 "Two (pipelined) binary
// trees") over group members 1..n (member 0, the root of the collective, feeds both tree roots):
// T1 is the in-order tree over positions 1..n with member i at position i; T2 is T1 mirrored
// (member n+1-i at position i) when n is even, shifted (member i+1 at position i, member 1 at n)
// when n is odd, so that every member is an inner node of at most one tree. The edges, member to
// parent in either tree, are coloured with two colours so that each member's two parent edges
// differ and the edges from its children differ (the scheduling lemma: the graph of those edges
// is bipartite with degree <= 2).
struct TwoTree {
  int n = 0;                                    // members 1..n take part; member 0 is the root
  std::array<std::vector<int>, 2> parent;       // parent[t][member]: member or 0 for a tree root
  std::array<std::vector<std::array<int, 2>>, 2> children;  // children[t][member]
  std::array<std::vector<int>, 2> color;        // color[t][member]: colour of the edge to the parent
  std::array<int, 2> treeRoot = {-1, -1};
  int depth = 0;
};
TwoTree makeTwoTree(int p);

// The costs of a pipeline's steady state on trees over p ranks rooted at `root` (virtual rank v is
// member (root + v) mod p; `parents`: each tree's parent of every virtual rank, -1 for none), the
// fraction `active` of the edges carrying a block at any time (1 where `c` already keeps only the
// receivers' share busy): where the level prices crossings between nodes (LinkCost::crossing;
// strata-model's flat level behind a core), at the fraction of the edges whose two ranks are on
// different nodes; else the level's costs.
LinkCost treeEdges(const LinkCost& c, int p, int root, std::initializer_list<const std::vector<int>*> parents,
                   double active = 1);

// The synchronous two-tree schedule (002, scheduling lemma): in step t the edges of colour t mod 2
// carry one block each, the next one in order on that edge, if the sender has it by then. A
// member's sends, in step order, form its one-port sequence; following that order can never
// deadlock because it is a valid execution of the synchronous schedule.
struct ScheduledSend {
  int step;
  int tree;
  size_t block;
  int to;  // member
};
// Broadcast: blocks flow from member 0 down both trees (M blocks per tree).
std::vector<std::vector<ScheduledSend>> twoTreeBroadcastSchedule(const TwoTree& tt, size_t M);
// Reduction: blocks flow up both trees to member 0; a member sends block k of a tree once all its
// children in that tree have delivered block k.
std::vector<std::vector<ScheduledSend>> twoTreeReduceSchedule(const TwoTree& tt, size_t M);

}  // namespace strata
