#include "perf/calibration_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace strata::perf {
namespace {

constexpr size_t kLargeBytes = 32 << 10;  // from here up a size is a point of the curve
constexpr double kLeastAloneRatio = 0.02;  // alone below 1/50 of busy: no measurement (fitAlone)

// min sum w_i (a_i . x - t_i)^2 over x >= 0, for up to three unknowns: the normal equations, and an
// unknown that comes out negative is held at 0 and the rest fitted again (a plain active set). Rows
// are (coefficients, target, weight); an unknown without information stays 0.
template <size_t N>
std::array<double, N> nonNegativeFit(const std::vector<std::array<double, N + 2>>& rows) {
  std::array<bool, N> free;
  free.fill(true);
  for (size_t attempt = 0; attempt <= N; ++attempt) {
    std::array<double, N> x{};
    std::vector<size_t> idx;
    for (size_t k = 0; k < N; ++k) {
      if (free[k]) idx.push_back(k);
    }
    const size_t n = idx.size();
    if (n == 0) return x;
    double M[N][N + 1] = {};
    for (const auto& r : rows) {
      for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j) M[i][j] += r[N + 1] * r[idx[i]] * r[idx[j]];
        M[i][n] += r[N + 1] * r[idx[i]] * r[N];
      }
    }
    size_t drop = N;
    for (size_t col = 0; col < n && drop == N; ++col) {  // Gauss-Jordan, partial pivoting
      size_t piv = col;
      for (size_t r = col + 1; r < n; ++r) {
        if (std::fabs(M[r][col]) > std::fabs(M[piv][col])) piv = r;
      }
      if (std::fabs(M[piv][col]) < 1e-300) {
        drop = idx[col];
        break;
      }
      for (size_t k = 0; k <= n; ++k) std::swap(M[col][k], M[piv][k]);
      for (size_t r = 0; r < n; ++r) {
        if (r == col) continue;
        const double f = M[r][col] / M[col][col];
        for (size_t k = col; k <= n; ++k) M[r][k] -= f * M[col][k];
      }
    }
    if (drop == N) {
      for (size_t i = 0; i < n; ++i) x[idx[i]] = M[i][n] / M[i][i];
      for (size_t k : idx) {
        if (x[k] < 0 && (drop == N || x[k] < x[drop])) drop = k;
      }
      if (drop == N) return x;
    }
    free[drop] = false;
  }
  return {};
}

double modelled(const std::array<double, 3>& coef, const LinkCost& c) {
  return coef[0] * c.alpha + coef[1] * c.beta + coef[2] * c.gamma;
}
double modelled(const Sample& s, const LinkCost& c) { return modelled(s.coef, c); }

// Whether a size's samples tell alpha from beta: two of them whose alpha coefficients stand in
// different ratios to their beta coefficients (a ring's p-1 steps against recursive doubling's
// log2 p for the same bytes), and alpha's part of the time large enough to rise above the noise
// (at least kAlphaShare of the size's time at the held alpha; beyond that the curve holds the
// last alpha it could tell). Alpha comes from the two algorithms' difference, (p-1 - log2 p)
// alphas: on 8 ranks 4 of the ring's 7, so a 5% noise on the times is a 5% / (4/7 share) error on
// alpha, 35% at a share of 1/4 and 90% at 1/10 (on the development VM a tenth let 1 MiB fit
// alphas from 1.2 to 19 us from one calibration to the next; a quarter stops at 256 KiB).
constexpr double kAlphaShare = 0.25;
bool separatesAlpha(const std::vector<const Sample*>& group, double heldAlpha) {
  double lo = HUGE_VAL, hi = 0, share = 0;
  for (const Sample* s : group) {
    if (s->coef[1] <= 0) continue;
    const double r = s->coef[0] / s->coef[1];
    lo = std::min(lo, r), hi = std::max(hi, r);
    share = std::max(share, s->coef[0] * heldAlpha / s->seconds);
  }
  return hi > 1.25 * lo && share >= kAlphaShare;
}

// The working set of the largest size below the curve's (0 without one): where a curve that
// carries alpha hands over to the small sizes' alpha.
double smallWorkingSetOf(const std::vector<Sample>& samples) {
  double ws = 0;
  for (const Sample& s : samples) {
    if (s.seconds > 0 && s.bytes < kLargeBytes) ws = std::max(ws, s.workingSet);
  }
  return ws;
}

}  // namespace

namespace {

// The copy costs as a curve over the working set (in beta's place), for interpolation; smoothed as
// the levels' curves are, here, so the samples pay the copy the level's curve then carries.
BandwidthCurve copyCurve(const std::map<double, double>& copies) {
  BandwidthCurve c;
  for (const auto& [ws, perByte] : copies) c.add({ws, perByte, 0});
  smoothCurve(&c);
  return c;
}

}  // namespace

std::map<double, double> separateCopies(std::vector<Sample>* samples) {
  std::map<double, double> copies;
  for (const Sample& c : *samples) {
    // The curve's sizes only: below them the tuner holds the first point's copy, and a few bytes'
    // copy there is timing's fixed costs, not a cost per byte.
    // A copy timed longer than the whole call that makes it measured something else (fid50's
    // second 2-rank calibration: an 8 MiB copy at 7.8 ms inside a 16 MiB allgather of 1.4 ms,
    // 13x its neighbours' cost per byte, priced that round's 16 MiB broadcasts at 6-11x their
    // times): its neighbours' costs cover its working set.
    const bool longerThanItsCall = c.callSeconds > 0 && c.seconds > c.callSeconds;
    if (c.copyOnly && c.seconds > 0 && c.copyBytes > 0 && c.bytes >= kLargeBytes && !longerThanItsCall) {
      copies[c.workingSet] = c.seconds / c.copyBytes;
    }
  }
  samples->erase(std::remove_if(samples->begin(), samples->end(), [](const Sample& c) { return c.copyOnly; }),
                 samples->end());
  if (copies.empty()) return copies;
  const BandwidthCurve curve = copyCurve(copies);
  for (Sample& s : *samples) {
    if (!(s.copyBytes > 0)) continue;
    double perByte = 0, unused = 0;
    curve.read(s.workingSet, &perByte, &unused);
    s.fixed = s.copyBytes * perByte;
    s.seconds -= s.fixed;
  }
  return copies;
}

void attachCopies(LinkCost* fitted, const std::map<double, double>& copies) {
  if (copies.empty() || fitted->curve.empty()) return;
  const BandwidthCurve curve = copyCurve(copies);
  for (size_t k = 0; k < fitted->curve.size; ++k) {
    double perByte = 0, unused = 0;
    curve.read(fitted->curve.points[k].workingSet, &perByte, &unused);
    fitted->curve.points[k].copy = perByte;
  }
}

LinkCost fitLevel(const std::vector<Sample>& samples) {
  std::map<size_t, std::vector<const Sample*>> bySize;  // the curve's sizes
  std::vector<const Sample*> small;
  for (const Sample& s : samples) {
    if (s.seconds <= 0) continue;
    if (s.bytes >= kLargeBytes) bySize[s.bytes].push_back(&s);
    else small.push_back(&s);
  }
  const double smallWorkingSet = smallWorkingSetOf(samples);
  LinkCost f{0, 0, 0};
  if (bySize.empty()) {  // no curve: one alpha and beta (and gamma) for every size
    std::vector<std::array<double, 5>> rows;
    for (const Sample* s : small) rows.push_back({s->coef[0], s->coef[1], s->coef[2], s->seconds, 1 / (s->seconds * s->seconds)});
    const std::array<double, 3> x = nonNegativeFit<3>(rows);
    f.alpha = x[0], f.beta = x[1], f.gamma = x[2];
    return f;
  }
  for (int round = 0; round < 3; ++round) {
    // Each size: beta and gamma with alpha held at the small sizes', or all three where its
    // samples tell alpha apart (then the curve carries alpha: from the small sizes' up to its
    // first point, held from the last size that told it).
    f.curve = BandwidthCurve{};
    double held = f.alpha;
    bool anySeparated = false;
    for (const auto& [bytes, group] : bySize) {
      double workingSet = 0;
      for (const Sample* s : group) workingSet += s->workingSet / static_cast<double>(group.size());
      if (round > 0 && separatesAlpha(group, held)) {
        std::vector<std::array<double, 5>> rows;
        for (const Sample* s : group) rows.push_back({s->coef[0], s->coef[1], s->coef[2], s->seconds, 1 / (s->seconds * s->seconds)});
        // Noise that pins alpha at an edge leaves it within reason: 1/4 to 4x the small sizes'.
        held = std::clamp(nonNegativeFit<3>(rows)[0], f.alpha / 4, f.alpha * 4);
        anySeparated = true;
      }
      // Beta and gamma at the alpha kept (where it was fitted and not clamped, the same as the
      // three-parameter fit's).
      std::vector<std::array<double, 4>> rows;
      for (const Sample* s : group) {
        rows.push_back({s->coef[1], s->coef[2], s->seconds - s->coef[0] * held, 1 / (s->seconds * s->seconds)});
      }
      const std::array<double, 2> x = nonNegativeFit<2>(rows);
      f.curve.add({workingSet, x[0], x[1], held});
    }
    if (anySeparated && smallWorkingSet > 0 && smallWorkingSet < f.curve.points[0].workingSet) {
      // The small sizes' alpha up to the largest of them, the first point's beta and gamma held.
      const BandwidthCurve::Point& first = f.curve.points[0];
      f.curve.add({smallWorkingSet, first.beta, first.gamma, f.alpha});
    }
    if (!anySeparated) {
      for (size_t k = 0; k < f.curve.size; ++k) f.curve.points[k].alpha = -1;
    }
    f.beta = f.curve.points[0].beta;
    f.gamma = f.curve.points[0].gamma;
    std::vector<std::array<double, 3>> rows;
    for (const Sample* s : small) {
      const LinkCost c = f.forWorkingSet(s->workingSet);
      rows.push_back({s->coef[0], s->seconds - s->coef[1] * c.beta - s->coef[2] * c.gamma, 1 / (s->seconds * s->seconds)});
    }
    f.alpha = nonNegativeFit<1>(rows)[0];
    if (f.curve.carriesAlpha() && f.curve.points[0].workingSet == smallWorkingSet) f.curve.points[0].alpha = f.alpha;
  }
  return f;
}

HostShare fitAlone(const std::vector<Sample>& alone, const LinkCost& busy, double share) {
  HostShare h;
  if (alone.empty() || share >= 1) return h;
  h.share = share;
  LinkCost plain = busy;
  plain.alone = HostShare{};
  // Alpha's ratio from the small sizes and, per size from 32 KiB up, one ratio for beta and gamma
  // together (the size's alone times, less alpha's part, over the busy level's byte costs for the
  // same calls), each fitted with the other held, three times round. One ratio per size, not one
  // each: the reductions' share of a call is too small for its own ratio to rise above the
  // machine's noise. Ratios the noise pinned at an edge stay within reason: alpha's within 1/50 and
  // 4x, beta's and gamma's at most 1; and a size whose alone time the busy costs already exceed
  // with its alone part at nothing tells no ratio (the two fits disagree there; a ratio of 1/50
  // had made the 2-rank root-centred node steps nearly free from 32 MiB of working set on the Zen 5
  // VM): it leaves the curve, which its neighbours' ratios span.
  for (int round = 0; round < 3; ++round) {
    std::vector<std::array<double, 3>> smallRows;
    for (const Sample& s : alone) {
      if (s.seconds <= 0 || s.bytes >= kLargeBytes) continue;
      const LinkCost c = plain.forWorkingSet(s.workingSet);
      double rb = 1, rg = 1;
      if (!h.ratios.empty()) h.ratios.read(s.workingSet, &rb, &rg);
      const std::array<double, 3> z = s.coefZero, k = {s.coef[0] - z[0], s.coef[1] - z[1], s.coef[2] - z[2]};
      smallRows.push_back({k[0] * c.alpha, s.seconds - modelled(z, c) - rb * k[1] * c.beta - rg * k[2] * c.gamma,
                           1 / (s.seconds * s.seconds)});
    }
    if (!smallRows.empty()) h.alpha = std::clamp(nonNegativeFit<1>(smallRows)[0], kLeastAloneRatio, 4.0);
    // Where the busy curve carries alpha, the one alone stays the small sizes' (what grows with the
    // size is a busy host's: its processes' turns on the cores), so its ratio is per working set.
    auto alphaRatio = [&](const LinkCost& c) {
      return plain.curve.carriesAlpha() && c.alpha > 0 ? h.alpha * plain.alpha / c.alpha : -1.0;
    };
    std::map<size_t, std::array<double, 4>> bySize;  // bytes -> (alone seconds less alpha, busy byte costs, working set, alpha ratio)
    for (const Sample& s : alone) {
      if (s.seconds <= 0 || s.bytes < kLargeBytes) continue;
      const LinkCost c = plain.forWorkingSet(s.workingSet);
      std::array<double, 4>& acc = bySize[s.bytes];
      acc[3] = alphaRatio(c);
      const std::array<double, 3> z = s.coefZero;
      acc[0] += s.seconds - modelled(z, c) - (acc[3] >= 0 ? acc[3] : h.alpha) * (s.coef[0] - z[0]) * c.alpha;
      acc[1] += (s.coef[1] - z[1]) * c.beta + (s.coef[2] - z[2]) * c.gamma;
      acc[2] = s.workingSet;
    }
    h.ratios = BandwidthCurve{};
    for (const auto& [bytes, acc] : bySize) {
      // At most busy's: fewer busy processes never make a byte dearer (a node reduce at 512 MiB of
      // working set came out 1.9x on 8 processes of the AMD VM, its alone and busy timings apart).
      if (acc[1] > 0 && acc[0] / acc[1] < kLeastAloneRatio) continue;
      const double r = acc[1] > 0 ? std::min(acc[0] / acc[1], 1.0) : 1.0;
      h.ratios.add({acc[2], r, r, acc[3]});
    }
    if (h.ratios.carriesAlpha()) {  // the small sizes' ratio up to the largest of them, as the busy curve
      const double smallWorkingSet = smallWorkingSetOf(alone);
      const BandwidthCurve::Point first = h.ratios.points[0];
      if (smallWorkingSet > 0 && smallWorkingSet < first.workingSet) {
        h.ratios.add({smallWorkingSet, first.beta, first.gamma, h.alpha});
      }
    }
  }
  return h;
}

double fittedPrice(const Sample& s, const LinkCost& fitted) {
  return modelled(s.coef, fitted.forWorkingSet(s.workingSet)) + s.fixed;
}

namespace {

void printSamples(const std::vector<Sample>& samples, const LinkCost& fitted, double share) {
  for (const Sample& s : samples) {
    // Alone: what stays at the busy costs (coefZero) plus the rest at the alone ones.
    const LinkCost busy = fitted.forWorkingSet(s.workingSet);
    const std::array<double, 3> rest = {s.coef[0] - s.coefZero[0], s.coef[1] - s.coefZero[1], s.coef[2] - s.coefZero[2]};
    const double model = modelled(s.coefZero, busy) + modelled(rest, busy.atShare(share));
    const double measured = s.seconds + s.fixed, priced = model + s.fixed;
    std::printf("#         %-40s measured %10.2f us  model %10.2f us  (%+.0f%%)\n", s.what.c_str(), measured * 1e6,
                priced * 1e6, (priced / measured - 1) * 100);
  }
}

}  // namespace

void report(const char* level, const LinkCost& fitted, const std::vector<Sample>& samples) {
  auto rate = [](double secondsPerByte) { return secondsPerByte > 0 ? 1e-9 / secondsPerByte : 0.0; };
  std::printf("#   %-5s alpha %7.3f us; beta/gamma%s by the working set:", level, fitted.alpha * 1e6,
              fitted.curve.carriesCopy() ? " (and a copy within a rank)" : "");
  for (const BandwidthCurve::Point& p : fitted.curve) {
    std::printf("  %.0f KiB %.2f/%.2f GB/s", p.workingSet / 1024, rate(p.beta), rate(p.gamma));
    if (fitted.curve.carriesAlpha()) std::printf(" %.2f us", p.alpha * 1e6);
    if (fitted.curve.carriesCopy()) std::printf(" copy %.2f GB/s", rate(p.copy));
  }
  if (fitted.curve.empty()) std::printf("  %.2f/%.2f GB/s", rate(fitted.beta), rate(fitted.gamma));
  std::printf("\n");
  printSamples(samples, fitted, 1);
}

void reportAlone(const char* level, const LinkCost& fitted, const std::vector<Sample>& samples) {
  const HostShare& h = fitted.alone;
  std::printf("#   %-5s alone (%.0f%% of the processes busy): alpha x%.2f; beta/gamma of busy by the working set:", level,
              h.share * 100, h.alpha);
  for (const BandwidthCurve::Point& p : h.ratios) {
    std::printf("  %.0f KiB x%.2f/x%.2f", p.workingSet / 1024, p.beta, p.gamma);
    if (h.ratios.carriesAlpha()) std::printf(" alpha x%.2f", p.alpha);
  }
  std::printf("\n");
  printSamples(samples, fitted, h.share);
}

BandwidthCurve fitRewrite(const std::vector<Sample>& samples, Rewrite kind) {
  auto bytesOf = [kind](const Sample& s) { return kind == Rewrite::kCopy ? s.rewritten.copied : s.rewritten.reduced; };
  std::map<size_t, std::pair<const Sample*, const Sample*>> bySize;  // bytes -> (fewest, most rewritten)
  for (const Sample& s : samples) {
    if (s.seconds <= 0) continue;
    auto& [lo, hi] = bySize[s.bytes];
    if (lo == nullptr || bytesOf(s) < bytesOf(*lo)) lo = &s;
    if (hi == nullptr || bytesOf(s) > bytesOf(*hi)) hi = &s;
  }
  BandwidthCurve c;
  for (const auto& [bytes, pair] : bySize) {
    const auto [lo, hi] = pair;
    const double bytesRewritten = bytesOf(*hi) - bytesOf(*lo);
    if (!(bytesRewritten > 0)) continue;
    BandwidthCurve::Point pt;
    pt.workingSet = lo->workingSet;
    pt.rewrite = std::max(0.0, (hi->seconds - lo->seconds) / bytesRewritten);
    c.add(pt);
  }
  return c;
}

void setRewrite(const BandwidthCurve& rewrite, LinkCost* level, Rewrite kind) {
  if (rewrite.empty()) return;
  double LinkCost::*cost = kind == Rewrite::kCopy ? &LinkCost::copyRewrite : &LinkCost::rewrite;
  double BandwidthCurve::Point::*point = kind == Rewrite::kCopy ? &BandwidthCurve::Point::copyRewrite
                                                                 : &BandwidthCurve::Point::rewrite;
  auto at = [&](double ws) {
    double beta = 0, gamma = 0, value = 0;
    rewrite.read(ws, &beta, &gamma, nullptr, nullptr, &value);
    return value;
  };
  if (level->curve.empty()) {
    level->*cost = at(rewrite.points[0].workingSet);
    return;
  }
  for (size_t k = 0; k < level->curve.size; ++k) {
    BandwidthCurve::Point& pt = level->curve.points[k];
    pt.*point = at(pt.workingSet);
  }
  level->*cost = level->curve.points[0].*point;
}

void reportRewrite(const char* level, const LinkCost& fitted, const std::vector<Sample>& reductions,
                   const std::vector<Sample>& copies) {
  for (bool copy : {false, true}) {
    std::printf("#   %-5s rewrite (ns per byte %s writes where a peer read it) by the working set:", level,
                copy ? "a copy" : "a reduction");
    for (const BandwidthCurve::Point& p : fitted.curve) {
      std::printf("  %.0f KiB %.3f", p.workingSet / 1024, (copy ? std::max(p.copyRewrite, 0.0) : p.rewrite) * 1e9);
    }
    if (fitted.curve.empty()) std::printf("  %.3f", (copy ? fitted.rewriteOfACopy() : fitted.rewrite) * 1e9);
    std::printf("\n");
    for (const Sample& s : copy ? copies : reductions) {
      std::printf("#         %-40s measured %10.2f us  rewrites %10.0f B\n", s.what.c_str(), (s.seconds + s.fixed) * 1e6,
                  copy ? s.rewritten.copied : s.rewritten.reduced);
    }
  }
}

void smoothCurve(BandwidthCurve* curve) {
  if (curve->size < 3) return;
  const BandwidthCurve raw = *curve;
  auto median3 = [&raw](size_t k, double BandwidthCurve::Point::*field) {
    double v[3] = {raw.points[k - 1].*field, raw.points[k].*field, raw.points[k + 1].*field};
    std::sort(v, v + 3);
    return v[1];
  };
  const bool alpha = raw.carriesAlpha(), copyRewrite = raw.carriesCopyRewrite();
  for (size_t k = 1; k + 1 < raw.size; ++k) {
    BandwidthCurve::Point& p = curve->points[k];
    p.beta = median3(k, &BandwidthCurve::Point::beta);
    p.gamma = median3(k, &BandwidthCurve::Point::gamma);
    p.rewrite = median3(k, &BandwidthCurve::Point::rewrite);
    if (alpha) p.alpha = median3(k, &BandwidthCurve::Point::alpha);
    if (copyRewrite) p.copyRewrite = median3(k, &BandwidthCurve::Point::copyRewrite);
  }
}

}  // namespace strata::perf
