// The least-squares fit of strata-perf --calibrate: a level's alpha, beta and gamma (cached and
// streaming) from measured samples, each sample's coefficients being its cost formula evaluated
// with unit parameters (perf/calibrate.cc measures them).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "kernels/plan/cost.h"

namespace strata::perf {

struct Sample {
  std::array<double, 3> coef;  // seconds per unit of alpha, beta, gamma
  double seconds;              // measured median (slowest rank of the whole job)
  size_t bytes;
  double workingSet;  // bytes: the host's processes' send and receive buffers
  std::string what;
};

struct LevelFit {
  LinkCost link;
  MemoryCosts mem;
};

// The level's parameters: beta and gamma (cached and streaming) from the sizes the compositions
// are chosen for (64 KiB and up), alpha from the small ones with the others held, twice round.
// Where the samples hold a reduce-scatter (gamma coefficient > 0) and an allgather (none) of the
// same size, gamma comes from their differences alone (see calibration_fit.cc).
LevelFit fitLevel(const std::vector<Sample>& samples, double cacheBytes);
// Prints the fitted parameters and, per sample, the measurement against the fitted model.
void report(const char* level, const LevelFit& fitted, double cacheBytes, const std::vector<Sample>& samples);

}  // namespace strata::perf
