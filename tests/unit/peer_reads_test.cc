// What a plan writes where a peer read it (kernels/plan/peer_reads.h), counted on the flat
// algorithms' own plans, and its price on top of the formulas (flatAlgorithmPrice).
#include <gtest/gtest.h>

#include <string>

#include "inter_node/algorithms/algorithm.h"
#include "kernels/plan/peer_reads.h"
#include "src/api/api_common.h"

namespace strata {
namespace {

CollectiveArgs call(Collective coll, size_t count, int p, bool inPlace) {
  CollectiveArgs a = api::makeArgs(coll, count, strataFloat32, strataSum, 0);
  a.commSize = p;
  a.inPlace = inPlace;
  return a;
}

RewrittenBytes rewrittenByKind(Collective coll, const char* algo, size_t count, int p, bool inPlace) {
  const FlatAlgorithm* f = findFlatAlgorithm(coll, algo);
  EXPECT_NE(f, nullptr) << algo;
  return f ? flatRewrittenBytes(*f, call(coll, count, p, inPlace), p, LinkCost{}) : RewrittenBytes{-1, 0};
}
double rewritten(Collective coll, const char* algo, size_t count, int p, bool inPlace) {
  return rewrittenByKind(coll, algo, count, p, inPlace).total();
}

TEST(PeerReads, CountsWritesWherePeersReadInTheSteadyState) {
  Plan plan;
  PlanBuilder b(&plan);
  const Slice all{BufferId::kRecv, 0, 100}, lo{BufferId::kRecv, 0, 40}, mid{BufferId::kRecv, 30, 40};
  b.recv(1, all, 0);                                     // pays what the previous call's send left marked
  b.send(1, lo, 1);                                      // marks [0, 40)
  b.reduce(mid, {mid, Slice{BufferId::kSend, 0, 40}});   // pays [30, 40); [0, 30) stays marked
  b.finish();
  const std::vector<RewrittenBytes> per = rewrittenBytesPerStep(plan, 4);
  ASSERT_EQ(per.size(), 3u);
  EXPECT_DOUBLE_EQ(per[0].copied, 30 * 4) << "the steady state: the last call's send marked [0, 30)";
  EXPECT_DOUBLE_EQ(per[0].reduced, 0) << "a receipt writes as a copy does";
  EXPECT_DOUBLE_EQ(per[1].total(), 0);
  EXPECT_DOUBLE_EQ(per[2].reduced, 10 * 4);
  EXPECT_DOUBLE_EQ(per[2].copied, 0);
  EXPECT_DOUBLE_EQ(rewrittenBytes(plan, 4).reduced, 10 * 4);
  EXPECT_DOUBLE_EQ(rewrittenBytes(plan, 4).copied, 30 * 4);
}

// A write inside a marked range splits it; marks that touch or overlap merge.
TEST(PeerReads, MarksSplitAndMerge) {
  Plan plan;
  PlanBuilder b(&plan);
  b.send(1, Slice{BufferId::kRecv, 0, 100}, 0);
  b.copy(Slice{BufferId::kRecv, 30, 10}, Slice{BufferId::kSend, 0, 10});  // [0, 30) and [40, 100) stay
  b.recv(1, Slice{BufferId::kRecv, 0, 100}, 1);                             // 90 of them
  b.send(1, Slice{BufferId::kScratch, 0, 10}, 2);
  b.send(1, Slice{BufferId::kScratch, 20, 10}, 3);
  b.send(1, Slice{BufferId::kScratch, 5, 20}, 4);                           // [0, 30) as one
  b.copy(Slice{BufferId::kScratch, 0, 30}, Slice{BufferId::kSend, 0, 30});
  b.finish();
  const std::vector<RewrittenBytes> per = rewrittenBytesPerStep(plan, 1);
  ASSERT_EQ(per.size(), 7u);
  EXPECT_DOUBLE_EQ(per[1].copied, 10);
  EXPECT_DOUBLE_EQ(per[2].copied, 90);
  EXPECT_DOUBLE_EQ(per[6].copied, 30);
  EXPECT_DOUBLE_EQ(rewrittenBytes(plan, 1).copied, 130);
  EXPECT_DOUBLE_EQ(rewrittenBytes(plan, 1).reduced, 0);
}

// Two ranks, 4096 floats (16 KiB): the ring sends the block it reduced, writes it again next call
// (m/2); recursive doubling sends only the send buffer out of place (0) and reduces in place into
// what its peer read (m); the ring allgather sends its own block from the send buffer (0).
TEST(PeerReads, FlatAlgorithmsOnTwoRanks) {
  const double m = 4096 * 4;
  EXPECT_DOUBLE_EQ(rewritten(Collective::kAllReduce, "ring", 4096, 2, false), m / 2);
  EXPECT_DOUBLE_EQ(rewritten(Collective::kAllReduce, "rabenseifner", 4096, 2, false), m / 2);
  EXPECT_DOUBLE_EQ(rewritten(Collective::kAllReduce, "recursive_doubling", 4096, 2, false), 0);
  EXPECT_DOUBLE_EQ(rewritten(Collective::kAllReduce, "recursive_doubling", 4096, 2, true), m);
  EXPECT_DOUBLE_EQ(rewritten(Collective::kAllGather, "ring", 2048, 2, false), 0);
  EXPECT_DOUBLE_EQ(rewritten(Collective::kReduceScatter, "ring", 2048, 2, false), 0);
  // On more ranks a ring forwards what it received, and writes it again next call.
  EXPECT_GT(rewritten(Collective::kAllGather, "ring", 1024, 4, false), 0);
}

TEST(PeerReads, PricedOnTopOfTheFormulaOnlyWhereTheLevelHasARewriteCost) {
  const FlatAlgorithm* ring = findFlatAlgorithm(Collective::kAllReduce, "ring");
  ASSERT_NE(ring, nullptr);
  const CollectiveArgs a = call(Collective::kAllReduce, 4096, 2, false);
  LinkCost c{1e-6, 1e-10, 2e-11};
  const double formula = ring->cost(a, 2, c);
  EXPECT_DOUBLE_EQ(flatAlgorithmPrice(*ring, a, 2, c), formula);
  c.rewrite = 3e-10;
  EXPECT_NEAR(flatAlgorithmPrice(*ring, a, 2, c), formula + 3e-10 * 4096 * 4 / 2, formula * 1e-12);
}

// The ring allreduce on 2 ranks rewrites the block its peer read by reducing into it; the Bruck
// allgather by copying its own block into the block its peer read (a copy's stores overwrite whole
// lines and pay LinkCost::copyRewrite); a node op's output of one piece is a copy, of several a
// reduction. Without a copy's cost of its own, a copy pays a reduction's.
TEST(PeerReads, ReductionsAndCopiesPayTheirOwnRewriteCosts) {
  const RewrittenBytes ring = rewrittenByKind(Collective::kAllReduce, "ring", 4096, 2, false);
  EXPECT_DOUBLE_EQ(ring.reduced, 4096 * 4 / 2);
  EXPECT_DOUBLE_EQ(ring.copied, 0);
  const RewrittenBytes bruck = rewrittenByKind(Collective::kAllGather, "bruck", 2048, 2, false);
  EXPECT_DOUBLE_EQ(bruck.reduced, 0);
  EXPECT_DOUBLE_EQ(bruck.copied, 2048 * 4);

  const FlatAlgorithm* f = findFlatAlgorithm(Collective::kAllGather, "bruck");
  ASSERT_NE(f, nullptr);
  const CollectiveArgs a = call(Collective::kAllGather, 2048, 2, false);
  LinkCost c{1e-6, 1e-10, 2e-11};
  const double formula = f->cost(a, 2, c);
  c.rewrite = 3e-10;
  EXPECT_NEAR(flatAlgorithmPrice(*f, a, 2, c), formula + 3e-10 * 2048 * 4, formula * 1e-12) << "a reduction's cost";
  c.copyRewrite = 1e-10;
  EXPECT_NEAR(flatAlgorithmPrice(*f, a, 2, c), formula + 1e-10 * 2048 * 4, formula * 1e-12) << "a copy's own";
  c.rewrite = 0;
  EXPECT_NEAR(flatAlgorithmPrice(*f, a, 2, c), formula + 1e-10 * 2048 * 4, formula * 1e-12) << "a copy's alone";

  Plan plan;
  PlanBuilder b(&plan);
  b.send(1, Slice{BufferId::kRecv, 0, 100}, 0);
  NodeOpDesc op;
  op.members = {0, 1};
  op.reads.push_back(NodeRead{Slice{BufferId::kRecv, 0, 40}, {NodePiece{}}});
  op.reads.push_back(NodeRead{Slice{BufferId::kRecv, 40, 60}, {NodePiece{}, NodePiece{}}});
  b.nodeOp(std::move(op));
  b.finish();
  EXPECT_DOUBLE_EQ(rewrittenBytes(plan, 1).copied, 40);
  EXPECT_DOUBLE_EQ(rewrittenBytes(plan, 1).reduced, 60);
}

}  // namespace
}  // namespace strata
