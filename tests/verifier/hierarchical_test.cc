// Every composition, verified symbolically on the node shapes that matter: one node (1xP), one rank
// per node (Nx1), 2x4, 4x2, 3x3, irregular 3+5 and 4+4+1, and nodes whose ranks are dealt
// round-robin (not consecutive); every root, counts around the node size, in place or not, sum
// and average. Node ops are simulated as the executor runs them (one at a time, blocking).
#include <ostream>
#include <gtest/gtest.h>

#include "tests/verifier/plan_factory.h"

namespace strata::verify {
namespace {

struct Param {
  const HierAlgorithm* algo;
  std::string shape;
  int p;
};
// gtest prints this in test lists (ctest's skip list included) instead of the struct's bytes.
inline void PrintTo(const Param& x, std::ostream* os) {
  *os << collectiveName(x.algo->collective) << " " << x.algo->name << " p=" << x.p << " shape=" << x.shape;
}

class HierarchicalVerify : public ::testing::TestWithParam<Param> {};

TEST_P(HierarchicalVerify, DeliversExactlyTheRightContributions) {
  const HierAlgorithm& algo = *GetParam().algo;
  const std::string shape = GetParam().shape;
  const int p = GetParam().p;
  Topology t0;
  ASSERT_TRUE(topologyFor(shape, p, 0, &t0).ok());
  CollectiveArgs probe;
  probe.coll = algo.collective;
  probe.count = 4;
  if (!algo.whyUnsupported(probe, t0).empty()) GTEST_SKIP() << algo.name << " on " << shape << ": " << algo.whyUnsupported(probe, t0);
  const std::vector<RedOp> ops = isReduction(algo.collective) ? std::vector<RedOp>{strataSum, strataAvg}
                                                              : std::vector<RedOp>{strataSum};
  std::vector<int> roots = {0};
  if (isRooted(algo.collective)) {
    roots.clear();
    for (int r = 0; r < p; ++r) roots.push_back(r);
  }
  std::vector<size_t> counts = {0, 1, 3, static_cast<size_t>(p + 1), 37};
  if (algo.collective == Collective::kBarrier) counts = {0};
  // Small test vectors: costs that make the nested levels cut them into several blocks as well.
  LevelCosts costs;
  costs.lane = LinkCost{1e-9, 1e-6, 1e-9};
  costs.node = costs.lane;
  for (const LevelCosts& c : {LevelCosts{}, costs}) {
    for (int root : roots) {
      for (size_t count : counts) {
        for (bool inPlace : {false, true}) {
          for (RedOp op : ops) {
            if ((algo.collective == Collective::kScan || algo.collective == Collective::kExscan) && op == strataAvg) continue;
            CollectiveArgs a;
            a.coll = algo.collective;
            a.count = count;
            a.type = strataFloat32;
            a.op = op;
            a.root = root;
            a.inPlace = inPlace;
            const Result res = verifyHier(algo, a, shape, p, c);
            ASSERT_TRUE(res.ok) << collectiveName(algo.collective) << " composition=" << algo.name << " shape=" << shape
                                << " p=" << p << " root=" << root << " count=" << count << " inPlace=" << inPlace
                                << " op=" << redOpName(op) << ": " << res.error;
          }
        }
      }
    }
  }
}

std::vector<Param> allParams() {
  const std::vector<std::pair<std::string, int>> shapes = {
      {"1", 1},   {"2", 2},     {"1", 2},     {"3", 3},     {"1", 3},      {"4", 8},      {"2", 8},   {"8", 8},
      {"1", 8},   {"3", 9},     {"3,5", 8},   {"4,4,1", 9}, {"rr2", 8},    {"rr3", 9},    {"2,3", 5}, {"4", 16},
      {"5,3", 8}, {"1,2,3", 6}, {"6", 12},    {"rr4", 12},
  };
  std::vector<Param> out;
  for (const HierAlgorithm* h : hierAlgorithms()) {
    for (const auto& [shape, p] : shapes) out.push_back({h, shape, p});
  }
  return out;
}

std::string name(const ::testing::TestParamInfo<Param>& info) {
  std::string shape = info.param.shape;
  for (char& ch : shape) {
    if (ch == ',') ch = '_';
  }
  return std::string(collectiveName(info.param.algo->collective)) + "_" + info.param.algo->name + "_p" +
         std::to_string(info.param.p) + "_shape" + shape;
}

INSTANTIATE_TEST_SUITE_P(Compositions, HierarchicalVerify, ::testing::ValuesIn(allParams()), name);

}  // namespace
}  // namespace strata::verify
