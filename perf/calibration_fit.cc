#include "perf/calibration_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace strata::perf {
namespace {

constexpr size_t kLargeBytes = 64 << 10;

// The unknowns of a level: alpha, then beta and gamma in cache, then beta and gamma streaming.
constexpr size_t kUnknowns = 5;
using Vec = std::array<double, kUnknowns>;
using Mask = std::array<bool, kUnknowns>;

// A sample's coefficients for the five unknowns: its formula's beta and gamma coefficients split
// by the share of its working set that fits the cache (the tuner's blend, kernels/plan/cost.h).
Vec coefficients(const Sample& s, double cacheBytes) {
  const double f = cachedShare(s.workingSet, cacheBytes);
  return {s.coef[0], f * s.coef[1], f * s.coef[2], (1 - f) * s.coef[1], (1 - f) * s.coef[2]};
}

// min sum ((coef . x - t) / t)^2 over x >= 0 in the components of `free` (the others held at
// `fixed`): normal equations, and a component that comes out negative is held at 0 and the rest
// fitted again (a plain active set; five unknowns at most).
Vec fit(const std::vector<Sample>& samples, double cacheBytes, Mask free, const Vec& fixed) {
  Vec x = fixed;
  for (size_t attempt = 0; attempt <= kUnknowns; ++attempt) {
    std::vector<size_t> idx;
    for (size_t k = 0; k < kUnknowns; ++k) {
      if (free[k]) idx.push_back(k);
    }
    const size_t n = idx.size();
    x = fixed;
    if (n == 0) return x;
    double M[kUnknowns][kUnknowns + 1] = {};
    size_t used = 0;
    for (const Sample& s : samples) {
      const Vec c = coefficients(s, cacheBytes);
      double rest = s.seconds;  // what the free components must explain
      for (size_t k = 0; k < kUnknowns; ++k) {
        if (!free[k]) rest -= c[k] * fixed[k];
      }
      const double w = 1.0 / (s.seconds * s.seconds);
      for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j) M[i][j] += w * c[idx[i]] * c[idx[j]];
        M[i][n] += w * c[idx[i]] * rest;
      }
      ++used;
    }
    // Gauss-Jordan with partial pivoting; a column without information is held at 0.
    size_t dropped = kUnknowns;
    for (size_t col = 0; col < n && dropped == kUnknowns; ++col) {
      size_t piv = col;
      for (size_t r = col + 1; r < n; ++r) {
        if (std::fabs(M[r][col]) > std::fabs(M[piv][col])) piv = r;
      }
      if (std::fabs(M[piv][col]) < 1e-300 || used == 0) {
        dropped = idx[col];
        break;
      }
      for (size_t k = 0; k <= n; ++k) std::swap(M[col][k], M[piv][k]);
      for (size_t r = 0; r < n; ++r) {
        if (r == col) continue;
        const double f = M[r][col] / M[col][col];
        for (size_t k = col; k <= n; ++k) M[r][k] -= f * M[col][k];
      }
    }
    if (dropped == kUnknowns) {
      for (size_t i = 0; i < n; ++i) x[idx[i]] = M[i][n] / M[i][i];
      size_t worst = kUnknowns;
      for (size_t k : idx) {
        if (x[k] < 0 && (worst == kUnknowns || x[k] < x[worst])) worst = k;
      }
      if (worst == kUnknowns) return x;
      dropped = worst;
    }
    free[dropped] = false;
  }
  return fixed;
}

// Gamma, cached and streaming, from the level's pairs: a reduce-scatter and an allgather of one size
// (64 KiB and up) move the same bytes by formulas whose alpha and beta terms agree, and the
// reduce-scatter also reduces them, so the difference of the two, measured back to back, prices the
// reduction alone. Fitted over all sizes together the reduction is lost in the copies: where the
// level's speed differs between sizes by more than the reduction costs (as this VM's does between
// cache regimes), the least-squares gamma came out 0. Weighted by the allgather's time (relative,
// as the fit); a component that comes out negative is held at 0. False without a pair.
bool fitGammaFromPairs(const std::vector<Sample>& samples, double cacheBytes, Vec* x) {
  double a00 = 0, a01 = 0, a11 = 0, b0 = 0, b1 = 0;
  size_t pairs = 0;
  for (const Sample& r : samples) {
    if (r.bytes < kLargeBytes || r.coef[2] <= 0) continue;
    for (const Sample& g : samples) {
      if (g.bytes != r.bytes || g.coef[2] != 0 || g.seconds <= 0) continue;
      const Vec cr = coefficients(r, cacheBytes), cg = coefficients(g, cacheBytes);
      double rest = r.seconds - g.seconds;  // what the two gammas must explain
      for (size_t k : {size_t{0}, size_t{1}, size_t{3}}) rest -= (cr[k] - cg[k]) * (*x)[k];
      const double c0 = cr[2] - cg[2], c1 = cr[4] - cg[4], w = 1.0 / (g.seconds * g.seconds);
      a00 += w * c0 * c0;
      a01 += w * c0 * c1;
      a11 += w * c1 * c1;
      b0 += w * c0 * rest;
      b1 += w * c1 * rest;
      ++pairs;
    }
  }
  if (pairs == 0) return false;
  double g0 = 0, g1 = 0;
  const double det = a00 * a11 - a01 * a01;
  if (std::fabs(det) > 1e-12 * std::max(a00 * a11, 1e-300)) {
    g0 = (b0 * a11 - b1 * a01) / det;
    g1 = (a00 * b1 - a01 * b0) / det;
  }
  if (g0 < 0 || g1 < 0 || std::fabs(det) <= 1e-12 * std::max(a00 * a11, 1e-300)) {  // one of them alone, or none
    const double only0 = a00 > 0 ? std::max(0.0, b0 / a00) : 0, only1 = a11 > 0 ? std::max(0.0, b1 / a11) : 0;
    // The one that explains more of the differences (the larger reduction of the squared error).
    const double gain0 = only0 * b0, gain1 = only1 * b1;
    g0 = gain0 >= gain1 ? only0 : 0;
    g1 = gain0 >= gain1 ? 0 : only1;
  }
  (*x)[2] = g0;
  (*x)[4] = g1;
  return true;
}

}  // namespace

LevelFit fitLevel(const std::vector<Sample>& samples, double cacheBytes) {
  std::vector<Sample> small, large;
  for (const Sample& s : samples) (s.bytes < kLargeBytes ? small : large).push_back(s);
  const Mask all = {true, true, true, true, true};
  Vec x{};
  if (small.empty() || large.empty()) {
    x = fit(samples, cacheBytes, all, x);
  } else {
    x = fit(large, cacheBytes, all, x);
    const bool paired = fitGammaFromPairs(samples, cacheBytes, &x);
    for (int round = 0; round < 2; ++round) {
      x = fit(small, cacheBytes, {true, false, false, false, false}, x);
      x = fit(large, cacheBytes, {false, true, !paired, true, !paired}, x);
      if (paired) fitGammaFromPairs(samples, cacheBytes, &x);
    }
  }
  // A streaming value the samples could not pin down (no working set past the cache) stays "as
  // cached" (0 in the file).
  return LevelFit{LinkCost{x[0], x[1], x[2]}, MemoryCosts{x[3], x[4]}};
}

void report(const char* level, const LevelFit& fitted, double cacheBytes, const std::vector<Sample>& samples) {
  auto rate = [](double secondsPerByte) { return secondsPerByte > 0 ? 1e-9 / secondsPerByte : 0.0; };
  std::printf("#   %-5s alpha %7.3f us  beta %6.2f GB/s  gamma %6.2f GB/s  streaming: beta %6.2f GB/s  gamma %6.2f GB/s\n",
              level, fitted.link.alpha * 1e6, rate(fitted.link.beta), rate(fitted.link.gamma), rate(fitted.mem.betaMem),
              rate(fitted.mem.gammaMem));
  for (const Sample& s : samples) {
    const LinkCost c = forWorkingSet(fitted.link, fitted.mem, s.workingSet, cacheBytes);
    const double model = s.coef[0] * c.alpha + s.coef[1] * c.beta + s.coef[2] * c.gamma;
    std::printf("#         %-40s measured %10.2f us  model %10.2f us  (%+.0f%%)\n", s.what.c_str(), s.seconds * 1e6,
                model * 1e6, (model / s.seconds - 1) * 100);
  }
}


}  // namespace strata::perf
