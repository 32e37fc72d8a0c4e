// strata-perf --calibrate's fit (perf/calibration_fit.h) on samples made from known parameters:
// exact samples give the parameters back, and a level whose speed drifts from size to size (both
// calls of a size alike, as they are measured back to back) keeps its reduction's price.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/plan/node_costs.h"
#include "perf/calibration_fit.h"

namespace strata::perf {
namespace {

constexpr double kCache = 32.0 * (1 << 20);
const LinkCost kCached{3e-7, 6e-11, 4e-11};
const MemoryCosts kStreaming{1.2e-10, 2e-11};

// A node reduce-scatter and allgather of 2 members at each size, as the calibration measures
// them; `drift[k]` scales both calls of size k.
std::vector<Sample> nodeSamples(const std::vector<double>& drift) {
  const std::vector<size_t> sizes = {64, 4096, 64 << 10, 512 << 10, 4 << 20, 16 << 20, 64 << 20};
  std::vector<Sample> out;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const double m = static_cast<double>(sizes[k]);
    const double workingSet = 2 * (m + m / 2);
    for (const bool reduces : {false, true}) {
      auto cost = [&](const LinkCost& c) { return reduces ? nodeReduceScatterCost(m, 2, c) : nodeAllGatherCost(m, 2, c); };
      Sample s;
      s.coef = {cost({1, 0, 0}), cost({0, 1, 0}), cost({0, 0, 1})};
      s.seconds = cost(forWorkingSet(kCached, kStreaming, workingSet, kCache)) * drift[k];
      s.bytes = sizes[k];
      s.workingSet = workingSet;
      s.what = std::string(reduces ? "reducescatter " : "allgather ") + std::to_string(sizes[k]);
      out.push_back(s);
    }
  }
  return out;
}

TEST(CalibrationFit, ExactSamplesGiveTheirParametersBack) {
  const LevelFit f = fitLevel(nodeSamples(std::vector<double>(7, 1.0)), kCache);
  EXPECT_NEAR(f.link.alpha / kCached.alpha, 1, 0.01);
  EXPECT_NEAR(f.link.beta / kCached.beta, 1, 0.01);
  EXPECT_NEAR(f.link.gamma / kCached.gamma, 1, 0.01);
  EXPECT_NEAR(f.mem.betaMem / kStreaming.betaMem, 1, 0.01);
  EXPECT_NEAR(f.mem.gammaMem / kStreaming.gammaMem, 1, 0.01);
}

TEST(CalibrationFit, GammaSurvivesALevelWhoseSpeedDriftsBetweenSizes) {
  // The large sizes run 0.6x - 1.5x as long as the parameters say, size by size (both calls of a
  // size alike, as when the machine's speed drifts between sizes): gamma, from each size's pair,
  // stays within the drift's own spread.
  const LevelFit f = fitLevel(nodeSamples({1.0, 1.0, 1.5, 0.6, 1.4, 0.7, 1.0}), kCache);
  EXPECT_GT(f.link.gamma, 0.5 * kCached.gamma);
  EXPECT_LT(f.link.gamma, 1.6 * kCached.gamma);
}

}  // namespace
}  // namespace strata::perf
