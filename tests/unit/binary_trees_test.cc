// The tree constructions behind the pipelined tree and two-tree algorithms.
#include <gtest/gtest.h>

#include <set>

#include "inter_node/algorithms/binary_trees.h"

namespace strata {
namespace {

TEST(InOrderTree, SubtreesAreConsecutiveRanges) {
  for (int n = 1; n <= 70; ++n) {
    const BinaryTree t = inOrderTree(n);
    ASSERT_GE(t.root, 0);
    for (int v = 0; v < n; ++v) {
      int first = 0, last = 0;
      subtreeRange(t, v, &first, &last);
      // walk the subtree and collect its nodes
      std::set<int> seen;
      std::vector<int> stack = {v};
      while (!stack.empty()) {
        const int u = stack.back();
        stack.pop_back();
        seen.insert(u);
        for (int c : t.children[static_cast<size_t>(u)]) {
          if (c >= 0) {
            ASSERT_EQ(t.parent[static_cast<size_t>(c)], u);
            stack.push_back(c);
          }
        }
      }
      ASSERT_EQ(static_cast<int>(seen.size()), last - first + 1) << "n=" << n << " v=" << v;
      ASSERT_EQ(*seen.begin(), first);
      ASSERT_EQ(*seen.rbegin(), last);
      if (t.children[static_cast<size_t>(v)][0] >= 0) ASSERT_LT(t.children[static_cast<size_t>(v)][0], v);
      if (t.children[static_cast<size_t>(v)][1] >= 0) ASSERT_GT(t.children[static_cast<size_t>(v)][1], v);
    }
  }
}

TEST(TwoTree, EveryRankIsInnerInAtMostOneTreeAndColoursFollowTheLemma) {
  for (int p = 2; p <= 200; ++p) {
    const TwoTree tt = makeTwoTree(p);
    std::vector<std::vector<int>> childColours(static_cast<size_t>(p));
    int leafInBoth = 0;
    for (int v = 1; v < p; ++v) {
      int innerIn = 0;
      for (int t = 0; t < 2; ++t) {
        const auto& ch = tt.children[static_cast<size_t>(t)][static_cast<size_t>(v)];
        innerIn += (ch[0] >= 0 || ch[1] >= 0);
        ASSERT_GE(tt.color[static_cast<size_t>(t)][static_cast<size_t>(v)], 0);
        childColours[static_cast<size_t>(tt.parent[static_cast<size_t>(t)][static_cast<size_t>(v)])].push_back(
            tt.color[static_cast<size_t>(t)][static_cast<size_t>(v)]);
      }
      ASSERT_LE(innerIn, 1) << "p=" << p << " member " << v;
      leafInBoth += innerIn == 0;
      // the two edges to the parents differ
      ASSERT_NE(tt.color[0][static_cast<size_t>(v)], tt.color[1][static_cast<size_t>(v)]) << "p=" << p << " v=" << v;
    }
    EXPECT_LE(leafInBoth, (p - 1) % 2 == 1 ? 1 : 0) << "p=" << p;
    for (int u = 0; u < p; ++u) {
      const auto& c = childColours[static_cast<size_t>(u)];
      ASSERT_LE(c.size(), 2u) << "p=" << p << " u=" << u;
      if (c.size() == 2) ASSERT_NE(c[0], c[1]) << "p=" << p << " u=" << u;
    }
  }
}

TEST(TwoTree, SchedulesDeliverEveryBlockOneSendPerStep) {
  for (int p : {2, 3, 4, 5, 8, 9, 16, 33}) {
    const TwoTree tt = makeTwoTree(p);
    for (size_t M : {size_t{1}, size_t{4}, size_t{9}}) {
      for (bool reduce : {false, true}) {
        const auto s = reduce ? twoTreeReduceSchedule(tt, M) : twoTreeBroadcastSchedule(tt, M);
        size_t total = 0;
        for (int v = 0; v < p; ++v) {
          std::set<int> steps;
          for (const ScheduledSend& x : s[static_cast<size_t>(v)]) {
            ASSERT_TRUE(steps.insert(x.step).second) << "two sends in one step, p=" << p << " v=" << v;
          }
          total += s[static_cast<size_t>(v)].size();
        }
        EXPECT_EQ(total, static_cast<size_t>(2 * (p - 1)) * M) << "p=" << p << " M=" << M;
      }
    }
  }
}

}  // namespace
}  // namespace strata
