// Every flat algorithm, verified symbolically for p = 1..64, every root (all of them up to 16
// ranks, a spread beyond), counts around p, in place and out of place, sum and average.
#include <ostream>
#include <gtest/gtest.h>

#include "inter_node/executor.h"
#include "tests/verifier/plan_factory.h"

namespace strata::verify {
namespace {

struct Param {
  const FlatAlgorithm* algo;
  int p;
};
// gtest prints this in test lists instead of the struct's bytes.
inline void PrintTo(const Param& x, std::ostream* os) {
  *os << collectiveName(x.algo->collective) << " " << x.algo->name << " p=" << x.p;
}

class FlatAlgorithmVerify : public ::testing::TestWithParam<Param> {};

std::vector<int> rootsFor(const FlatAlgorithm& a, int p) {
  if (a.collective == Collective::kShift) return {0, 1, p - 1, p, 2 * p + 1};  // added to the shift
  if (!isRooted(a.collective)) return {0};
  if (p <= 16) {
    std::vector<int> all;
    for (int r = 0; r < p; ++r) all.push_back(r);
    return all;
  }
  return {0, 1, p / 2, p - 1};
}

// Collectives whose count is per rank block: their buffers hold p blocks, and the block structure,
// not the block size, is what the algorithms get wrong.
bool isBlockwise(Collective c) {
  return specOf(c).sendLength == Length::kBlocks || specOf(c).recvLength == Length::kBlocks;
}

std::vector<size_t> countsFor(const FlatAlgorithm& a, int p) {
  if (a.collective == Collective::kBarrier) return {0};
  if (isIrregular(a.collective)) return {1, 2, 3};  // seeds of the irregular layouts
  if (isBlockwise(a.collective)) return {0, 1, 2, 5};
  std::vector<size_t> c = {0, 1, static_cast<size_t>(p + 1), static_cast<size_t>(2 * p + 3)};
  if (p > 1) c.push_back(static_cast<size_t>(p - 1));
  if (p <= 16) c.push_back(37);
  return c;
}

TEST_P(FlatAlgorithmVerify, DeliversExactlyTheRightContributions) {
  const FlatAlgorithm& algo = *GetParam().algo;
  const int p = GetParam().p;
  const std::vector<RedOp> ops = isReduction(algo.collective) ? std::vector<RedOp>{strataSum, strataAvg}
                                                              : std::vector<RedOp>{strataSum};
  for (const BuildOptions& opt : {BuildOptions{}, manyBlocksOptions()}) {
    // The second options only matter to algorithms whose plans they change (the pipelines).
    if (opt.minPipelineBytes == 1) {
      CollectiveArgs probe;
      probe.coll = algo.collective;
      probe.count = static_cast<size_t>(2 * p + 3);
      probe.type = strataFloat32;
      if (algo.whyUnsupported(probe, p).empty() && !isIrregular(algo.collective) &&
          buildFlatPlan(algo, probe, p, 0, opt).size() == buildFlatPlan(algo, probe, p, 0, BuildOptions{}).size()) {
        continue;
      }
    }
    for (int root : rootsFor(algo, p)) {
      for (size_t count : countsFor(algo, p)) {
        for (bool inPlace : {false, true}) {
          for (RedOp op : ops) {
            CollectiveArgs a;
            a.coll = algo.collective;
            a.count = count;
            a.type = strataFloat32;
            a.op = op;
            a.root = root;
            a.inPlace = inPlace;
            if (!algo.whyUnsupported(a, p).empty()) continue;
            std::vector<CollectiveArgs> perRank;
            if (isIrregular(algo.collective)) perRank = irregularArgs(a, p, static_cast<unsigned>(count));
            if (algo.collective == Collective::kShift) a.shift = static_cast<int>(count % 7) - 3 + root;
            const Result res = verifyFlat(algo, a, p, opt, perRank);
            ASSERT_TRUE(res.ok) << collectiveName(algo.collective) << " algorithm=" << algo.name << " p=" << p
                                << " root=" << root << " count=" << count << " inPlace=" << inPlace
                                << " op=" << redOpName(op) << " blocks=" << (opt.minPipelineBytes == 1 ? "many" : "model")
                                << ": " << res.error;
          }
        }
      }
    }
  }
}

std::vector<Param> allParams() {
  std::vector<Param> out;
  for (const FlatAlgorithm* a : flatAlgorithms()) {
    for (int p = 1; p <= 64; ++p) out.push_back({a, p});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllFlat, FlatAlgorithmVerify, ::testing::ValuesIn(allParams()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return std::string(collectiveName(info.param.algo->collective)) + "_" + info.param.algo->name +
                                  "_p" + std::to_string(info.param.p);
                         });

// The ring allreduce's allgather tags lie a phase (2^22) above its reduce-scatter tags: folded into
// the standard's least MPI_TAG_UB, 32767, a round of each lands on one tag with one peer, and MPI
// would match them by arrival (the MPI face on a split communicator did, before the bound was read
// from MPI_COMM_WORLD). Such a plan is refused when it is built; under Open MPI's bound nothing folds.
TEST(FoldedTags, PlansWhoseTagsCollideUnderTheBoundAreRefused) {
  const FlatAlgorithm* ring = findFlatAlgorithm(Collective::kAllReduce, "ring");
  ASSERT_NE(ring, nullptr);
  CollectiveArgs a;
  a.coll = Collective::kAllReduce;
  a.count = 65539;
  a.type = strataInt32;
  a.commSize = 3;
  const Plan plan = buildFlatPlan(*ring, a, 3, 0, BuildOptions{});
  const Status folded = checkFoldedTags(plan, 32767);
  EXPECT_EQ(folded.code(), strataInvalidUsage);
  EXPECT_NE(folded.message().find("MPI_TAG_UB (32767)"), std::string::npos) << folded.message();
  EXPECT_TRUE(checkFoldedTags(plan, 0x7fffffff).ok());
  EXPECT_TRUE(checkFoldedTags(plan, (1 << 23) - 1).ok());  // above both phases' tags: nothing folds
}

// Recursive halving's reduce-scatter reduces its last round straight into the result and keeps its
// partial sums in two receive slots (a half and a quarter of the vector): a copy out of scratch at
// the end made it 1.3-1.45x slower than the ring at 2 ranks, and a whole vector of scratch beside
// the slot touched twice the memory. Every rank's plan, p = 2..17, out of place: no copy step, and
// scratch within 3/4 of the vector for p a power of two, within the vector otherwise (a folded
// pair's virtual block is two blocks, so the halves are uneven), plus a folded odd member's pair
// buffers (the vector and its partner's block). Before: the vector plus its largest half.
TEST(RecursiveHalvingReduceScatter, ReducesIntoTheResultWithoutACopyInLittleScratch) {
  const FlatAlgorithm* rh = findFlatAlgorithm(Collective::kReduceScatter, "recursive_halving");
  ASSERT_NE(rh, nullptr);
  for (int p = 2; p <= 17; ++p) {
    CollectiveArgs a;
    a.coll = Collective::kReduceScatter;
    a.count = 1000;  // per rank
    a.type = strataFloat32;
    a.commSize = p;
    const size_t total = a.count * static_cast<size_t>(p);
    const int rem = p - floorPow2(p);
    for (int r = 0; r < p; ++r) {
      const Plan plan = buildFlatPlan(*rh, a, p, r, BuildOptions{});
      for (size_t i = 0; i < plan.size(); ++i) {
        EXPECT_NE(plan.steps[i].kind, StepKind::kCopy) << "p=" << p << " rank " << r << ": " << plan.describe(i, a.type);
      }
      const bool foldedOdd = r < 2 * rem && r % 2 == 1;
      const size_t bound = (rem == 0 ? total * 3 / 4 : total) + (foldedOdd ? total + a.count : 0);
      EXPECT_LE(plan.scratchCount, bound) << "p=" << p << " rank " << r;
    }
  }
}

}  // namespace
}  // namespace strata::verify
