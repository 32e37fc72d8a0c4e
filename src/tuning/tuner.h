// Algorithm selection: every candidate that can serve the call is priced with its cost formula and
// the cheapest wins, unless STRATA_ALGO (or the config) forces one by name. A forced algorithm that
// cannot serve the call is an error that says why; nothing silently falls back.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels/common/status.h"
#include "kernels/plan/collective.h"
#include "kernels/plan/group.h"
#include "kernels/plan/plan_builder.h"
#include "src/core/config.h"
#include "kernels/plan/topology.h"
#include "src/tuning/cost_model.h"

namespace strata {

// The name of the MPI library's own collective as a candidate.
constexpr const char* kNativeAlgorithm = "native";

struct Candidate {
  std::string name;
  // The price the choice compares: the call as every rank of it shares it (selectionArgs: out of
  // place, since ranks of one call may differ in that).
  double predictedSeconds = 0;
  // This rank's call priced as it is made: in place where it is, its formula without the copies it
  // then leaves out (as though every rank called alike). Out of place, predictedSeconds.
  double calledSeconds = 0;
  bool automatic = true;  // the tuner may pick it on its own (else only when forced)
  std::function<void(PlanBuilder&)> build;  // builds this rank's plan for the call
};

struct TunerInput {
  const CollectiveArgs* args = nullptr;
  const Topology* topology = nullptr;
  const LevelCosts* costs = nullptr;
  const Config* config = nullptr;
  bool nodeTeam = false;  // compositions need the node team's shared memory
  int hostProcesses = 1;  // the most processes of the communicator on one host (the cache term)
  // The MPI library's own collective is a candidate ("native"; the caller checked it can run it),
  // priced from `nativeTimes` when calibration measured it.
  bool native = false;
  const NativeTimes* nativeTimes = nullptr;
};

// Every algorithm that can serve the call, with its prediction; `rejected` gets "name: why" for the
// others.
std::vector<Candidate> candidatesFor(const TunerInput& in, std::vector<std::string>* rejected);
// The algorithm to run: the forced one, or the cheapest candidate.
Status selectAlgorithm(const TunerInput& in, Candidate* out);
// The names of every algorithm of a collective (for --algo all and error messages; "native", the
// MPI library's own, is not among them).
std::vector<std::string> algorithmNames(Collective c);

}  // namespace strata
