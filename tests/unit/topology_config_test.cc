// Topology (node teams, lanes, virtual nodes) and configuration parsing.
#include <gtest/gtest.h>

#include "src/core/config.h"
#include "src/core/device_mode.h"
#include "kernels/plan/topology.h"
#include "src/tuning/cost_model.h"

namespace strata {
namespace {

TEST(Topology, NodesFromKeysNeedNotBeConsecutive) {
  // ranks 0,2,4 on one host and 1,3 on another (round-robin placement)
  const Topology t = Topology::fromNodeKeys({7, 9, 7, 9, 7}, 3);
  ASSERT_EQ(t.numNodes(), 2);
  EXPECT_EQ(t.nodes[0], (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(t.nodes[1], (std::vector<int>{1, 3}));
  EXPECT_EQ(t.myNode(), 1);
  EXPECT_EQ(t.myLocalRank(), 1);
  EXPECT_FALSE(t.regular());
  EXPECT_FALSE(t.consecutive());
  EXPECT_EQ(t.laneMembers(0), (std::vector<int>{0, 1}));
  EXPECT_EQ(t.laneMembers(2), (std::vector<int>{4}));
  const Group lane = t.laneGroup(3);
  EXPECT_EQ(lane.ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(lane.me, 1);
  EXPECT_EQ(t.shapeText(), "3+2");
}

TEST(Topology, VirtualNodesOfKConsecutiveRanks) {
  Topology t;
  ASSERT_TRUE(Topology::fromShape({4}, 8, 5, &t).ok());
  EXPECT_EQ(t.shapeText(), "2x4");
  EXPECT_TRUE(t.regular());
  EXPECT_TRUE(t.consecutive());
  EXPECT_EQ(t.nodeGroup(5).ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(t.nodeGroup(5).me, 1);
  EXPECT_EQ(t.laneGroup(5).ranks, (std::vector<int>{1, 5}));
  ASSERT_TRUE(Topology::fromShape({3}, 8, 0, &t).ok());
  EXPECT_EQ(t.shapeText(), "3+3+2");
  ASSERT_TRUE(Topology::fromShape({3, 5}, 8, 7, &t).ok());
  EXPECT_EQ(t.shapeText(), "3+5");
  EXPECT_EQ(t.myLocalRank(), 4);
  EXPECT_EQ(t.laneGroup(7).ranks, (std::vector<int>{7}));
  EXPECT_EQ(Topology::fromShape({3, 4}, 8, 0, &t).code(), strataInvalidArgument);
}

TEST(Config, NodeShapeAndAlgorithmSpecs) {
  std::vector<int> shape;
  ASSERT_TRUE(parseNodeShape("4", &shape).ok());
  EXPECT_EQ(shape, std::vector<int>{4});
  ASSERT_TRUE(parseNodeShape("3,5", &shape).ok());
  EXPECT_EQ(shape, (std::vector<int>{3, 5}));
  ASSERT_TRUE(parseNodeShape("0", &shape).ok());
  EXPECT_TRUE(shape.empty());
  EXPECT_EQ(parseNodeShape("4x", &shape).code(), strataInvalidArgument);
  EXPECT_EQ(parseNodeShape("3,0", &shape).code(), strataInvalidArgument);

  std::map<std::string, std::string> algo;
  ASSERT_TRUE(parseAlgorithmSpec("ring", &algo).ok());
  EXPECT_EQ(algo[""], "ring");
  ASSERT_TRUE(parseAlgorithmSpec("allreduce=rabenseifner, broadcast:chain", &algo).ok());
  EXPECT_EQ(algo["allreduce"], "rabenseifner");
  EXPECT_EQ(algo["broadcast"], "chain");
  EXPECT_EQ(parseAlgorithmSpec("frobnicate=ring", &algo).code(), strataInvalidArgument);

  Config c;
  c.forcedAlgorithm = {{"", "ring"}, {"broadcast", "chain"}};
  EXPECT_EQ(c.forcedFor(Collective::kAllReduce), "ring");
  EXPECT_EQ(c.forcedFor(Collective::kBroadcast), "chain");
}

TEST(Config, ResolveRejectsBadFields) {
  strataConfig_t bad = STRATA_CONFIG_INITIALIZER;
  Config out;
  bad.ranksPerNode = -2;
  EXPECT_EQ(resolveConfig(&bad, &out).code(), strataInvalidArgument);
  bad = STRATA_CONFIG_INITIALIZER;
  bad.cudaAwareMpi = 3;
  EXPECT_EQ(resolveConfig(&bad, &out).code(), strataInvalidArgument);
  bad = STRATA_CONFIG_INITIALIZER;
  bad.timeoutSeconds = -1;
  EXPECT_EQ(resolveConfig(&bad, &out).code(), strataInvalidArgument);
  strataConfig_t good = STRATA_CONFIG_INITIALIZER;
  good.ranksPerNode = 4;
  good.timeoutSeconds = 5;
  good.algorithm = "allreduce=ring";
  ASSERT_TRUE(resolveConfig(&good, &out).ok());
  EXPECT_EQ(out.nodeShape, std::vector<int>{4});
  EXPECT_EQ(out.timeoutSeconds, 5);
  EXPECT_EQ(out.forcedFor(Collective::kAllReduce), "ring");
}

// Every variable is read strictly: a malformed value is an error naming the variable and the
// value, never ignored or read half (atoi would take "2M" as 2, "yes" as 0).
TEST(Config, MalformedEnvironmentIsAnErrorThatNamesIt) {
  const std::pair<const char*, const char*> bad[] = {
      {"STRATA_STAGE_CHUNK", "2Q"},      {"STRATA_STAGE_CHUNK", "-5"},   {"STRATA_STAGE_SLOTS", "0"},
      {"STRATA_STAGE_SLOTS", "many"},    {"STRATA_DEVICE_SLOT", "1.5M"}, {"STRATA_DEVICE_SYNC", "yes"},
      {"STRATA_STREAM_GATE", "spin"},
      {"STRATA_MPI_NATIVE", "2"},        {"STRATA_CUDA_AWARE_MPI", "1x"}, {"STRATA_WAIT_SPIN_US", "-1"},
      {"STRATA_MAX_MESSAGE_BYTES", "0"}, {"STRATA_TIMEOUT", "soon"},     {"STRATA_DEBUG", "LOUD"},
      {"STRATA_RANKS_PER_NODE", "4,x"},  {"STRATA_STAGE_CHUNK", " -1"},   {"STRATA_DEVICE_SLOT", "18446744073709551615"},
      {"STRATA_TIMEOUT", "inf"},         {"STRATA_TIMEOUT", "1e999"},    {"STRATA_MAX_MESSAGE_BYTES", "4G"},
      {"STRATA_NODE_SPIN", "256"},
  };
  for (const auto& [name, value] : bad) {
    setenv(name, value, 1);
    Config out;
    const Status s = resolveConfig(nullptr, &out);
    unsetenv(name);
    EXPECT_EQ(s.code(), strataInvalidArgument) << name << "=" << value;
    EXPECT_NE(s.message().find(value), std::string::npos) << name << "=" << value << ": " << s.message();
  }
  setenv("STRATA_STAGE_CHUNK", "256K", 1);
  setenv("STRATA_DEVICE_SLOT", "1M", 1);
  setenv("STRATA_WAIT_SPIN_US", "50", 1);
  setenv("STRATA_DEVICE_SYNC", "1", 1);
  setenv("STRATA_STREAM_GATE", "kernel", 1);
  Config out;
  const Status s = resolveConfig(nullptr, &out);
  for (const char* name :
       {"STRATA_STAGE_CHUNK", "STRATA_DEVICE_SLOT", "STRATA_WAIT_SPIN_US", "STRATA_DEVICE_SYNC", "STRATA_STREAM_GATE"}) {
    unsetenv(name);
  }
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(out.stageChunkBytes, size_t{256} << 10);
  EXPECT_EQ(out.deviceSlotBytes, size_t{1} << 20);
  EXPECT_DOUBLE_EQ(out.waitSpinSeconds, 50e-6);
  EXPECT_EQ(out.deviceSync, 1);
  EXPECT_EQ(out.streamGate, StreamGateMode::kKernel);
  // Unset, the mode is chosen when the device path is set up.
  Config unset;
  ASSERT_TRUE(resolveConfig(nullptr, &unset).ok());
  EXPECT_EQ(unset.deviceSync, -1);
  EXPECT_EQ(unset.streamGate, StreamGateMode::kAuto);
}

// The device path's mode: CUDA's settings under which a held stream would stall the progress
// thread make it synchronous unless STRATA_DEVICE_SYNC forces a mode; forcing the progress thread
// without MPI_THREAD_MULTIPLE is an error, not ignored.
TEST(Config, DeviceModeFollowsCudasSettingsUnlessForced) {
  Config c;
  DeviceMode m;
  ASSERT_TRUE(chooseDeviceMode(c, true, nullptr, nullptr, false, &m).ok());
  EXPECT_TRUE(m.async) << m.why;
  for (const char* blocking : {"1", "2"}) {
    ASSERT_TRUE(chooseDeviceMode(c, true, blocking, nullptr, false, &m).ok());
    EXPECT_FALSE(m.async) << blocking;
    EXPECT_NE(m.why.find("CUDA_LAUNCH_BLOCKING"), std::string::npos) << m.why;
  }
  ASSERT_TRUE(chooseDeviceMode(c, true, "0", "8", false, &m).ok());
  EXPECT_TRUE(m.async) << m.why;
  ASSERT_TRUE(chooseDeviceMode(c, true, "", "1", false, &m).ok());
  EXPECT_FALSE(m.async);
  EXPECT_NE(m.why.find("CUDA_DEVICE_MAX_CONNECTIONS=1"), std::string::npos) << m.why;
  ASSERT_TRUE(chooseDeviceMode(c, false, nullptr, nullptr, false, &m).ok());
  EXPECT_FALSE(m.async);
  EXPECT_NE(m.why.find("MPI_THREAD_MULTIPLE"), std::string::npos) << m.why;

  c.deviceSync = 0;  // forced: the progress thread, where it cannot stall
  ASSERT_TRUE(chooseDeviceMode(c, true, "0", "4", false, &m).ok());
  EXPECT_TRUE(m.async);
  Status s = chooseDeviceMode(c, false, nullptr, nullptr, false, &m);
  EXPECT_EQ(s.code(), strataInvalidUsage);
  EXPECT_NE(s.message().find("MPI_THREAD_MULTIPLE"), std::string::npos) << s.message();
  s = chooseDeviceMode(c, true, "1", nullptr, false, &m);
  EXPECT_EQ(s.code(), strataInvalidUsage);
  EXPECT_NE(s.message().find("CUDA_LAUNCH_BLOCKING"), std::string::npos) << s.message();
  s = chooseDeviceMode(c, true, nullptr, "1", false, &m);
  EXPECT_EQ(s.code(), strataInvalidUsage);
  EXPECT_NE(s.message().find("CUDA_DEVICE_MAX_CONNECTIONS=1"), std::string::npos) << s.message();
  c.deviceSync = 1;
  ASSERT_TRUE(chooseDeviceMode(c, true, nullptr, nullptr, false, &m).ok());
  EXPECT_FALSE(m.async);
  EXPECT_NE(m.why.find("STRATA_DEVICE_SYNC=1"), std::string::npos) << m.why;
}

// Ranks that share a GPU run synchronously (src/core/device_mode.h says why) unless
// the progress thread is forced; CUDA's stalling settings and MPI's thread level still come first.
TEST(Config, DeviceModeIsSynchronousWhereRanksShareAGpuUnlessForced) {
  Config c;
  DeviceMode m;
  ASSERT_TRUE(chooseDeviceMode(c, true, nullptr, nullptr, true, &m).ok());
  EXPECT_FALSE(m.async);
  EXPECT_NE(m.why.find("share a GPU"), std::string::npos) << m.why;
  ASSERT_TRUE(chooseDeviceMode(c, true, nullptr, "1", true, &m).ok());
  EXPECT_FALSE(m.async);
  EXPECT_NE(m.why.find("CUDA_DEVICE_MAX_CONNECTIONS=1"), std::string::npos) << m.why;
  ASSERT_TRUE(chooseDeviceMode(c, false, nullptr, nullptr, true, &m).ok());
  EXPECT_NE(m.why.find("MPI_THREAD_MULTIPLE"), std::string::npos) << m.why;
  c.deviceSync = 0;
  ASSERT_TRUE(chooseDeviceMode(c, true, nullptr, nullptr, true, &m).ok());
  EXPECT_TRUE(m.async) << m.why;
  c.streamGate = StreamGateMode::kKernel;
  c.deviceSync = -1;
  ASSERT_TRUE(chooseDeviceMode(c, true, nullptr, nullptr, true, &m).ok());
  EXPECT_FALSE(m.async);
  EXPECT_NE(m.why.find("STRATA_STREAM_GATE unused"), std::string::npos) << m.why;
}

TEST(CostModel, PipeliningLemmaMinimisesTheFormula) {
  LinkCost c{2e-6, 1e-9, 1e-9};
  const double m = 16e6;
  const int k = 7, s = 1;
  const size_t best = pipelineBlocks(k, s, c, m, 100000);
  const double tBest = pipelineTime(k, s, c, m, best);
  for (size_t M : {best / 2, best - 1, best + 1, best * 2}) EXPECT_LE(tBest, pipelineTime(k, s, c, m, M) + 1e-12);
  // The lemma's closed form: (k-s) a + 2 sqrt(s (k-s) a b m) + s b m
  const double closed = (k - s) * c.alpha + 2 * std::sqrt(s * (k - s) * c.alpha * c.beta * m) + s * c.beta * m;
  EXPECT_NEAR(tBest, closed, closed * 1e-3);
  EXPECT_EQ(pipelineBlocks(1, 1, c, m, 1000), 1u);
}

}  // namespace
}  // namespace strata
