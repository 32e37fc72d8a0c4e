// Builds each rank's plan for the verifier the way the library does for a call: per-rank in-place
// flags, the in-place alias, then the algorithm's builder.
#pragma once

#include "hierarchy/composition.h"
#include "inter_node/algorithms/algorithm.h"
#include "tests/verifier/symbolic_verifier.h"

namespace strata::verify {

// Options that make pipelined algorithms cut even small test vectors into many blocks.
BuildOptions manyBlocksOptions();

// Builds all p plans and runs the verifier; `perRank` (optional) gives each rank's own arguments.
Result verifyFlat(const FlatAlgorithm& algo, const CollectiveArgs& args, int p, const BuildOptions& opt,
                  const std::vector<CollectiveArgs>& perRank = {});

// Node shapes: "3,5" style sizes of consecutive ranks, or "rr2" for ranks dealt round-robin to
// 2 nodes (node teams that are not consecutive).
Status topologyFor(const std::string& shape, int p, int rank, Topology* out);

Plan buildHierPlan(const HierAlgorithm& algo, const CollectiveArgs& args, const Topology& topo, const LevelCosts& costs);
Result verifyHier(const HierAlgorithm& algo, const CollectiveArgs& args, const std::string& shape, int p,
                  const LevelCosts& costs);

// Arguments of the irregular variants for the verifier: uneven counts (zeros included) and
// displacements with gaps and out of rank order. `inPlace` picks counts an in-place call allows.
std::vector<CollectiveArgs> irregularArgs(const CollectiveArgs& base, int p, unsigned seed);

}  // namespace strata::verify
