#include "inter_node/algorithms/binary_trees.h"

#include <algorithm>
#include <functional>

namespace strata {
namespace {

int lowbit(int v) { return v & -v; }

// Parent position of position v (1-based) in the in-order tree of n positions, 0 for the root.
int inOrderParent(int v, int n) {
  const int h = lowbit(v);
  return ((v & (h << 1)) != 0 || v + h > n) ? v - h : v + h;
}

void computeDepth(BinaryTree& t) {
  t.depth = 0;
  for (int v = 0; v < t.size(); ++v) {
    int d = 0;
    for (int u = v; t.parent[static_cast<size_t>(u)] >= 0; u = t.parent[static_cast<size_t>(u)]) ++d;
    t.depth = std::max(t.depth, d);
  }
}

}  // namespace

BinaryTree inOrderTree(int n) {
  BinaryTree t;
  t.parent.assign(static_cast<size_t>(n), -1);
  t.children.assign(static_cast<size_t>(n), {-1, -1});
  for (int pos = 1; pos <= n; ++pos) {
    const int par = inOrderParent(pos, n);
    const int v = pos - 1;
    if (par == 0) {
      t.root = v;
      continue;
    }
    t.parent[static_cast<size_t>(v)] = par - 1;
    t.children[static_cast<size_t>(par - 1)][pos < par ? 0 : 1] = v;
  }
  computeDepth(t);
  return t;
}

BinaryTree heapTree(int n) {
  BinaryTree t;
  t.parent.assign(static_cast<size_t>(n), -1);
  t.children.assign(static_cast<size_t>(n), {-1, -1});
  if (n > 0) t.root = 0;
  for (int v = 1; v < n; ++v) {
    const int par = (v - 1) / 2;
    t.parent[static_cast<size_t>(v)] = par;
    t.children[static_cast<size_t>(par)][(v - 1) % 2] = v;
  }
  computeDepth(t);
  return t;
}

void subtreeRange(const BinaryTree& t, int v, int* first, int* last) {
  int lo = v, hi = v;
  while (t.children[static_cast<size_t>(lo)][0] >= 0) lo = t.children[static_cast<size_t>(lo)][0];
  while (t.children[static_cast<size_t>(hi)][1] >= 0) hi = t.children[static_cast<size_t>(hi)][1];
  *first = lo;
  *last = hi;
}

TwoTree makeTwoTree(int p) {
  TwoTree tt;
  const int n = p - 1;
  tt.n = n;
  for (int t = 0; t < 2; ++t) {
    tt.parent[static_cast<size_t>(t)].assign(static_cast<size_t>(p), -1);
    tt.children[static_cast<size_t>(t)].assign(static_cast<size_t>(p), {-1, -1});
    tt.color[static_cast<size_t>(t)].assign(static_cast<size_t>(p), -1);
  }
  if (n <= 0) return tt;
  // member at position `pos` of tree t
  auto memberAt = [n](int t, int pos) {
    if (t == 0) return pos;
    if (n % 2 == 0) return n + 1 - pos;     // mirrored
    return pos < n ? pos + 1 : 1;           // shifted
  };
  const BinaryTree shape = inOrderTree(n);  // positions 1..n are nodes 0..n-1
  tt.depth = shape.depth + 1;
  for (int t = 0; t < 2; ++t) {
    for (int node = 0; node < n; ++node) {
      const int member = memberAt(t, node + 1);
      const int par = shape.parent[static_cast<size_t>(node)];
      tt.parent[static_cast<size_t>(t)][static_cast<size_t>(member)] = par < 0 ? 0 : memberAt(t, par + 1);
      if (par < 0) tt.treeRoot[static_cast<size_t>(t)] = member;
      for (int side = 0; side < 2; ++side) {
        const int child = shape.children[static_cast<size_t>(node)][static_cast<size_t>(side)];
        tt.children[static_cast<size_t>(t)][static_cast<size_t>(member)][static_cast<size_t>(side)] =
            child < 0 ? -1 : memberAt(t, child + 1);
      }
    }
  }
  // Two-colour the edges (member -> parent, tree t): a vertex is a sender s_member (its two parent
  // edges) or a receiver r_member (its children's edges). Degree <= 2 and bipartite, so walking
  // each path or even cycle with alternating colours is a proper colouring.
  struct Edge {
    int member, tree;
  };
  std::vector<Edge> edges;
  std::vector<std::vector<int>> atSender(static_cast<size_t>(p)), atReceiver(static_cast<size_t>(p));
  for (int t = 0; t < 2; ++t) {
    for (int m = 1; m <= n; ++m) {
      const int id = static_cast<int>(edges.size());
      edges.push_back({m, t});
      atSender[static_cast<size_t>(m)].push_back(id);
      atReceiver[static_cast<size_t>(tt.parent[static_cast<size_t>(t)][static_cast<size_t>(m)])].push_back(id);
    }
  }
  std::vector<int> color(edges.size(), -1);
  auto receiverOf = [&](int e) { return tt.parent[static_cast<size_t>(edges[static_cast<size_t>(e)].tree)][static_cast<size_t>(edges[static_cast<size_t>(e)].member)]; };
  // The other edge at a vertex (sender side or receiver side), or -1.
  auto other = [&](const std::vector<int>& at, int e) {
    for (int x : at) {
      if (x != e) return x;
    }
    return -1;
  };
  std::function<void(int, int, bool)> walk = [&](int e, int c, bool viaSender) {
    // Colour e with c, then continue through its endpoint on the `viaSender` side.
    while (e >= 0 && color[static_cast<size_t>(e)] < 0) {
      color[static_cast<size_t>(e)] = c;
      const int next = viaSender ? other(atSender[static_cast<size_t>(edges[static_cast<size_t>(e)].member)], e)
                                 : other(atReceiver[static_cast<size_t>(receiverOf(e))], e);
      e = next;
      c = 1 - c;
      viaSender = !viaSender;
    }
  };
  auto degreeOne = [&](int e) {
    return atSender[static_cast<size_t>(edges[static_cast<size_t>(e)].member)].size() == 1 ||
           atReceiver[static_cast<size_t>(receiverOf(e))].size() == 1;
  };
  // Paths first, from an end, so that their colours alternate from one end to the other; what
  // remains are even cycles.
  for (int pass = 0; pass < 2; ++pass) {
    for (int e = 0; e < static_cast<int>(edges.size()); ++e) {
      if (color[static_cast<size_t>(e)] >= 0 || (pass == 0 && !degreeOne(e))) continue;
      const bool senderEnd = atSender[static_cast<size_t>(edges[static_cast<size_t>(e)].member)].size() == 1;
      walk(e, 0, !senderEnd);  // in pass 1 every remaining edge lies on an even cycle
    }
  }
  for (int e = 0; e < static_cast<int>(edges.size()); ++e) {
    tt.color[static_cast<size_t>(edges[static_cast<size_t>(e)].tree)][static_cast<size_t>(edges[static_cast<size_t>(e)].member)] =
        color[static_cast<size_t>(e)];
  }
  return tt;
}

std::vector<std::vector<ScheduledSend>> twoTreeBroadcastSchedule(const TwoTree& tt, size_t M) {
  const int p = tt.n + 1;
  std::vector<std::vector<ScheduledSend>> sends(static_cast<size_t>(p));
  if (tt.n <= 0 || M == 0) return sends;
  constexpr int kNever = -2;
  // arrived[t][v][k]: step in which member v received block k of tree t (-1: had it from the start)
  std::array<std::vector<std::vector<int>>, 2> arrived;
  std::array<std::vector<size_t>, 2> next;  // next block on the edge into member w
  for (int t = 0; t < 2; ++t) {
    arrived[static_cast<size_t>(t)].assign(static_cast<size_t>(p), std::vector<int>(M, kNever));
    arrived[static_cast<size_t>(t)][0].assign(M, -1);
    next[static_cast<size_t>(t)].assign(static_cast<size_t>(p), 0);
  }
  size_t pending = static_cast<size_t>(2 * tt.n) * M;
  for (int step = 0; pending > 0; ++step) {
    const int c = step % 2;
    for (int t = 0; t < 2; ++t) {
      for (int w = 1; w <= tt.n; ++w) {
        if (tt.color[static_cast<size_t>(t)][static_cast<size_t>(w)] != c) continue;
        size_t& k = next[static_cast<size_t>(t)][static_cast<size_t>(w)];
        if (k >= M) continue;
        const int u = tt.parent[static_cast<size_t>(t)][static_cast<size_t>(w)];
        const int have = arrived[static_cast<size_t>(t)][static_cast<size_t>(u)][k];
        if (have == kNever || have >= step) continue;
        sends[static_cast<size_t>(u)].push_back({step, t, k, w});
        arrived[static_cast<size_t>(t)][static_cast<size_t>(w)][k] = step;
        ++k;
        --pending;
      }
    }
  }
  return sends;
}

std::vector<std::vector<ScheduledSend>> twoTreeReduceSchedule(const TwoTree& tt, size_t M) {
  const int p = tt.n + 1;
  std::vector<std::vector<ScheduledSend>> sends(static_cast<size_t>(p));
  if (tt.n <= 0 || M == 0) return sends;
  // delivered[t][v][k]: children of v in tree t that delivered block k, and the last step
  std::array<std::vector<std::vector<int>>, 2> delivered, lastStep;
  std::array<std::vector<size_t>, 2> next;  // next block member v sends up tree t
  for (int t = 0; t < 2; ++t) {
    delivered[static_cast<size_t>(t)].assign(static_cast<size_t>(p), std::vector<int>(M, 0));
    lastStep[static_cast<size_t>(t)].assign(static_cast<size_t>(p), std::vector<int>(M, -1));
    next[static_cast<size_t>(t)].assign(static_cast<size_t>(p), 0);
  }
  size_t pending = static_cast<size_t>(2 * tt.n) * M;
  for (int step = 0; pending > 0; ++step) {
    const int c = step % 2;
    for (int t = 0; t < 2; ++t) {
      for (int v = 1; v <= tt.n; ++v) {
        if (tt.color[static_cast<size_t>(t)][static_cast<size_t>(v)] != c) continue;
        size_t& k = next[static_cast<size_t>(t)][static_cast<size_t>(v)];
        if (k >= M) continue;
        int children = 0;
        for (int ch : tt.children[static_cast<size_t>(t)][static_cast<size_t>(v)]) children += ch >= 0;
        const auto& got = delivered[static_cast<size_t>(t)][static_cast<size_t>(v)];
        if (got[k] < children || lastStep[static_cast<size_t>(t)][static_cast<size_t>(v)][k] >= step) continue;
        const int u = tt.parent[static_cast<size_t>(t)][static_cast<size_t>(v)];
        sends[static_cast<size_t>(v)].push_back({step, t, k, u});
        delivered[static_cast<size_t>(t)][static_cast<size_t>(u)][k] += 1;
        lastStep[static_cast<size_t>(t)][static_cast<size_t>(u)][k] = step;
        ++k;
        --pending;
      }
    }
  }
  return sends;
}

LinkCost treeEdges(const LinkCost& c, int p, int root, std::initializer_list<const std::vector<int>*> parents,
                   double active) {
  if (!c.pricesCrossings() || p <= 1) return c;
  const int n = c.coreNodeRanks;
  auto node = [p, root, n](int v) { return (v + root) % p / n; };
  double edges = 0, crossing = 0;
  for (const std::vector<int>* parent : parents) {
    for (int v = 0; v < static_cast<int>(parent->size()); ++v) {
      const int up = (*parent)[static_cast<size_t>(v)];
      if (up < 0 || up == v) continue;
      edges += 1;
      crossing += node(v) != node(up);
    }
  }
  return edges > 0 ? c.crossing(std::clamp(active, 0.0, 1.0) * crossing / edges) : c;
}

}  // namespace strata
