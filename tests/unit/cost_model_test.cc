// The cost model's file (STRATA_TOPO_FILE), its curves over the working set and its host shares.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <tuple>
#include <utility>

#include "kernels/plan/collective.h"
#include "kernels/plan/node_costs.h"
#include "src/tuning/cost_model.h"

namespace strata {
namespace {

std::string tempPath(const char* name) { return std::string(::testing::TempDir()) + name; }

TEST(CostModel, FileRoundTrips) {
  CostParams p = defaultCostParams();
  p.flat = LinkCost{1e-6, 2e-10, 3e-11};
  p.flat.curve = BandwidthCurve::of({{1e6, 2e-10, 3e-11}, {64e6, 4e-10, 5e-11}});
  p.flat.alone = HostShare{0.25, 0.5, BandwidthCurve::of({{1e6, 0.2, 0.3}})};
  p.node = LinkCost{6e-7, 7e-11, 8e-12};
  p.node.roundBytes = 8 << 20;
  p.lane = LinkCost{1.5e-5, 1e-9, 2e-9};
  p.lane.alone = HostShare{0.5, 0.9, BandwidthCurve::of({{1e6, 0.6, 0.6}}), false};
  const std::string path = tempPath("strata_costs_roundtrip.txt");
  ASSERT_TRUE(saveCostParams(path, p).ok());
  CostParams q;
  const Status s = loadCostParams(path, &q);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_NEAR(q.flat.beta, 2e-10, 1e-15);
  ASSERT_EQ(q.flat.curve.size, 2u);
  EXPECT_NEAR(q.flat.curve.points[1].beta, 4e-10, 1e-15);
  EXPECT_DOUBLE_EQ(q.flat.curve.points[1].workingSet, 64e6);
  EXPECT_DOUBLE_EQ(q.flat.alone.share, 0.25);
  EXPECT_DOUBLE_EQ(q.flat.alone.alpha, 0.5);
  ASSERT_EQ(q.flat.alone.ratios.size, 1u);
  EXPECT_DOUBLE_EQ(q.flat.alone.ratios.points[0].gamma, 0.3);
  EXPECT_TRUE(q.flat.alone.coresShared);
  EXPECT_FALSE(q.lane.alone.coresShared) << "measured where each process had a core";
  EXPECT_NEAR(q.node.alpha, 6e-7, 1e-12);
  EXPECT_DOUBLE_EQ(q.node.roundBytes, 8 << 20);
  EXPECT_TRUE(q.node.curve.empty()) << "a level the file names has no default curve";
  EXPECT_EQ(q.node.alone.share, 1);
  EXPECT_NEAR(q.lane.gamma, 2e-9, 1e-14);
  EXPECT_EQ(q.source, path);
  std::remove(path.c_str());
}

TEST(CostModel, BadFilesSayWhere) {
  const std::string path = tempPath("strata_costs_bad.txt");
  {
    std::ofstream f(path);
    f << "# comment\nflat.alpha 1e-6\nnode.speed 3\n";
  }
  CostParams q;
  Status s = loadCostParams(path, &q);
  EXPECT_EQ(s.code(), strataInvalidArgument);
  EXPECT_NE(s.message().find(":3: unknown key 'node.speed'"), std::string::npos) << s.message();
  {
    std::ofstream f(path);
    f << "flat.beta -1\n";
  }
  s = loadCostParams(path, &q);
  EXPECT_EQ(s.code(), strataInvalidArgument);
  EXPECT_NE(s.message().find(":1:"), std::string::npos) << s.message();
  std::remove(path.c_str());
  s = loadCostParams(path, &q);
  EXPECT_EQ(s.code(), strataInvalidArgument);
  EXPECT_NE(s.message().find("cannot read"), std::string::npos);
}

TEST(CostModel, ALevelWithoutCurvePointsIsThePlainModel) {
  const std::string path = tempPath("strata_costs_plain.txt");
  {
    std::ofstream f(path);
    f << "node.beta 1e-10\n";
  }
  CostParams q;
  ASSERT_TRUE(loadCostParams(path, &q).ok());
  EXPECT_TRUE(q.node.curve.empty());
  EXPECT_FALSE(q.flat.curve.empty());  // untouched levels keep the defaults
  const LevelCosts big = q.forWorkingSet(1e12);
  EXPECT_DOUBLE_EQ(big.node.beta, 1e-10);
  std::remove(path.c_str());
}

// Files of the old cache model, curve points without their other half or at no working set, a
// curve with alpha at some of its points only, and shares out of range say what is wrong.
TEST(CostModel, RetiredKeysAndHalfPointsAreErrors) {
  const std::string path = tempPath("strata_costs_retired.txt");
  const std::pair<const char*, const char*> cases[] = {
      {"cache_bytes 33554432\n", "no longer read"},
      {"flat.beta_mem 1e-10\n", "no longer read"},
      {"flat.beta@1048576 1e-10\n", "come in pairs"},
      {"flat.beta@lots 1e-10\n", "positive number of bytes"},
      {"flat.beta@1000 1e-10\nflat.gamma@1000 1e-11\nflat.alpha@1000 4e-6\nflat.beta@4000 2e-10\nflat.gamma@4000 1e-11\n",
       "at every point of the curve or at none"},
      {"lane.beta@1000 1e-10\nlane.gamma@1000 1e-11\nlane.beta@4000 2e-10\nlane.gamma@4000 1e-11\nlane.copy@4000 5e-11\n",
       "at every point of the curve or at none"},
      {"node.alone_copy@1000 0.5\n", "unknown key"},
      {"lane.alone_share 1.5\n", "out of its range"},
      {"node.alone_cores_shared 2\n", "out of its range"},
  };
  for (const auto& [text, why] : cases) {
    {
      std::ofstream f(path);
      f << text;
    }
    CostParams q;
    const Status s = loadCostParams(path, &q);
    EXPECT_EQ(s.code(), strataInvalidArgument) << text;
    EXPECT_NE(s.message().find(why), std::string::npos) << text << ": " << s.message();
  }
  std::remove(path.c_str());
}

// The MPI library's own collectives as calibration measured them: interpolated between sizes, held
// below the smallest, extended beyond the largest, and used only on the rank count measured.
TEST(CostModel, NativeTimesInterpolateOnTheirRankCountOnly) {
  NativeTimes n;
  n.ranks = 4;
  n.points[Collective::kAllReduce] = {{8, 1e-6}, {1024, 2e-6}, {8192, 10e-6}};
  EXPECT_DOUBLE_EQ(n.predict(Collective::kAllReduce, 1, 4), 1e-6);       // below: the latency floor
  EXPECT_DOUBLE_EQ(n.predict(Collective::kAllReduce, 1024, 4), 2e-6);    // a measured point
  EXPECT_NEAR(n.predict(Collective::kAllReduce, 4608, 4), 6e-6, 1e-15);  // halfway between two
  EXPECT_NEAR(n.predict(Collective::kAllReduce, 15360, 4), 18e-6, 1e-15);  // the last stretch, extended
  EXPECT_LT(n.predict(Collective::kAllReduce, 1024, 8), 0) << "measured on 4 ranks, not 8";
  EXPECT_LT(n.predict(Collective::kBroadcast, 1024, 4), 0) << "never measured";
}

TEST(CostModel, NativeTimesRoundTripThroughTheFile) {
  CostParams p = defaultCostParams();
  p.native.ranks = 8;
  p.native.points[Collective::kAllGather] = {{4, 3e-6}, {4096, 7.5e-6}};
  p.native.points[Collective::kBarrier] = {{0, 2e-6}};
  const std::string path = tempPath("strata_costs_native.txt");
  ASSERT_TRUE(saveCostParams(path, p).ok());
  CostParams q;
  const Status s = loadCostParams(path, &q);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(q.native.ranks, 8);
  EXPECT_NEAR(q.native.predict(Collective::kAllGather, 4096, 8), 7.5e-6, 1e-12);
  EXPECT_NEAR(q.native.predict(Collective::kBarrier, 0, 8), 2e-6, 1e-12);
  {
    std::ofstream f(path);
    f << "native.ranks 2\nnative.allreduce.64 1e-6\nnative.notacollective.64 1e-6\n";
  }
  const Status bad = loadCostParams(path, &q);
  EXPECT_EQ(bad.code(), strataInvalidArgument);
  EXPECT_NE(bad.message().find(":3: unknown key 'native.notacollective.64'"), std::string::npos) << bad.message();
  std::remove(path.c_str());
}

// The curve: its points where it has them, linear in log(working set) between, held beyond.
TEST(CostModel, TheCurveInterpolatesInTheLogOfTheWorkingSet) {
  LevelCosts c;
  c.flat = LinkCost{1e-6, 9e-9, 9e-9};
  c.flat.curve = BandwidthCurve::of({{4000, 2e-10, 1e-11}, {1000, 1e-10, 1e-11}});  // added out of order
  EXPECT_DOUBLE_EQ(c.forWorkingSet(500).flat.beta, 1e-10);  // below: the first point
  EXPECT_DOUBLE_EQ(c.forWorkingSet(1000).flat.beta, 1e-10);
  EXPECT_NEAR(c.forWorkingSet(2000).flat.beta, 1.5e-10, 1e-22);  // halfway in log
  EXPECT_DOUBLE_EQ(c.forWorkingSet(1e9).flat.beta, 2e-10);  // above: the last point
  EXPECT_DOUBLE_EQ(c.forWorkingSet(2000).flat.gamma, 1e-11);
  EXPECT_DOUBLE_EQ(c.forWorkingSet(2000).flat.alpha, 1e-6);
  EXPECT_DOUBLE_EQ(c.forWorkingSet(2000).flat.copy, c.forWorkingSet(2000).node.beta) << "local copies at the node's beta";
  BandwidthCurve full;
  for (size_t k = 0; k < BandwidthCurve::kMaxPoints; ++k) EXPECT_TRUE(full.add({1.0 + k, 1, 1}));
  EXPECT_FALSE(full.add({100, 1, 1})) << "a full curve refuses a point";
  EXPECT_FALSE(BandwidthCurve{}.add({0, 1, 1})) << "so does a working set of 0 bytes";
}

// The working set the curves are read at is what the ranks' buffers hold: a rooted call's root has
// the buffer the others lack, and a rank counts only its own (the mean over the communicator).
TEST(CostModel, ARootedCallsWorkingSetIsItsRanksBuffersOnAverage) {
  CollectiveArgs a;
  a.type = strataFloat32;
  a.count = 1000;
  a.commSize = 4;
  a.coll = Collective::kReduce;  // the root: send and receive; the others: send
  a.root = 2;
  EXPECT_DOUBLE_EQ(rankWorkingSetBytes(a), (2 + 3 * 1) * 1000 * 4 / 4.0) << "reduce of 1000 floats, root 2 of 4";
  a.coll = Collective::kGather;  // the root: its block and every block; the others: their block
  EXPECT_DOUBLE_EQ(rankWorkingSetBytes(a), (1 + 4 + 3 * 1) * 1000 * 4 / 4.0) << "gather of 1000 floats, root 2 of 4";
  a.coll = Collective::kAllReduce;  // every rank alike
  EXPECT_DOUBLE_EQ(rankWorkingSetBytes(a), 2 * 1000 * 4) << "allreduce of 1000 floats on 4";
  a.coll = Collective::kReduce;
  a.commSize = 1;  // one rank: its own buffers
  EXPECT_DOUBLE_EQ(rankWorkingSetBytes(a), 2 * 1000 * 4) << "reduce of 1000 floats on 1";
}

// In place a rank's buffers are one: the larger, which holds the smaller (a rooted call's root in
// place; the others have no buffer to share).
TEST(CostModel, InPlaceARanksBuffersAreTheLargerOne) {
  CollectiveArgs a;
  a.type = strataFloat32;
  a.count = 1000;
  a.commSize = 4;
  a.inPlace = true;
  a.coll = Collective::kAllReduce;
  EXPECT_DOUBLE_EQ(rankWorkingSetBytes(a), 1000 * 4) << "allreduce of 1000 floats on 4 in place";
  a.coll = Collective::kAllGather;  // the send buffer is its block of the receive buffer
  EXPECT_DOUBLE_EQ(rankWorkingSetBytes(a), 4 * 1000 * 4) << "allgather in place";
  a.coll = Collective::kReduceScatter;  // the receive buffer is its block of the send buffer
  EXPECT_DOUBLE_EQ(rankWorkingSetBytes(a), 4 * 1000 * 4) << "reduce-scatter in place";
  a.root = 2;
  a.coll = Collective::kReduce;  // the root: one buffer; the others: send
  EXPECT_DOUBLE_EQ(rankWorkingSetBytes(a), (1 + 3 * 1) * 1000 * 4 / 4.0) << "reduce in place, root 2 of 4";
  a.coll = Collective::kGather;  // the root: every block; the others: their block
  EXPECT_DOUBLE_EQ(rankWorkingSetBytes(a), (4 + 3 * 1) * 1000 * 4 / 4.0) << "gather in place, root 2 of 4";
  a.coll = Collective::kBroadcast;  // the root: one buffer; the others: receive
  EXPECT_DOUBLE_EQ(rankWorkingSetBytes(a), (1 + 3 * 1) * 1000 * 4 / 4.0) << "broadcast in place, root 2 of 4";
  a.inPlace = false;
  EXPECT_DOUBLE_EQ(rankWorkingSetBytes(a), (2 + 3 * 1) * 1000 * 4 / 4.0) << "broadcast out of place";
}

// A call in place moves the out-of-place call's bytes through less memory: per level, the cheaper
// beta, gamma and copy of the two working sets, and the out-of-place call's alpha. On a curve that
// rises past a knee the smaller set's; on one that falls (small calls' overheads) the larger's.
TEST(CostModel, ACallInPlaceReadsTheCheaperOfItsTwoWorkingSets) {
  LevelCosts costs;
  costs.flat.curve = BandwidthCurve::of({{1e6, 4e-11, 1e-11, 2e-6, 1e-11}, {4e6, 2e-11, 3e-11, 1e-6, 3e-11},
                                         {16e6, 6e-11, 2e-11, 3e-6, 2e-11}});
  costs.node.curve = BandwidthCurve::of({{1e6, 5e-11, 5e-11}, {16e6, 1e-11, 1e-11}});  // falls all along
  costs.lane = costs.flat;
  const LevelCosts apart = costs.forWorkingSet(16e6), small = costs.forWorkingSet(4e6);
  const LevelCosts inPlace = costs.forWorkingSet(16e6, 4e6);
  for (const auto& [level, got, big, sm] : {std::tuple{"flat", inPlace.flat, apart.flat, small.flat},
                                            std::tuple{"lane", inPlace.lane, apart.lane, small.lane}}) {
    EXPECT_DOUBLE_EQ(got.beta, 2e-11) << level << ": the smaller set's, below the knee";
    EXPECT_DOUBLE_EQ(got.gamma, 2e-11) << level << ": the larger set's, cheaper there";
    EXPECT_DOUBLE_EQ(got.copy, 2e-11) << level;
    EXPECT_DOUBLE_EQ(got.alpha, big.alpha) << level << ": the out-of-place call's messages";
    EXPECT_DOUBLE_EQ(got.workingSet, 16e6) << level << ": its host shares read as out of place";
    EXPECT_LT(sm.alpha, big.alpha) << level << ": the test tells the two alphas apart";
  }
  EXPECT_DOUBLE_EQ(inPlace.node.beta, apart.node.beta) << "the node's curve falls: the larger set's";
  EXPECT_DOUBLE_EQ(inPlace.node.gamma, apart.node.gamma);
  EXPECT_DOUBLE_EQ(inPlace.node.copy, 2e-11) << "the flat level's copy serves the node's";
  for (double same : {0.0, 16e6, 32e6}) {  // none, or not smaller: the out-of-place call's costs
    const LevelCosts c = costs.forWorkingSet(16e6, same);
    EXPECT_DOUBLE_EQ(c.flat.beta, apart.flat.beta) << same;
    EXPECT_DOUBLE_EQ(c.node.beta, apart.node.beta) << same;
  }
}

// A curve that carries alpha reads it like beta (held below and above, linear in the log between);
// one that does not leaves the level's alpha alone; reading twice changes nothing.
TEST(CostModel, ACurveMayCarryAlpha) {
  LinkCost c{4e-6, 9e-9, 9e-9};
  c.curve = BandwidthCurve::of({{1000, 1e-10, 1e-11, 4e-6}, {4000, 2e-10, 1e-11, 8e-6}});
  EXPECT_TRUE(c.curve.carriesAlpha());
  EXPECT_DOUBLE_EQ(c.forWorkingSet(10).alpha, 4e-6);
  EXPECT_NEAR(c.forWorkingSet(2000).alpha, 6e-6, 1e-18);
  EXPECT_DOUBLE_EQ(c.forWorkingSet(1e9).alpha, 8e-6);
  EXPECT_NEAR(c.forWorkingSet(1e9).forWorkingSet(2000).alpha, 6e-6, 1e-18) << "a read is not read again";
  c.curve = BandwidthCurve::of({{1000, 1e-10, 1e-11}, {4000, 2e-10, 1e-11}});
  EXPECT_FALSE(c.curve.carriesAlpha());
  EXPECT_DOUBLE_EQ(c.forWorkingSet(2000).alpha, 4e-6);
  // Through the file (alpha@W at one point only is refused: RetiredKeysAndHalfPointsAreErrors).
  CostParams p = defaultCostParams();
  p.flat = LinkCost{4e-6, 1e-10, 1e-11};
  p.flat.curve = BandwidthCurve::of({{1000, 1e-10, 1e-11, 4e-6}, {4000, 2e-10, 1e-11, 8e-6}});
  const std::string path = tempPath("strata_costs_alpha.txt");
  ASSERT_TRUE(saveCostParams(path, p).ok());
  CostParams q;
  Status s = loadCostParams(path, &q);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(q.flat.curve.carriesAlpha());
  EXPECT_NEAR(q.flat.curve.points[1].alpha, 8e-6, 1e-18);
  EXPECT_FALSE(q.node.curve.carriesAlpha());
  std::remove(path.c_str());
}

// The rewrite costs (a reduction's, a copy's) are read off the curve with beta and gamma, travel
// through the file at every point of the curve or at none, and stand alone on a level without a
// curve; without a copy's own, a copy pays a reduction's.
TEST(CostModel, TheRewriteCostIsACurveThroughTheFile) {
  CostParams p = defaultCostParams();
  p.flat = LinkCost{1e-6, 1e-10, 1e-11};
  BandwidthCurve::Point a{1000, 1e-10, 1e-11}, b{4000, 2e-10, 1e-11};
  a.rewrite = 3e-10;
  b.rewrite = 1e-10;
  a.copyRewrite = 6e-11;
  b.copyRewrite = 2e-11;
  p.flat.curve = BandwidthCurve::of({a, b});
  p.lane = LinkCost{2e-6, 1e-10, 1e-11};
  p.lane.rewrite = 5e-11;
  p.lane.copyRewrite = 1e-11;
  EXPECT_NEAR(p.flat.forWorkingSet(2000).copyRewrite, 4e-11, 1e-18);
  EXPECT_NEAR(p.flat.forWorkingSet(2000).rewrite, 2e-10, 1e-18);
  EXPECT_EQ(p.node.forWorkingSet(2000).rewrite, 0);
  const std::string path = tempPath("strata_costs_rewrite.txt");
  ASSERT_TRUE(saveCostParams(path, p).ok());
  CostParams q;
  Status s = loadCostParams(path, &q);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(q.flat.curve.size, 2u);
  EXPECT_NEAR(q.flat.curve.points[0].rewrite, 3e-10, 1e-18);
  EXPECT_NEAR(q.flat.forWorkingSet(1e9).rewrite, 1e-10, 1e-18);
  EXPECT_NEAR(q.lane.forWorkingSet(1e9).rewrite, 5e-11, 1e-18);
  EXPECT_NEAR(q.flat.curve.points[0].copyRewrite, 6e-11, 1e-18);
  EXPECT_NEAR(q.flat.forWorkingSet(1e9).rewriteOfACopy(), 2e-11, 1e-18);
  EXPECT_NEAR(q.lane.forWorkingSet(1e9).rewriteOfACopy(), 1e-11, 1e-18);
  EXPECT_EQ(q.node.rewrite, 0);
  EXPECT_LT(q.node.copyRewrite, 0) << "not measured";
  EXPECT_EQ(q.node.rewriteOfACopy(), 0);
  EXPECT_TRUE(p.flat.withoutRewrite().forWorkingSet(2000).rewriteOfACopy() == 0);
  for (const std::string field : {"rewrite", "copy_rewrite"}) {  // at one point of two
    {
      std::ofstream f(path);
      f << "flat.beta@1000 1e-10\nflat.gamma@1000 1e-11\nflat." << field << "@1000 1e-10\n"
        << "flat.beta@2000 1e-10\nflat.gamma@2000 1e-11\n";
    }
    s = loadCostParams(path, &q);
    EXPECT_FALSE(s.ok()) << field;
    EXPECT_NE(s.message().find("flat." + field + "@ is given at every point"), std::string::npos) << s.message();
  }
  // A level with a curve but no rewrite@ point keeps its plain LEVEL.rewrite.
  {
    std::ofstream f(path);
    f << "flat.rewrite 2e-10\nflat.beta@1000 1e-10\nflat.gamma@1000 1e-11\n";
  }
  s = loadCostParams(path, &q);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_NEAR(q.flat.forWorkingSet(1e6).rewrite, 2e-10, 1e-18);
  EXPECT_NEAR(q.flat.forWorkingSet(1e6).rewriteOfACopy(), 2e-10, 1e-18) << "a copy pays a reduction's";
  std::remove(path.c_str());
}

// A level's copies within a rank: its own curve where calibration measured them (an allgather out of
// place against in place), else the flat level's, else the node level's beta; through the file and back.
TEST(CostModel, ALevelMayCarryItsOwnCopyCost) {
  LevelCosts c;
  c.node = LinkCost{1e-6, 3e-10, 1e-10};
  c.flat = LinkCost{4e-6, 1e-9, 1e-10};
  c.flat.curve = BandwidthCurve::of({{1000, 1e-10, 1e-11}, {4000, 2e-10, 1e-11}});
  c.flat.curve.points[0].copy = 2e-11;
  c.flat.curve.points[1].copy = 6e-11;
  ASSERT_TRUE(c.flat.curve.carriesCopy());
  EXPECT_NEAR(c.forWorkingSet(2000).flat.copy, 4e-11, 1e-22) << "interpolated in log W";
  EXPECT_DOUBLE_EQ(c.forWorkingSet(10).flat.copy, 2e-11);
  EXPECT_NEAR(c.forWorkingSet(2000).lane.copy, 4e-11, 1e-22) << "a level without its own: the flat level's";
  EXPECT_NEAR(c.forWorkingSet(2000).node.copy, 4e-11, 1e-22) << "a copy within a rank, not through the slots";
  LevelCosts unmeasured = c;
  unmeasured.flat.curve = BandwidthCurve{};
  EXPECT_DOUBLE_EQ(unmeasured.forWorkingSet(2000).flat.copy, 3e-10) << "none measured: the node's beta";
  EXPECT_DOUBLE_EQ(unmeasured.forWorkingSet(2000).node.copy, 3e-10);
  EXPECT_DOUBLE_EQ(c.forWorkingSet(2000).flat.atShare(0.5).copy, c.forWorkingSet(2000).flat.copy);
  CostParams p = defaultCostParams();
  p.flat = c.flat;
  const std::string path = tempPath("strata_costs_copy.txt");
  ASSERT_TRUE(saveCostParams(path, p).ok());
  CostParams q;
  const Status s = loadCostParams(path, &q);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(q.flat.curve.carriesCopy());
  EXPECT_NEAR(q.flat.curve.points[1].copy, 6e-11, 1e-22);
  EXPECT_FALSE(q.node.curve.carriesCopy());
  std::remove(path.c_str());
}

// The host share: the costs alone at the share measured alone, the busy costs with every process
// busy, linear in the share between; shares compose; a level never measured alone ignores them.
TEST(CostModel, AShareOfTheHostBusyIsPricedBetweenAloneAndBusy) {
  LinkCost c{8e-6, 4e-10, 2e-10};
  c.alone = HostShare{0.25, 0.5, BandwidthCurve::of({{1e6, 0.25, 0.5}})};
  c = c.forWorkingSet(1e6);
  const LinkCost alone = c.atShare(0.25);
  EXPECT_DOUBLE_EQ(alone.alpha, 4e-6);
  EXPECT_DOUBLE_EQ(alone.beta, 1e-10);
  EXPECT_DOUBLE_EQ(alone.gamma, 1e-10);
  const LinkCost half = c.atShare(0.5);  // a third of the way from alone to busy
  EXPECT_NEAR(half.beta, 1e-10 + (4e-10 - 1e-10) / 3, 1e-22);
  EXPECT_NEAR(c.atShare(0.5).atShare(0.5).beta, alone.beta, 1e-22) << "shares compose";
  EXPECT_DOUBLE_EQ(alone.atShare(4).beta, c.beta) << "and come back";
  EXPECT_DOUBLE_EQ(c.atShare(0.1).beta, alone.beta) << "below the share measured alone: the alone costs";
  EXPECT_DOUBLE_EQ(alone.forWorkingSet(1e6).beta, c.beta) << "a new call starts busy";
  LinkCost plain{8e-6, 4e-10, 2e-10};
  EXPECT_DOUBLE_EQ(plain.atShare(0.25).beta, 4e-10);
  // A binomial tree's rounds at their shares: the plain formula without a law, cheaper with one.
  EXPECT_DOUBLE_EQ(binomialTreeTime(8, plain, 1000), 3 * (8e-6 + 4e-7));
  EXPECT_NEAR(binomialSpreadTime(8, plain, 8000), 3 * 8e-6 + 7.0 / 8 * 4e-10 * 8000, 1e-18);
  EXPECT_LT(binomialTreeTime(8, c, 1e5), 3 * (c.alpha + c.beta * 1e5));
}

// The share counts receivers: round r of a binomial tree has 2^r of them, a pipelined broadcast
// p - 1 of p. On 2 ranks measured alone at share 1/2 (one rank receiving), a 2-rank binomial
// broadcast is priced at the alone costs, an exchange (every rank receiving) at the busy ones.
TEST(CostModel, TheHostShareCountsReceivers) {
  LinkCost c{8e-6, 4e-10, 2e-10};
  c.alone = HostShare{0.5, 0.5, BandwidthCurve::of({{1e6, 0.5, 0.5}})};
  c = c.forWorkingSet(1e6);
  std::printf("alpha %g beta %g, alone at share 0.5: x0.5\n", c.alpha, c.beta);
  EXPECT_DOUBLE_EQ(binomialTreeTime(2, c, 1000), 4e-6 + 2e-10 * 1000) << "one receiver of 2: alone";
  EXPECT_DOUBLE_EQ(receiving(c, 2, 2).beta, 4e-10) << "both receiving: busy";
  EXPECT_DOUBLE_EQ(broadcastPipelineLink(c, 2).beta, 2e-10);
  EXPECT_DOUBLE_EQ(binomialRound(c, 0, 8).beta, 2e-10) << "1 of 8, below the share measured: alone";
  EXPECT_DOUBLE_EQ(binomialRound(c, 2, 8).beta, 2e-10) << "4 of 8 receive: the share measured alone";
  EXPECT_DOUBLE_EQ(broadcastPipelineLink(c, 8).beta, (2 + 2 * 0.75) * 1e-10) << "7 of 8: three quarters of the way to busy";
  // A pipeline's rounds at the receivers they keep busy on average.
  EXPECT_DOUBLE_EQ(broadcastRoundsLink(c, 8, 1, 7).beta, 2e-10) << "one block down a chain of 8: one receiver at a time";
  EXPECT_DOUBLE_EQ(broadcastRoundsLink(c, 8, 1000, 1006).beta, (2 + 2 * (7000.0 / 1006 / 8 - 0.5) / 0.5) * 1e-10)
      << "a thousand blocks: nearly the steady state";
  EXPECT_DOUBLE_EQ(broadcastRoundsLink(c, 8, 1000, 2004).beta, 2e-10)
      << "a binary tree's block every second round: half of the 7 at once, under the share measured alone";
  EXPECT_DOUBLE_EQ(broadcastRoundsLink(c, 8, 1000, 1006, 2).beta, broadcastPipelineLink(c, 8).beta) << "at most p - 1";
  EXPECT_DOUBLE_EQ(broadcastRoundsLink(c, 2, 5, 5).beta, broadcastPipelineLink(c, 2).beta);
}

// A root-centred node op's rounds pipeline through the double-buffered slots where each process
// has a core: the slower side (root or members) sets the pace, the other shows for one round. Where
// calibration measured the level alone (more processes than cores), both sides share the cores and
// add up. The root's side counts every byte it moves: a gather's root copies its own piece too, at
// the copy within a rank.
TEST(CostModel, RootCentredNodeOpsPipelineWhereEachProcessHasACore) {
  LinkCost c{1e-6, 4e-10, 2e-10};  // roundBytes: 256 KiB
  c.copy = 1e-10;
  const double m = 1 << 20;        // 4 rounds
  EXPECT_DOUBLE_EQ(nodeOpRounds(m, c), 4);
  EXPECT_NEAR(nodeBroadcastCost(m, 4, c), 4e-6 + 4e-10 * m * 1.25, 1e-15) << "root writes, members read: equal sides";
  EXPECT_NEAR(nodeReduceCost(m, 4, c), 4e-6 + (4e-10 + 4 * 2e-10) * m + 4e-10 * m / 4, 1e-15)
      << "the root reduces 4 inputs while the members write the next round";
  EXPECT_NEAR(nodeGatherCost(m, 4, c), 1e-6 + 4e-10 * m * 3 / 4 + 1e-10 * m / 4 + 4e-10 * m / 4, 1e-15)
      << "one round of m / 4 per member: no overlap; the root reads the members' 3/4 of m and copies its own";
  EXPECT_NEAR(nodeBroadcastCost(64 << 10, 4, c), 1e-6 + 2 * 4e-10 * (64 << 10), 1e-15) << "one round: the sum";
  LinkCost shared = c;
  shared.alone = HostShare{0.25, 0.5, BandwidthCurve::of({{1e6, 0.5, 0.5}})};
  shared = shared.forWorkingSet(1e6);
  const LinkCost root = nodeRootAlone(4, shared);
  // The rounds at the root's alpha (half the busy one here), as calibration fits it; the members'
  // side at the share 3/4 (between alone and busy, linearly: 0.5 + 0.5 * 2/3 of busy).
  EXPECT_NEAR(root.alpha, 0.5e-6, 1e-18);
  const LinkCost members = nodeMembersBusy(4, shared);
  EXPECT_NEAR(members.beta, 4e-10 * (0.5 + 0.5 * 2 / 3.0), 1e-22);
  EXPECT_NEAR(nodeBroadcastCost(m, 4, shared), 4 * root.alpha + root.beta * m + members.beta * m, 1e-15)
      << "more processes than cores";
  EXPECT_NEAR(nodeReduceCost(m, 4, shared), 4 * root.alpha + root.beta * m + root.gamma * 4 * m + members.beta * m, 1e-15);
  EXPECT_NEAR(root.copy, 0.5 * 1e-10, 1e-22) << "a copy within a rank alone: scaled as beta is";
  EXPECT_NEAR(nodeGatherCost(m, 4, shared), root.alpha + root.beta * m * 3 / 4 + root.copy * m / 4 + members.beta * m / 4,
              1e-15);
}

// Where each process has a core and calibration measured the node alone (2 ranks: the root reducing
// while the member waits), a root-centred node step runs its first round's root side and its last
// round's members' side alone, at the alone costs, and the rounds between at the busy ones, the
// slower side setting the pace; of one round, all of it alone.
TEST(CostModel, RootCentredNodeOpsRunTheirEndsAloneWhereEachProcessHasACore) {
  LinkCost c{1e-6, 4e-10, 2e-10};  // roundBytes: 256 KiB
  c.copy = 1e-10;                  // a copy within a rank: the root's own pieces
  c.alone = HostShare{0.5, 0.8, BandwidthCurve::of({{1e6, 0.6, 0.6}}), false};
  c = c.forWorkingSet(1e6);
  const LinkCost root = nodeRootAlone(2, c), members = nodeMembersBusy(2, c);
  EXPECT_NEAR(root.beta, 0.6 * 4e-10, 1e-22) << "2 members: each side alone is the share 1/2";
  EXPECT_NEAR(members.beta, 0.6 * 4e-10, 1e-22);
  const double m = 1 << 20;  // 4 rounds
  EXPECT_NEAR(nodeBroadcastCost(m, 2, c), 4 * root.alpha + 0.75 * 4e-10 * m + (root.beta * m + members.beta * m) / 4, 1e-15);
  EXPECT_NEAR(nodeReduceCost(m, 2, c),
              4 * root.alpha + 0.75 * (4e-10 + 2 * 2e-10) * m + (root.beta * m + root.gamma * 2 * m + members.beta * m) / 4,
              1e-15);
  const double one = 64 << 10;
  EXPECT_NEAR(nodeBroadcastCost(one, 2, c), root.alpha + root.beta * one + members.beta * one, 1e-15)
      << "one round: each side alone, one after the other";
  EXPECT_NEAR(nodeBroadcastCost(m, 2, c, true),
              4 * root.alpha + 0.75 * (4e-10 + 1e-10) * m + (root.beta * m + 4e-10 * m) / 4, 1e-15)
      << "the root copying its send buffer too, a copy within the rank: its side sets the pace; in the last round "
         "its copy runs beside the members' reads, both busy";
  EXPECT_NEAR(nodeBroadcastCost(one, 2, c, true), root.alpha + root.beta * one + 4e-10 * one, 1e-15)
      << "one round: the root's writes alone, then its copy beside the member's reads";
  EXPECT_NEAR(nodeScatterCost(one, 2, c), root.alpha + root.beta * one / 2 + 4e-10 * one / 2, 1e-15)
      << "a scatter's root copies its own block beside the member's reads";
  EXPECT_NEAR(root.copy, 0.6 * 1e-10, 1e-22) << "the root's copy within its rank alone: scaled as beta is";
  EXPECT_NEAR(nodeGatherCost(one, 2, c), root.alpha + members.beta * one / 2 + root.beta * one / 2 + root.copy * one / 2,
              1e-15)
      << "a gather's root reads the member's block after the member wrote it, and copies its own";
  EXPECT_NEAR(nodeBroadcastCost(m, 1, c, true), 1e-10 * m, 1e-15) << "a team of one: the root's copy alone";
  EXPECT_EQ(nodeBroadcastCost(m, 1, c), 0) << "a team of one in place: nothing";
  LinkCost shared = c;
  shared.alone.coresShared = true;
  EXPECT_NEAR(nodeBroadcastCost(m, 2, shared), 4 * root.alpha + root.beta * m + members.beta * m, 1e-15)
      << "processes sharing the cores: the sides add up";
}

}  // namespace
}  // namespace strata
