// Every rank must choose the same algorithm for the same call, or they wait on each other: the
// tuner may use only what all ranks know. Checked for every collective, many p and sizes, with
// each rank's own arguments (the irregular collectives differ per rank).
#include <gtest/gtest.h>

#include <algorithm>

#include "hierarchy/composition.h"
#include "inter_node/algorithms/algorithm.h"
#include "kernels/plan/node_costs.h"
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

// On one rank every flat plan is the copy of the rank's own data from send to receive buffer: the
// prediction is that copy's bytes at the copy cost, for every flat candidate; nothing in place.
// (The compositions price their node steps' copies through shared memory with their own formulas.)
TEST(SelectionOneRank, EveryCandidatePaysTheLocalCopy) {
  CostParams costs = defaultCostParams();
  Config config;
  Topology topo;
  ASSERT_TRUE(topologyFor("1", 1, 0, &topo).ok());
  const LevelCosts priced = costs.forWorkingSet(2.0 * (1 << 20));
  ASSERT_GT(priced.flat.copy, 0);
  for (Collective coll : {Collective::kAllReduce, Collective::kAllGather, Collective::kBroadcast, Collective::kScatter,
                          Collective::kExscan}) {
    for (bool inPlace : {false, true}) {
      CollectiveArgs a;
      a.coll = coll;
      a.count = 1 << 18;
      a.type = strataFloat32;
      a.commSize = 1;
      a.inPlace = inPlace;
      TunerInput in{&a, &topo, &costs, &config, true};
      const std::vector<Candidate> candidates = candidatesFor(in, nullptr);
      ASSERT_FALSE(candidates.empty()) << collectiveName(coll);
      // Exscan's rank 0 has no result to write.
      const double want = inPlace || coll == Collective::kExscan ? 0.0 : (1 << 20) * priced.flat.copy;
      for (const FlatAlgorithm* f : flatAlgorithmsFor(coll)) {
        const auto it = std::find_if(candidates.begin(), candidates.end(), [&](const Candidate& c) { return c.name == f->name; });
        if (it == candidates.end()) continue;  // not for one rank
        const Candidate& c = *it;
        EXPECT_NEAR(c.predictedSeconds, want, want * 1e-9) << collectiveName(coll) << " " << c.name << " in place "
                                                            << inPlace;
      }
    }
  }
}

// The choice reads what every rank of a call shares, out of place (ranks of one call may differ
// in place); the price of a rank's call as made is its own: in place, its formula without the
// copies it then leaves out, at the cheaper per-byte costs of its own working set and the
// out-of-place call's (LevelCosts::forWorkingSet). No candidate's price for the choice changes in place; with no rewrite
// cost (LinkCost::rewrite, which can make a call in place dearer: it may write what its peer has
// just read) none costs more in place, and an allgather's, which copies no block of its own
// there, costs less.
TEST(SelectionInPlace, ACallIsChosenAsSharedAndPricedAsMade) {
  CostParams costs = defaultCostParams();
  for (LinkCost* l : {&costs.flat, &costs.node, &costs.lane}) {
    l->curve = BandwidthCurve::of({{1 << 20, 1e-10, 1e-10, -1, 2e-11}, {64 << 20, 4e-10, 4e-10, -1, 8e-11}});
  }
  Config config;
  for (Collective coll : {Collective::kAllGather, Collective::kReduceScatter, Collective::kAllReduce, Collective::kBroadcast}) {
    for (const char* shape : {"2", "2,2"}) {
      const int p = std::string(shape) == "2" ? 2 : 4;
      Topology topo;
      ASSERT_TRUE(topologyFor(shape, p, 0, &topo).ok());
      CollectiveArgs a;
      a.coll = coll;
      a.count = size_t{1} << 19;  // floats: 2 MiB a block, or the vector
      a.type = strataFloat32;
      a.commSize = p;
      TunerInput in{&a, &topo, &costs, &config, true};
      in.hostProcesses = p;
      const std::vector<Candidate> apart = candidatesFor(in, nullptr);
      a.inPlace = true;
      const std::vector<Candidate> inPlace = candidatesFor(in, nullptr);
      ASSERT_EQ(apart.size(), inPlace.size());
      ASSERT_FALSE(apart.empty());
      for (size_t i = 0; i < apart.size(); ++i) {
        const std::string what = std::string(collectiveName(coll)) + " " + apart[i].name + " on " + shape;
        EXPECT_EQ(apart[i].predictedSeconds, inPlace[i].predictedSeconds) << what;
        EXPECT_EQ(apart[i].calledSeconds, apart[i].predictedSeconds) << what;
        EXPECT_LE(inPlace[i].calledSeconds, apart[i].calledSeconds) << what;
        if (coll == Collective::kAllGather && (apart[i].name == "ring" || apart[i].name == "fulllane")) {
          EXPECT_LT(inPlace[i].calledSeconds, apart[i].calledSeconds) << what << ": its own block's copy";
        }
      }
      if (coll != Collective::kAllGather || p != 2) continue;
      // The ring allgather on 2 ranks by hand: one step of a block and no copy of its own. Each
      // rank's buffers hold 4 MiB in place (the receive buffer), 6 out of place: on these curves,
      // which rise with the working set, the smaller one's costs; on curves that fall (small
      // calls' overheads), the out-of-place call's.
      const auto ring = std::find_if(inPlace.begin(), inPlace.end(), [](const Candidate& c) { return c.name == "ring"; });
      ASSERT_NE(ring, inPlace.end());
      const LinkCost at = costs.forWorkingSet(2.0 * (4 << 20)).flat;
      EXPECT_NEAR(ring->calledSeconds, at.alpha + at.beta * (2 << 20), 1e-12);
      CostParams falling = costs;
      for (LinkCost* l : {&falling.flat, &falling.node, &falling.lane}) {
        l->curve = BandwidthCurve::of({{1 << 20, 4e-10, 4e-10, -1, 8e-11}, {64 << 20, 1e-10, 1e-10, -1, 2e-11}});
      }
      in.costs = &falling;
      const std::vector<Candidate> overheads = candidatesFor(in, nullptr);
      const auto fallingRing =
          std::find_if(overheads.begin(), overheads.end(), [](const Candidate& c) { return c.name == "ring"; });
      ASSERT_NE(fallingRing, overheads.end());
      const LinkCost apartAt = falling.forWorkingSet(2.0 * (6 << 20)).flat;
      EXPECT_NEAR(fallingRing->calledSeconds, apartAt.alpha + apartAt.beta * (2 << 20), 1e-12);
      in.costs = &costs;
    }
  }
}

// An allgather out of place copies its own block from the send buffer into the receive buffer
// within the rank (Bruck also rotates the gathered buffer): the formula prices those bytes at
// LinkCost::copy, as many as the busiest rank's plan copies, so that calibration can leave them out
// of the level's beta (perf/calibrate.cc) and an allreduce's in-place allgather phase does not
// pay them. In place (a composition's level) there is no own block to copy.
TEST(SelectionCopies, AnAllGatherPricesTheCopiesItsPlanMakes) {
  for (const FlatAlgorithm* f : flatAlgorithmsFor(Collective::kAllGather)) {
    for (int p : {1, 2, 4, 8}) {
     for (bool inPlace : {false, true}) {
      CollectiveArgs a;
      a.coll = Collective::kAllGather;
      a.count = 1000;
      a.type = strataFloat32;
      a.commSize = p;
      a.inPlace = inPlace;
      if (!f->whyUnsupported(a, p).empty()) continue;
      LinkCost c{0, 0, 0};
      c.copy = 1;
      double most = 0;
      for (int r = 0; r < p; ++r) {
        const Plan plan = buildFlatPlan(*f, a, p, r, BuildOptions{});
        double copied = 0;
        for (const Step& st : plan.steps) {
          if (st.kind == StepKind::kCopy) copied += static_cast<double>(st.dst.count) * 4;
        }
        most = std::max(most, copied);
      }
      EXPECT_DOUBLE_EQ(f->cost(a, p, c), most) << f->name << " on " << p << " ranks" << (inPlace ? " in place" : "");
     }
    }
  }
}

// These compositions on one node have no level of one member copying between buffers: the leader
// broadcast's root copies its send buffer inside the node broadcast (priced on the root's side of
// that node op), the leader reduce-scatter's leader scatters the node's sums where the node reduce
// left them, the full-lane scatter's node scatter writes the receive buffers, and the leader
// allreduce's level was in place. No plan has a copy step, and no price holds one.
TEST(SelectionOneNode, CompositionsCopyNothingBetweenTheirSteps) {
  CostParams costs = defaultCostParams();
  const size_t m = 1 << 18;  // floats: 1 MiB
  struct Case {
    Collective coll;
    const char* algo;
  };
  for (const Case& k : {Case{Collective::kBroadcast, "leader"}, Case{Collective::kReduceScatter, "leader"},
                        Case{Collective::kAllReduce, "leader"}, Case{Collective::kScatter, "fulllane"}}) {
    const bool blocks = k.coll == Collective::kReduceScatter || k.coll == Collective::kScatter;
    for (int root : {0, 3}) {
      CollectiveArgs a;
      a.coll = k.coll;
      a.count = blocks ? m / 4 : m;  // reduce-scatter and scatter: per rank
      a.type = strataFloat32;
      a.commSize = 4;
      a.root = specOf(k.coll).rooted ? root : 0;
      Topology topo;
      ASSERT_TRUE(topologyFor("4", 4, 0, &topo).ok());
      const LevelCosts priced = costs.forWorkingSet(4 * rankWorkingSetBytes(a));
      const HierAlgorithm* h = nullptr;
      for (const HierAlgorithm* c : hierAlgorithmsFor(k.coll)) {
        if (std::string(c->name) == k.algo) h = c;
      }
      ASSERT_NE(h, nullptr) << collectiveName(k.coll) << " " << k.algo;
      const double nodeSteps = k.coll == Collective::kBroadcast ? nodeBroadcastCost(4.0 * m, 4, priced.node, true)
                               : k.coll == Collective::kReduceScatter
                                   ? nodeReduceCost(4.0 * m, 4, priced.node) + nodeScatterCost(4.0 * m, 4, priced.node)
                               : k.coll == Collective::kScatter
                                   ? nodeScatterCost(4.0 * m, 4, priced.node)
                                   : nodeReduceCost(4.0 * m, 4, priced.node) + nodeBroadcastCost(4.0 * m, 4, priced.node);
      EXPECT_NEAR(h->cost(a, topo, priced), nodeSteps, nodeSteps * 1e-9) << collectiveName(k.coll) << " " << k.algo;
      for (int rank = 0; rank < 4; ++rank) {
        Topology mine;
        ASSERT_TRUE(topologyFor("4", 4, rank, &mine).ok());
        const Plan plan = buildHierPlan(*h, a, mine, priced);
        for (const Step& st : plan.steps) {
          EXPECT_NE(st.kind, StepKind::kCopy)
              << collectiveName(k.coll) << " " << k.algo << ", root " << a.root << ": rank " << rank << "'s plan copies";
        }
      }
    }
  }
}

// A reduction's formula prices, at gamma, the bytes its busiest rank's plan reduces (each byte of
// a result from k inputs counts k - 1 times) and, at copy, the bytes it copies within the rank:
// calibration fits gamma from these coefficients, and a formula that counts a reduction the plan
// does not make (the circulant allreduce's second sum where p is a power of two) prices the
// algorithm off by that much at every size. Within 1%: blocks are whole 64-byte lines.
// On one rank every candidate's local copy is priced apart (SelectionOneRank above).
TEST(SelectionReductions, AReductionPricesTheReductionsAndCopiesItsPlanMakes) {
  for (Collective coll : {Collective::kAllReduce, Collective::kReduceScatter, Collective::kReduce}) {
    for (const FlatAlgorithm* f : flatAlgorithmsFor(coll)) {
      for (int p : {2, 3, 4, 5, 6, 7, 8, 12}) {
        CollectiveArgs a;
        a.coll = coll;
        a.count = coll == Collective::kReduceScatter ? 1000 : 1000 * p;
        a.type = strataFloat32;
        a.op = strataSum;
        a.commSize = p;
        if (!f->whyUnsupported(a, p).empty()) continue;
        double reducedMost = 0, copiedMost = 0;
        for (int r = 0; r < p; ++r) {
          const Plan plan = buildFlatPlan(*f, a, p, r, BuildOptions{});
          double reduced = 0, copied = 0;
          for (const Step& st : plan.steps) {
            const double bytes = static_cast<double>(st.dst.count) * 4;
            if (st.kind == StepKind::kReduce) reduced += bytes * (st.inputCount - 1);
            if (st.kind == StepKind::kCopy) copied += bytes;
          }
          reducedMost = std::max(reducedMost, reduced);
          copiedMost = std::max(copiedMost, copied);
        }
        LinkCost gamma{0, 0, 1}, copy{0, 0, 0};
        copy.copy = 1;
        EXPECT_NEAR(f->cost(a, p, gamma), reducedMost, 0.01 * reducedMost)
            << collectiveName(coll) << " " << f->name << " on " << p << " ranks: bytes reduced";
        EXPECT_NEAR(f->cost(a, p, copy), copiedMost, 0.01 * copiedMost)
            << collectiveName(coll) << " " << f->name << " on " << p << " ranks: bytes copied";
      }
    }
  }
}

}  // namespace
}  // namespace strata::verify
