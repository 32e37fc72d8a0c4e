// The cost model's file (STRATA_TOPO_FILE) and its cache term.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "src/tuning/cost_model.h"

namespace strata {
namespace {

std::string tempPath(const char* name) { return std::string(::testing::TempDir()) + name; }

TEST(CostModel, FileRoundTrips) {
  CostParams p = defaultCostParams();
  p.cacheBytes = 12345678;
  p.flat = LinkCost{1e-6, 2e-10, 3e-11};
  p.flatMem = MemoryCosts{4e-10, 5e-11};
  p.node = LinkCost{6e-7, 7e-11, 8e-12};
  p.nodeMem = MemoryCosts{0, 9e-12};
  p.lane = LinkCost{1.5e-5, 1e-9, 2e-9};
  p.laneMem = MemoryCosts{3e-9, 0};
  const std::string path = tempPath("strata_costs_roundtrip.txt");
  ASSERT_TRUE(saveCostParams(path, p).ok());
  CostParams q;
  const Status s = loadCostParams(path, &q);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_DOUBLE_EQ(q.cacheBytes, 12345678);
  EXPECT_NEAR(q.flat.beta, 2e-10, 1e-15);
  EXPECT_NEAR(q.flatMem.betaMem, 4e-10, 1e-15);
  EXPECT_NEAR(q.node.alpha, 6e-7, 1e-12);
  EXPECT_EQ(q.nodeMem.betaMem, 0);
  EXPECT_NEAR(q.lane.gamma, 2e-9, 1e-14);
  EXPECT_NEAR(q.laneMem.betaMem, 3e-9, 1e-14);
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

TEST(CostModel, ABetaWithoutItsStreamingValueMeansThePlainModel) {
  const std::string path = tempPath("strata_costs_plain.txt");
  {
    std::ofstream f(path);
    f << "node.beta 1e-10\n";
  }
  CostParams q;
  ASSERT_TRUE(loadCostParams(path, &q).ok());
  EXPECT_EQ(q.nodeMem.betaMem, 0);
  EXPECT_GT(q.flatMem.betaMem, 0);  // untouched levels keep the defaults
  const LevelCosts big = q.forWorkingSet(1e12);
  EXPECT_DOUBLE_EQ(big.node.beta, 1e-10);
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

TEST(CostModel, CacheTermBlendsByTheShareThatFits) {
  LevelCosts c;
  c.cacheBytes = 1000;
  c.flat = LinkCost{1e-6, 1e-10, 1e-11};
  c.flatMem = MemoryCosts{5e-10, 0};
  EXPECT_DOUBLE_EQ(c.forWorkingSet(500).flat.beta, 1e-10);   // fits: cached
  EXPECT_DOUBLE_EQ(c.forWorkingSet(1000).flat.beta, 1e-10);
  EXPECT_DOUBLE_EQ(c.forWorkingSet(4000).flat.beta, 0.25 * 1e-10 + 0.75 * 5e-10);
  EXPECT_DOUBLE_EQ(c.forWorkingSet(4000).flat.gamma, 1e-11);  // no streaming gamma: as cached
  EXPECT_DOUBLE_EQ(c.forWorkingSet(4000).flat.alpha, 1e-6);
  c.cacheBytes = 0;  // unknown cache: the plain model
  EXPECT_DOUBLE_EQ(c.forWorkingSet(1e12).flat.beta, 1e-10);
}

}  // namespace
}  // namespace strata
