// The plan builder's dependency inference and aliasing.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/plan/group.h"
#include "kernels/plan/plan_builder.h"

namespace strata {
namespace {

std::vector<StepId> depsOf(const Plan& p, StepId s) {
  const Step& st = p.steps[s];
  return std::vector<StepId>(p.deps.begin() + st.depBegin, p.deps.begin() + st.depBegin + st.depCount);
}

TEST(PlanBuilder, InfersReadAfterWriteWriteAfterReadAndWriteAfterWrite) {
  Plan plan;
  PlanBuilder b(&plan);
  const Slice a{BufferId::kRecv, 0, 10}, lo{BufferId::kRecv, 0, 5}, hi{BufferId::kRecv, 5, 5};
  const StepId r0 = b.recv(1, a, 0);          // writes a
  const StepId s1 = b.send(2, lo, 1);         // reads lo: after r0
  const StepId s2 = b.send(2, hi, 2);         // reads hi: after r0, independent of s1
  const StepId r3 = b.recv(1, lo, 3);         // writes lo: after s1 (WAR) and r0 (WAW, dominated)
  const StepId c4 = b.copy(Slice{BufferId::kScratch, 0, 5}, hi);  // reads hi: after r0 only
  b.finish();
  EXPECT_TRUE(depsOf(plan, r0).empty());
  EXPECT_EQ(depsOf(plan, s1), std::vector<StepId>{r0});
  EXPECT_EQ(depsOf(plan, s2), std::vector<StepId>{r0});
  const auto d3 = depsOf(plan, r3);
  EXPECT_TRUE(std::find(d3.begin(), d3.end(), s1) != d3.end());
  EXPECT_TRUE(std::find(d3.begin(), d3.end(), s2) == d3.end());
  EXPECT_EQ(depsOf(plan, c4), std::vector<StepId>{r0});
  // successors are the inverse relation
  std::vector<StepId> succR0(plan.succ.begin() + plan.succBegin[r0], plan.succ.begin() + plan.succBegin[r0 + 1]);
  EXPECT_TRUE(std::find(succR0.begin(), succR0.end(), s1) != succR0.end());
  EXPECT_TRUE(std::find(succR0.begin(), succR0.end(), c4) != succR0.end());
}

TEST(PlanBuilder, ExplicitDependenciesForDatalessMessages) {
  Plan plan;
  PlanBuilder b(&plan);
  const Slice none{BufferId::kScratch, 0, 0};
  const StepId r = b.recv(1, none, 0);
  const StepId s = b.send(2, none, 1, {r});
  b.finish();
  EXPECT_EQ(depsOf(plan, s), std::vector<StepId>{r});
}

TEST(PlanBuilder, AliasingMakesInPlaceSlicesOneBuffer) {
  Plan plan;
  PlanBuilder b(&plan);
  b.alias(BufferId::kSend, BufferId::kRecv, 8);  // send = recv + 8
  const StepId w = b.recv(1, Slice{BufferId::kRecv, 8, 4}, 0);
  const StepId r = b.send(2, Slice{BufferId::kSend, 0, 4}, 1);  // the same elements
  EXPECT_EQ(b.copy(Slice{BufferId::kRecv, 8, 4}, Slice{BufferId::kSend, 0, 4}), kNoStep);  // identical: no step
  b.finish();
  EXPECT_EQ(plan.steps[r].src.buffer, BufferId::kRecv);
  EXPECT_EQ(plan.steps[r].src.offset, 8u);
  EXPECT_EQ(depsOf(plan, r), std::vector<StepId>{w});
}

TEST(PlanBuilder, ScratchIsDisjointAndCounted) {
  Plan plan;
  PlanBuilder b(&plan);
  const Slice x = b.scratch(10), y = b.scratch(3);
  EXPECT_FALSE(x.overlaps(y));
  EXPECT_EQ(plan.scratchCount, 13u);
  b.finish();
}

TEST(PlanBuilder, PhasesSeparateTags) {
  Plan plan;
  PlanBuilder b(&plan);
  b.setPhase(0);
  const StepId a = b.send(1, Slice{BufferId::kRecv, 0, 1}, 5);
  b.setPhase(2);
  const StepId c = b.send(1, Slice{BufferId::kRecv, 1, 1}, 5);
  b.finish();
  EXPECT_NE(plan.steps[a].tag, plan.steps[c].tag);
  EXPECT_EQ(plan.phases, 3);
}

TEST(BlockLayout, EvenCoversEverythingInGranules) {
  for (size_t total : {0u, 1u, 7u, 64u, 1000u, 1031u}) {
    for (int blocks : {1, 2, 3, 7, 8}) {
      for (size_t granule : {1u, 16u}) {
        const BlockLayout l = BlockLayout::even(total, blocks, granule);
        size_t pos = 0;
        for (int i = 0; i < blocks; ++i) {
          EXPECT_EQ(l.offset[static_cast<size_t>(i)], pos);
          pos += l.count[static_cast<size_t>(i)];
          if (pos < total) EXPECT_EQ(l.count[static_cast<size_t>(i)] % granule, 0u);
        }
        EXPECT_EQ(pos, total) << total << " " << blocks << " " << granule;
      }
    }
  }
}

TEST(Group, RotationMakesRootMemberZero) {
  Group g = Group::world(5, 3);
  Group r = g.rotated(2);
  EXPECT_EQ(r.rank(0), 2);
  EXPECT_EQ(r.me, 1);
  EXPECT_EQ(r.rank(r.me), 3);
  EXPECT_EQ(g.relative(1), 4);
  EXPECT_EQ(g.relative(-4), 4);
}

}  // namespace
}  // namespace strata
