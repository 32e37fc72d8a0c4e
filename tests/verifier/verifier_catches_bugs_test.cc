// The verifier must fail on broken plans: a verifier that cannot fail proves nothing.
#include <gtest/gtest.h>

#include "kernels/plan/plan_builder.h"
#include "tests/verifier/symbolic_verifier.h"

namespace strata::verify {
namespace {

CollectiveArgs args(Collective c, size_t count, RedOp op = strataSum, int root = 0) {
  CollectiveArgs a;
  a.coll = c;
  a.count = count;
  a.type = strataFloat32;
  a.op = op;
  a.root = root;
  return a;
}

Case twoRanks(Collective c, size_t count, RedOp op = strataSum) {
  Case k;
  k.args = args(c, count, op);
  k.args.commSize = 2;
  k.p = 2;
  k.plans.resize(2);
  return k;
}

// A correct 2-rank allreduce: exchange, then add.
void goodAllReduce(Plan* plan, int rank, bool dropDependency = false, bool addTwice = false) {
  PlanBuilder b(plan);
  const Slice send{BufferId::kSend, 0, 4}, recv{BufferId::kRecv, 0, 4};
  const Slice tmp = b.scratch(4);
  b.send(1 - rank, send, 0);
  b.recv(1 - rank, tmp, 0);
  if (addTwice) {
    b.reduce(recv, {send, tmp});
    b.reduce(recv, {recv, send});
  } else {
    b.reduce(recv, {send, tmp});
  }
  b.finish();
  if (dropDependency) {
    // Forget that the reduce reads what the receive wrote.
    for (Step& s : plan->steps) {
      if (s.kind == StepKind::kReduce) s.depCount = 0;
    }
  }
}

TEST(VerifierCatches, NothingWrongInACorrectPlan) {
  Case k = twoRanks(Collective::kAllReduce, 4);
  for (int r = 0; r < 2; ++r) goodAllReduce(&k.plans[r], r);
  const Result res = run(k);
  EXPECT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.messages, 2u);
}

TEST(VerifierCatches, AMissingDependency) {
  Case k = twoRanks(Collective::kAllReduce, 4);
  for (int r = 0; r < 2; ++r) goodAllReduce(&k.plans[r], r, /*dropDependency=*/true);
  const Result res = run(k);
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("before it is written"), std::string::npos) << res.error;
}

TEST(VerifierCatches, ACountedTwiceContribution) {
  Case k = twoRanks(Collective::kAllReduce, 4);
  for (int r = 0; r < 2; ++r) goodAllReduce(&k.plans[r], r, false, /*addTwice=*/true);
  const Result res = run(k);
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("combines"), std::string::npos) << res.error;
}

TEST(VerifierCatches, AMissingContribution) {
  Case k = twoRanks(Collective::kAllReduce, 4);
  for (int r = 0; r < 2; ++r) {
    PlanBuilder b(&k.plans[r]);
    b.copy(Slice{BufferId::kRecv, 0, 4}, Slice{BufferId::kSend, 0, 4});
    b.finish();
  }
  const Result res = run(k);
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("expected ranks {0..1}"), std::string::npos) << res.error;
}

TEST(VerifierCatches, ADeadlock) {
  // Both ranks wait for the other's message before sending theirs.
  Case k = twoRanks(Collective::kBroadcast, 2);
  k.args.root = 0;
  for (int r = 0; r < 2; ++r) {
    PlanBuilder b(&k.plans[r]);
    const StepId in = b.recv(1 - r, Slice{BufferId::kScratch, 0, 0}, 0);
    b.send(1 - r, Slice{BufferId::kScratch, 0, 0}, 0, {in});
    b.finish();
  }
  const Result res = run(k);
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("deadlock"), std::string::npos) << res.error;
}

TEST(VerifierCatches, AMessageSizeMismatch) {
  Case k = twoRanks(Collective::kBroadcast, 4);
  {
    PlanBuilder b(&k.plans[0]);
    b.copy(Slice{BufferId::kRecv, 0, 4}, Slice{BufferId::kSend, 0, 4});
    b.send(1, Slice{BufferId::kSend, 0, 4}, 0);
    b.finish();
  }
  {
    PlanBuilder b(&k.plans[1]);
    b.recv(0, Slice{BufferId::kRecv, 0, 3}, 0);
    b.finish();
  }
  const Result res = run(k);
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("4 elements sent"), std::string::npos) << res.error;
}

TEST(VerifierCatches, AWriteToTheSendBuffer) {
  Case k = twoRanks(Collective::kAllReduce, 4);
  for (int r = 0; r < 2; ++r) {
    PlanBuilder b(&k.plans[r]);
    b.copy(Slice{BufferId::kSend, 0, 2}, Slice{BufferId::kSend, 2, 2});
    b.finish();
  }
  const Result res = run(k);
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("send buffer"), std::string::npos) << res.error;
}

TEST(VerifierCatches, ABarrierThatDoesNotSynchronise) {
  // One ring step: rank r hears only from r-1.
  Case k;
  k.p = 4;
  k.args = args(Collective::kBarrier, 0);
  k.args.commSize = 4;
  k.plans.resize(4);
  for (int r = 0; r < 4; ++r) {
    PlanBuilder b(&k.plans[r]);
    b.send((r + 1) % 4, Slice{BufferId::kScratch, 0, 0}, 0);
    b.recv((r + 3) % 4, Slice{BufferId::kScratch, 0, 0}, 0);
    b.finish();
  }
  const Result res = run(k);
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("barrier"), std::string::npos) << res.error;
}

TEST(VerifierCatches, AnAverageDividedTwiceOrNotAtAll) {
  Case k = twoRanks(Collective::kAllReduce, 4, strataAvg);
  for (int r = 0; r < 2; ++r) goodAllReduce(&k.plans[r], r);  // no divide
  Result res = run(k);
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("(divided)"), std::string::npos) << res.error;
  for (int r = 0; r < 2; ++r) {
    k.plans[r] = Plan{};
    PlanBuilder b(&k.plans[r]);
    const Slice send{BufferId::kSend, 0, 4}, recv{BufferId::kRecv, 0, 4};
    const Slice tmp = b.scratch(4);
    b.send(1 - r, send, 0);
    b.recv(1 - r, tmp, 0);
    b.reduce(recv, {send, tmp});
    b.divide(recv);
    b.divide(recv);
    b.finish();
  }
  res = run(k);
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("divides"), std::string::npos) << res.error;
}

TEST(VerifierCatches, AReadOfAnUnwrittenScratchSlice) {
  Case k = twoRanks(Collective::kAllReduce, 4);
  for (int r = 0; r < 2; ++r) {
    PlanBuilder b(&k.plans[r]);
    const Slice tmp = b.scratch(4);
    b.reduce(Slice{BufferId::kRecv, 0, 4}, {Slice{BufferId::kSend, 0, 4}, tmp});
    b.finish();
  }
  const Result res = run(k);
  ASSERT_FALSE(res.ok);
  EXPECT_NE(res.error.find("before it is written"), std::string::npos) << res.error;
}

}  // namespace
}  // namespace strata::verify
