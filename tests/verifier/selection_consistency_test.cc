// Every rank must choose the same algorithm for the same call, or they wait on each other: the
// tuner may use only what all ranks know. Checked for every collective, many p and sizes, with
// each rank's own arguments (the irregular collectives differ per rank).
#include <gtest/gtest.h>

#include "src/core/native_runner.h"
#include "src/tuning/tuner.h"
#include "tests/verifier/plan_factory.h"

namespace strata::verify {
namespace {

// native: 0 off, 1 priced as the best flat algorithm, 2 priced from measured times (the MPI face's
// settings); nativeSupports() decides per rank, from that rank's own arguments.
class Selection : public ::testing::TestWithParam<int> {};

TEST_P(Selection, EveryRankChoosesTheSameAlgorithm) {
  const int native = GetParam();
  CostParams costs = defaultCostParams();
  Config config;
  const std::vector<std::pair<std::string, int>> shapes = {{"1", 1}, {"2", 2}, {"3", 3},   {"5", 5},  {"4", 8},
                                                           {"2", 8}, {"3,5", 8}, {"rr2", 8}, {"4", 16}, {"4,4,1", 9}};
  for (int c = 0; c < kNumCollectives; ++c) {
    const Collective coll = static_cast<Collective>(c);
    for (const auto& [shape, p] : shapes) {
      for (size_t count : {size_t{0}, size_t{1}, size_t{100}, size_t{100000}, size_t{10000000}}) {
        for (strataDataType_t type : {strataFloat32, strataInt8}) {
          CollectiveArgs base;
          base.coll = coll;
          base.count = count;
          base.type = type;
          base.root = p - 1;
          base.commSize = p;
          std::vector<CollectiveArgs> perRank(static_cast<size_t>(p), base);
          const bool irregular = isIrregular(coll);
          if (irregular) perRank = irregularArgs(base, p, static_cast<unsigned>(count % 7));
          std::string first;
          for (int r = 0; r < p; ++r) {
            CollectiveArgs a = rankArgs(perRank[static_cast<size_t>(r)], r);
            a.inPlace = (r % 2) == 0;  // in-place flags differ between ranks of rooted calls
            Topology topo;
            ASSERT_TRUE(topologyFor(shape, p, r, &topo).ok());
            TunerInput in{&a, &topo, &costs, &config, true};
            in.native = native > 0 && nativeSupports(a);
            costs.native.ranks = p;
            for (int k = 0; k < kNumCollectives; ++k) {
              // Measured times that cross Strata's predictions somewhere in the size range.
              costs.native.points[static_cast<Collective>(k)] = {{8, 3e-6}, {4096, 6e-6}, {1 << 20, 4e-4}};
            }
            in.nativeTimes = native == 2 ? &costs.native : nullptr;
            Candidate chosen;
            ASSERT_TRUE(selectAlgorithm(in, &chosen).ok()) << collectiveName(coll);
            if (r == 0) first = chosen.name;
            ASSERT_EQ(chosen.name, first) << collectiveName(coll) << " shape=" << shape << " p=" << p << " count=" << count
                                          << " native=" << native << ": rank " << r << " chose " << chosen.name
                                          << ", rank 0 " << first;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Native, Selection, ::testing::Values(0, 1, 2), [](const auto& info) {
  return std::string(info.param == 0 ? "off" : info.param == 1 ? "priced_as_flat" : "priced_from_measurements");
});

}  // namespace
}  // namespace strata::verify
