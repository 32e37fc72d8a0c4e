// How an algorithm is chosen: the one rule every level uses (the tuner for a whole call,
// src/tuning/tuner.cc, and the compositions for the flat algorithm of a level, hierarchy/levels.cc).
// Every rank must choose alike, or ranks run plans whose messages do not match: a choice reads only
// the arguments every rank of the call shares (selectionArgs), and takes the cheapest eligible
// candidate, the first of equals.
#pragma once

#include <cstddef>

#include "kernels/plan/collective.h"
#include "kernels/plan/cost.h"

namespace strata {

// The arguments a choice may read: those every rank shares. The in-place flag is dropped (it may
// differ between ranks of a rooted call); the v-variants whose counts every rank knows (allgatherv,
// reduce-scatterv) are priced by their mean block, the others (gatherv, scatterv, alltoallv, whose
// arrays are the root's or each rank's own) without their arrays.
CollectiveArgs selectionArgs(const CollectiveArgs& args);

// The levels' costs for a call whose host runs `hostProcesses` processes, read at the call's
// working set (LevelCosts::forWorkingSet): the shared arguments' out of place; in place, where
// `args` says so, each level's cheaper per-byte costs of that working set and the call's own
// smaller one (its buffers are one). Where the host runs every rank of the communicator
// (`hostProcesses` >= args.commSize), its flat level and lanes are marked LinkCost::oneHost.
LevelCosts callCosts(const LevelCosts& costs, const CollectiveArgs& args, int hostProcesses);

// The index of the cheapest eligible candidate of `n`, the first of equals; `n` when none is.
template <typename Cost, typename Eligible>
size_t cheapest(size_t n, Cost cost, Eligible eligible) {
  size_t best = n;
  double bestCost = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!eligible(i)) continue;
    const double c = cost(i);
    if (best == n || c < bestCost) {
      best = i;
      bestCost = c;
    }
  }
  return best;
}

}  // namespace strata
