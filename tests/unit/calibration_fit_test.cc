// strata-perf --calibrate's fit (perf/calibration_fit.h) on samples made from known parameters:
// exact samples give the parameters back, each size a point of the curve; a level whose speed
// drifts from size to size (both calls of a size alike, as they are measured back to back) keeps
// its reduction's price; a level measured alone gives its fractions of the busy costs back.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "kernels/plan/node_costs.h"
#include "perf/calibration_fit.h"

namespace strata::perf {
namespace {

const std::vector<size_t> kSizes = {64, 1024, 4096, 32 << 10, 128 << 10, 1 << 20, 8 << 20, 64 << 20};

// The level's true costs: a knee between 1 and 8 MiB (the working set of two members).
LinkCost truth() {
  LinkCost c{3e-7, 0, 0};
  c.curve = BandwidthCurve::of({{1, 6e-11, 4e-11}, {2 * 1.5 * (1 << 20), 6e-11, 4e-11}, {2 * 1.5 * (8 << 20), 1.8e-10, 6e-11}});
  return c;
}

// A node reduce-scatter and allgather of 2 members at each size, as the calibration measures
// them; `drift[k]` scales both calls of size k, `share` prices them at that share of the host.
std::vector<Sample> nodeSamples(const LinkCost& level, const std::vector<double>& drift, double share = 1) {
  std::vector<Sample> out;
  for (size_t k = 0; k < kSizes.size(); ++k) {
    const double m = static_cast<double>(kSizes[k]);
    const double workingSet = 2 * (m + m / 2);
    for (const bool reduces : {false, true}) {
      auto cost = [&](const LinkCost& c) { return reduces ? nodeReduceScatterCost(m, 2, c) : nodeAllGatherCost(m, 2, c); };
      Sample s;
      s.coef = {cost({1, 0, 0}), cost({0, 1, 0}), cost({0, 0, 1})};
      s.seconds = cost(level.forWorkingSet(workingSet).atShare(share)) * drift[k];
      s.bytes = kSizes[k];
      s.workingSet = workingSet;
      s.what = std::string(reduces ? "reducescatter " : "allgather ") + std::to_string(kSizes[k]);
      out.push_back(s);
    }
  }
  return out;
}

TEST(CalibrationFit, ExactSamplesGiveTheirParametersBack) {
  const LinkCost t = truth();
  const LinkCost f = fitLevel(nodeSamples(t, std::vector<double>(kSizes.size(), 1.0)));
  EXPECT_NEAR(f.alpha / t.alpha, 1, 0.01);
  ASSERT_EQ(f.curve.size, 5u) << "a point per size from 32 KiB up";
  for (const BandwidthCurve::Point& p : f.curve) {
    const LinkCost at = t.forWorkingSet(p.workingSet);
    EXPECT_NEAR(p.beta / at.beta, 1, 0.01) << p.workingSet;
    EXPECT_NEAR(p.gamma / at.gamma, 1, 0.01) << p.workingSet;
  }
  EXPECT_DOUBLE_EQ(f.beta, f.curve.points[0].beta);
  EXPECT_FALSE(f.curve.carriesAlpha()) << "2 members' calls have one alpha per beta: alpha is the small sizes'";
}

// A flat level of 8 ranks whose per-message cost doubles from 32 KiB up (as 8 processes on 2 cores
// do), measured with a ring (7 steps) and recursive doubling and halving (3 steps) at each size:
// the fit tells the two apart where alpha is a quarter of the time or more, and holds the last alpha
// it told beyond; the small sizes keep theirs.
const int kRanks = 8;
double alphaAt(double m) { return m < (32 << 10) ? 4e-6 : 8e-6; }
double betaAt(double m) { return m <= (128 << 10) ? 5e-10 : 1e-9; }
constexpr double kGamma = 2e-10;

// Ring and recursive-doubling calls at each size (`stepCounts`: their steps) on kRanks ranks, their
// alpha times `alphaScale` (its small sizes' value at every size with `alphaFlat`), their bytes'
// cost times `byteScale`.
std::vector<Sample> stepSamples(std::initializer_list<int> stepCounts, double alphaScale = 1, bool alphaFlat = false,
                                double byteScale = 1) {
  const int p = kRanks;
  std::vector<Sample> samples;
  for (size_t bytes : kSizes) {
    const double m = static_cast<double>(bytes);
    for (const int steps : stepCounts) {
      for (const bool reduces : {false, true}) {
        Sample s;
        s.coef = {static_cast<double>(steps), (p - 1.0) / p * m, reduces ? (p - 1.0) / p * m : 0};
        s.seconds = s.coef[0] * alphaScale * (alphaFlat ? alphaAt(0) : alphaAt(m)) +
                    byteScale * (s.coef[1] * betaAt(m) + s.coef[2] * kGamma);
        s.bytes = bytes;
        s.workingSet = p * 2 * m;
        s.what = std::to_string(steps) + (reduces ? " reducescatter " : " allgather ") + std::to_string(bytes);
        samples.push_back(s);
      }
    }
  }
  return samples;
}

TEST(CalibrationFit, AlgorithmsOfDifferentStepCountsSeparateAlphaPerSize) {
  const int p = kRanks;
  const LinkCost f = fitLevel(stepSamples({p - 1, 3}));
  EXPECT_NEAR(f.alpha / 4e-6, 1, 0.01);
  ASSERT_TRUE(f.curve.carriesAlpha());
  for (size_t bytes : kSizes) {
    const double m = static_cast<double>(bytes);
    const LinkCost at = f.forWorkingSet(p * 2 * m);
    if (bytes < (32 << 10)) {
      EXPECT_NEAR(at.alpha / 4e-6, 1, 0.01) << bytes << ": the small sizes' alpha";
      continue;
    }
    EXPECT_NEAR(at.alpha / 8e-6, 1, 0.01) << bytes;
    EXPECT_NEAR(at.beta / betaAt(m), 1, 0.01) << bytes;
    EXPECT_NEAR(at.gamma / kGamma, 1, 0.01) << bytes;
  }
}

// A pair of the 8 ranks alone (one step) whose alpha stays the small sizes' x1.5 at every size and
// whose bytes move at half the busy cost: the fit's alone ratios give both back, alpha's per
// working set against the busy curve's.
TEST(CalibrationFit, AloneAlphaStaysTheSmallSizesWhereTheBusyOneGrows) {
  const LinkCost busy = fitLevel(stepSamples({kRanks - 1, 3}));
  LinkCost f = busy;
  f.alone = fitAlone(stepSamples({1}, 1.5, true, 0.5), busy, 0.25);
  ASSERT_TRUE(f.alone.ratios.carriesAlpha());
  EXPECT_NEAR(f.alone.alpha, 1.5, 0.01);
  for (const Sample& s : stepSamples({1}, 1.5, true, 0.5)) {
    const LinkCost c = f.forWorkingSet(s.workingSet).atShare(0.25);
    EXPECT_NEAR(c.alpha / (1.5 * alphaAt(0)), 1, 0.01) << s.what;
    const double model = s.coef[0] * c.alpha + s.coef[1] * c.beta + s.coef[2] * c.gamma;
    EXPECT_NEAR(model / s.seconds, 1, 0.01) << s.what;
  }
}

// A 2-rank ring allgather out of place also copies its own block (m/2) within the rank; that copy
// timed on its own (a copyOnly sample) prices it: separated, beta and gamma come back as the
// level's messages cost them, and the copy as the level's curve; the copy samples leave the
// level's samples. Without them nothing changes. Below the curve's sizes a copy timed tells no
// cost per byte (its time is timing's fixed costs): those sizes pay the curve's first copy, as the
// tuner prices them.
TEST(CalibrationFit, ACopyTimedOnItsOwnPricesTheAllGathersOwnBlock) {
  auto copyAt = [](double m) { return m < (1 << 20) ? 2e-11 : 8e-11; };
  std::vector<Sample> samples;
  for (size_t bytes : kSizes) {
    const double m = static_cast<double>(bytes), ws = 2 * 1.5 * m;
    for (int kind = 0; kind < 4; ++kind) {  // allgather out of place, in place, reduce-scatter; the copy
      Sample s;
      s.coef = {1, m / 2, kind == 2 ? m / 2 : 0};
      s.copyBytes = kind == 0 || kind == 3 ? m / 2 : 0;
      s.inPlace = kind == 1;
      s.seconds = 4e-6 + s.coef[1] * betaAt(m) + s.coef[2] * kGamma + s.copyBytes * copyAt(m);
      if (kind == 3) {  // small sizes: 0.1 us of fixed costs, which is no cost per byte
        s.coef = {0, 0, 0};
        s.copyOnly = true;
        s.seconds = s.copyBytes * copyAt(m) + (bytes < (32 << 10) ? 1e-7 : 0);
      }
      s.bytes = bytes;
      s.workingSet = ws;
      s.what = std::to_string(kind) + " " + std::to_string(bytes);
      samples.push_back(s);
    }
  }
  std::vector<Sample> untouched;
  for (const Sample& s : samples) {
    if (!s.copyOnly) untouched.push_back(s);
  }
  EXPECT_TRUE(separateCopies(&untouched).empty()) << "no copy timed: no copy told";
  EXPECT_DOUBLE_EQ(untouched[0].fixed, 0);
  const std::map<double, double> copies = separateCopies(&samples);
  ASSERT_EQ(copies.size(), 5u) << "a copy per size of the curve";
  EXPECT_EQ(samples.size(), untouched.size()) << "the copies timed leave the level's samples";
  LinkCost f = fitLevel(samples);
  attachCopies(&f, copies);
  ASSERT_TRUE(f.curve.carriesCopy());
  for (const Sample& s : samples) {
    const double m = static_cast<double>(s.bytes);
    EXPECT_FALSE(s.copyOnly);
    EXPECT_NEAR(s.fixed, s.copyBytes * copyAt(m), 1e-15) << s.what;
    if (s.bytes < (32 << 10)) continue;
    const LinkCost at = f.forWorkingSet(s.workingSet);
    EXPECT_NEAR(at.beta / betaAt(m), 1, 0.01) << s.what;
    EXPECT_NEAR(at.gamma / kGamma, 1, 0.01) << s.what;
    EXPECT_NEAR(at.copy / copyAt(m), 1, 0.01) << s.what;
  }
  // A copy timed longer than the whole call it belongs to tells no cost: its working set takes its
  // neighbours' (the curve's copy there, interpolated in log working set between them).
  std::vector<Sample> withOutlier;
  for (Sample s : samples) withOutlier.push_back(s);
  const size_t middle = kSizes.size() / 2 + 2;  // a size of the curve with neighbours on both sides
  ASSERT_LT(middle + 1, kSizes.size());
  for (size_t k : {middle - 1, middle, middle + 1}) {
    Sample c;
    const double m = static_cast<double>(kSizes[k]);
    c.coef = {0, 0, 0};
    c.copyOnly = true;
    c.bytes = kSizes[k];
    c.workingSet = 3 * m;
    c.copyBytes = m / 2;
    c.callSeconds = 4e-6 + (m / 2) * betaAt(m) + c.copyBytes * copyAt(m);
    c.seconds = k == middle ? 10 * c.callSeconds : c.copyBytes * copyAt(m);
    c.what = "copy " + std::to_string(kSizes[k]);
    withOutlier.push_back(c);
  }
  const std::map<double, double> kept = separateCopies(&withOutlier);
  EXPECT_EQ(kept.count(3.0 * static_cast<double>(kSizes[middle])), 0u) << "the copy longer than its call";
  EXPECT_EQ(kept.size(), 2u);
}

TEST(CalibrationFit, GammaSurvivesALevelWhoseSpeedDriftsBetweenSizes) {
  // The large sizes run 0.6x - 1.5x as long as the parameters say, size by size (both calls of a
  // size alike, as when the machine's speed drifts between sizes): gamma, from each size's pair,
  // stays within the drift's own spread at every point.
  const LinkCost t = truth();
  const LinkCost f = fitLevel(nodeSamples(t, {1.0, 1.0, 1.0, 1.5, 0.6, 1.4, 0.7, 1.0}));
  for (const BandwidthCurve::Point& p : f.curve) {
    const double g = t.forWorkingSet(p.workingSet).gamma;
    EXPECT_GT(p.gamma, 0.5 * g) << p.workingSet;
    EXPECT_LT(p.gamma, 1.6 * g) << p.workingSet;
  }
}

TEST(CalibrationFit, ALevelMeasuredAloneGivesItsFractionsBack) {
  LinkCost t = truth();
  t.alone = HostShare{0.25, 0.5, BandwidthCurve::of({{1e5, 0.3, 0.3}, {1e8, 0.6, 0.6}})};
  const std::vector<double> flat(kSizes.size(), 1.0);
  const LinkCost busy = fitLevel(nodeSamples(t, flat));
  const HostShare h = fitAlone(nodeSamples(t, flat, 0.25), busy, 0.25);
  EXPECT_DOUBLE_EQ(h.share, 0.25);
  EXPECT_NEAR(h.alpha, 0.5, 0.01);
  ASSERT_EQ(h.ratios.size, 5u);
  for (const BandwidthCurve::Point& p : h.ratios) {
    double rb = 0, rg = 0;
    t.alone.ratios.read(p.workingSet, &rb, &rg);
    EXPECT_NEAR(p.beta, rb, 0.01) << p.workingSet;
    EXPECT_EQ(p.beta, p.gamma) << "one ratio per size for beta and gamma";
  }
  EXPECT_EQ(fitAlone({}, busy, 0.25).share, 1) << "never measured alone";
}

// The level `t` timed alone at the share 1/4 as a node reduce is: 40% of every coefficient at the
// busy costs (coefZero), the rest at the alone ones.
std::vector<Sample> rootAloneSamples(const LinkCost& t) {
  std::vector<Sample> alone = nodeSamples(t, std::vector<double>(kSizes.size(), 1.0));
  for (Sample& smp : alone) {
    const LinkCost b = t.forWorkingSet(smp.workingSet), a = b.atShare(0.25);
    smp.coefZero = {0.4 * smp.coef[0], 0.4 * smp.coef[1], 0.4 * smp.coef[2]};
    smp.seconds = 0.4 * (smp.coef[0] * b.alpha + smp.coef[1] * b.beta + smp.coef[2] * b.gamma) +
                  0.6 * (smp.coef[0] * a.alpha + smp.coef[1] * a.beta + smp.coef[2] * a.gamma);
  }
  return alone;
}

// A node reduce timed alone prices its root's side at the alone share and its members' side busier
// (kernels/plan/node_costs.cc): the part its formula keeps at the busy costs (coefZero, here 40%
// of every coefficient) is left out, and the ratios come back as the root's, not a blend of them
// with the members' 1 (0.4 + 0.6 r).
TEST(CalibrationFit, AnAloneSampleKeepsThePartItsFormulaPricesBusy) {
  LinkCost t = truth();
  t.alone = HostShare{0.25, 0.5, BandwidthCurve::of({{1e5, 0.3, 0.3}, {1e8, 0.6, 0.6}})};
  const LinkCost busy = fitLevel(nodeSamples(t, std::vector<double>(kSizes.size(), 1.0)));
  std::vector<Sample> alone = rootAloneSamples(t);
  const HostShare h = fitAlone(alone, busy, 0.25);
  EXPECT_NEAR(h.alpha, 0.5, 0.01);
  ASSERT_EQ(h.ratios.size, 5u);
  for (const BandwidthCurve::Point& p : h.ratios) {
    double rb = 0, rg = 0;
    t.alone.ratios.read(p.workingSet, &rb, &rg);
    EXPECT_NEAR(p.beta, rb, 0.01) << p.workingSet;
  }
}

// A size whose alone timing the part its formula keeps busy already exceeds (the busy fit and the
// alone timing disagree there) tells no ratio: it leaves the curve, and a call there reads its
// neighbours' ratios, not 1/50 (which made a root-centred node step nearly free).
TEST(CalibrationFit, AnAloneSizeFasterThanItsBusyPartTellsNoRatio) {
  LinkCost t = truth();
  t.alone = HostShare{0.25, 0.5, BandwidthCurve::of({{1e5, 0.3, 0.3}, {1e8, 0.6, 0.6}})};
  const LinkCost busy = fitLevel(nodeSamples(t, std::vector<double>(kSizes.size(), 1.0)));
  std::vector<Sample> alone = rootAloneSamples(t);
  for (Sample& smp : alone) {
    if (smp.bytes == (8u << 20)) smp.seconds *= 0.3;  // below its busy part alone
  }
  const HostShare h = fitAlone(alone, busy, 0.25);
  ASSERT_EQ(h.ratios.size, 4u) << "the 8 MiB size leaves the curve";
  double rb = 0, rg = 0, want = 0, unused = 0;
  const double ws = 2 * 1.5 * (8 << 20);
  h.ratios.read(ws, &rb, &rg);
  t.alone.ratios.read(ws, &want, &unused);
  EXPECT_GT(rb, 0.2) << "its neighbours' ratios, not the floor, at working set " << ws;
  EXPECT_NEAR(rb, want, 0.1) << "at working set " << ws;
}

// Pairs of one algorithm out of place and in place (its plan rewriting m bytes in place, none out
// of place): the rewrite cost comes back per working set where in place is slower, 0 where in place
// ran faster (its smaller working set), and the level's curve reads it at its own points.
TEST(CalibrationFit, TheRewriteCostComesFromInPlaceAgainstOutOfPlace) {
  std::vector<Sample> pairs;
  const std::vector<std::pair<double, double>> sizes = {{65536, 2e-10}, {1 << 20, 5e-11}, {16 << 20, -3e-11}};
  for (const auto& [m, perByte] : sizes) {
    for (const bool inPlace : {false, true}) {
      Sample s;
      s.coef = {1, m, m};
      s.bytes = static_cast<size_t>(m);
      s.workingSet = 4 * m;
      s.rewritten.reduced = inPlace ? m : 0;
      s.seconds = 1e-6 + 1e-10 * m + (inPlace ? perByte * m : 0);
      s.what = inPlace ? "in place" : "out of place";
      pairs.push_back(s);
    }
  }
  const BandwidthCurve r = fitRewrite(pairs, Rewrite::kReduction);
  EXPECT_TRUE(fitRewrite(pairs, Rewrite::kCopy).empty()) << "the pairs rewrite by reducing alone";
  ASSERT_EQ(r.size, 3u);
  EXPECT_NEAR(r.points[0].rewrite, 2e-10, 1e-15);
  EXPECT_NEAR(r.points[1].rewrite, 5e-11, 1e-15);
  EXPECT_EQ(r.points[2].rewrite, 0) << "in place ran faster: no rewrite cost";
  LinkCost level{3e-7, 0, 0};
  level.curve = BandwidthCurve::of({{4 * 65536, 6e-11, 4e-11}, {4.0 * (1 << 20), 6e-11, 4e-11}, {4.0 * (16 << 20), 1.8e-10, 6e-11}});
  setRewrite(r, &level, Rewrite::kReduction);
  EXPECT_NEAR(level.forWorkingSet(4 * 65536).rewrite, 2e-10, 1e-15);
  EXPECT_NEAR(level.forWorkingSet(4.0 * (1 << 20)).rewrite, 5e-11, 1e-15);
  EXPECT_EQ(level.forWorkingSet(1e9).rewrite, 0);
  EXPECT_NEAR(level.forWorkingSet(4 * 65536).rewriteOfACopy(), 2e-10, 1e-15) << "no copy's cost measured: a reduction's";
  // A copy's cost, fitted from pairs that rewrite by copying, beside it.
  for (Sample& s : pairs) {
    s.rewritten = RewrittenBytes{0, s.rewritten.reduced};
    s.seconds = 1e-6 + 1e-10 * static_cast<double>(s.bytes) + s.rewritten.copied * 4e-11;
  }
  setRewrite(fitRewrite(pairs, Rewrite::kCopy), &level, Rewrite::kCopy);
  EXPECT_NEAR(level.forWorkingSet(4 * 65536).rewrite, 2e-10, 1e-15) << "a reduction's kept";
  EXPECT_NEAR(level.forWorkingSet(4 * 65536).copyRewrite, 4e-11, 1e-15);
  EXPECT_NEAR(level.forWorkingSet(1e9).rewriteOfACopy(), 4e-11, 1e-15);
  EXPECT_TRUE(fitRewrite(nodeSamples(truth(), std::vector<double>(kSizes.size(), 1.0)), Rewrite::kReduction).empty())
      << "samples that rewrite nothing tell nothing";
}

// A curve's point that both neighbours disagree with gives way to their median, field by field; a
// knee two points agree on, the ends, and the copy (smoothed where it is measured) stay.
TEST(CalibrationFit, APointBothNeighboursDisagreeWithGivesWay) {
  BandwidthCurve c;
  const double beta[] = {3e-10, 3e-10, 9e-10, 3e-10, 6e-10, 6e-10, 1e-10};
  const double gamma[] = {1e-10, 1e-10, 1e-10, 1e-10, 1e-10, 2e-11, 2e-10};
  const double alpha[] = {5e-6, 5e-6, 5e-6, 3e-5, 6e-6, 6e-6, 6e-6};
  for (int k = 0; k < 7; ++k) {
    BandwidthCurve::Point p;
    p.workingSet = 65536.0 * (1 << k);
    p.beta = beta[k];
    p.gamma = gamma[k];
    p.alpha = alpha[k];
    p.rewrite = k == 2 ? 4e-10 : 0;
    p.copy = k == 2 ? 9e-10 : 1e-10;
    ASSERT_TRUE(c.add(p));
  }
  smoothCurve(&c);
  const double betaOut[] = {3e-10, 3e-10, 3e-10, 6e-10, 6e-10, 6e-10, 1e-10};
  const double gammaOut[] = {1e-10, 1e-10, 1e-10, 1e-10, 1e-10, 1e-10, 2e-10};
  const double alphaOut[] = {5e-6, 5e-6, 5e-6, 6e-6, 6e-6, 6e-6, 6e-6};
  for (size_t k = 0; k < 7; ++k) {
    EXPECT_EQ(c.points[k].workingSet, 65536.0 * (1 << k));
    EXPECT_EQ(c.points[k].beta, betaOut[k]) << "point " << k;
    EXPECT_EQ(c.points[k].gamma, gammaOut[k]) << "point " << k;
    EXPECT_EQ(c.points[k].alpha, alphaOut[k]) << "point " << k;
    EXPECT_EQ(c.points[k].rewrite, 0) << "point " << k;
    EXPECT_EQ(c.points[k].copy, k == 2 ? 9e-10 : 1e-10) << "the copy is smoothed where it is measured";
  }
  // Two points and fewer have no interior point.
  BandwidthCurve two = BandwidthCurve::of({{1, 1e-10, 0}, {2, 9e-10, 0}});
  smoothCurve(&two);
  EXPECT_EQ(two.points[1].beta, 9e-10);
}

}  // namespace
}  // namespace strata::perf
