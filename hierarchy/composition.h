// Compositions across the machine's levels (002, "Hierarchical collectives", "Hierarchical,
// full-lane collectives"). A composition builds one plan out of node ops (the node team's shared
// memory) and flat algorithms over the lanes or over one representative per node, each level in its
// own tag phases; the verifier checks the whole plan like any other, and its cost is the sum of its
// levels' costs (node alpha/beta/gamma, lane alpha/beta/gamma; with n lanes busy at once each lane
// carries 1/n of the data).
//
//   full-lane  allreduce   = reduce-scatter(node) -> allreduce(lane, m/n) -> allgather(node)
//              broadcast   = scatter(root's node) -> broadcast(lane, m/n) -> allgather(node)
//              reduce      = reduce-scatter(node) -> reduce(lane, m/n) -> gather(root's node)
//              allgather   = allgather(lane) -> allgather(node)
//              reducescat. = reduce-scatter(node) -> reduce-scatter(lane)
//              gather      = gather(lane) -> gather(root's node);  scatter: the reverse
//              alltoall    = alltoall(lane) -> alltoall(node)
//              scan/exscan = reduce-scatter(node) -> exscan(lane) -> allgather(node) + scan(node)
//   leader     the node reduces (gathers) to one representative per node, the representatives run
//              the flat collective, the node broadcasts (scatters) the result: for small messages
//              and irregular nodes.
//   one-shot   allreduce: every member reduces the whole node's input at once, then every lane
//              runs the flat allreduce on the whole vector: the fewest rounds.
#pragma once

#include <string>
#include <vector>

#include "inter_node/algorithms/algorithm.h"
#include "kernels/plan/collective.h"
#include "kernels/plan/node_costs.h"
#include "kernels/plan/cost.h"
#include "kernels/plan/plan_builder.h"
#include "kernels/plan/topology.h"

namespace strata {

struct HierAlgorithm {
  const char* name;
  Collective collective;
  // Why the composition cannot serve the call on this topology, or empty; nullptr: it serves every
  // call. Read through whyUnsupported().
  std::string (*unsupported)(const CollectiveArgs& args, const Topology& topo);
  void (*build)(PlanBuilder& b, const CollectiveArgs& args, const Topology& topo, const LevelCosts& costs);
  double (*cost)(const CollectiveArgs& args, const Topology& topo, const LevelCosts& costs);
  const char* formula;

  std::string whyUnsupported(const CollectiveArgs& args, const Topology& topo) const {
    return unsupported ? unsupported(args, topo) : "";
  }
};

const std::vector<const HierAlgorithm*>& hierAlgorithms();
std::vector<const HierAlgorithm*> hierAlgorithmsFor(Collective c);

// ---- helpers of the compositions ----

// A flat collective run by the members of `g` inside a composition.
struct NestedCall {
  NestedCall(Collective c, size_t n, int r = 0, bool place = false) : coll(c), count(n), root(r), inPlace(place) {}
  Collective coll;
  size_t count = 0;
  int root = 0;  // index in g
  std::vector<size_t> counts, displs;
  bool inPlace = false;
  std::vector<size_t> sendCounts, sendDispls;  // scatterv, alltoallv
};

// The flat algorithm the composition uses for a level: the cheapest that serves the call (the
// tuner's rule, with the level's costs). Deterministic on every rank.
const FlatAlgorithm* levelAlgorithm(const CollectiveArgs& outer, const NestedCall& call, int groupSize, const LinkCost& c);
double levelCost(const CollectiveArgs& outer, const NestedCall& call, int groupSize, const LinkCost& c);
// Builds that algorithm on the slices `send` and `recv` (the nested call's whole buffers), its tags
// in phases from `phaseBase`.
void buildLevel(PlanBuilder& b, const CollectiveArgs& outer, const NestedCall& call, const Group& g, Slice send,
                Slice recv, const LinkCost& c, int phaseBase);

// One member per node: `root` on the root's node, the first member elsewhere; in node order.
Group representatives(const Topology& t, int root);
// The lane level as the representatives' collective sees it: one member of each node busy while
// the others wait for the node step after it (kernels/plan/cost.h, HostShare), not every lane.
// Builds and costs alike read it, so the level's algorithm is the one that was priced.
inline LinkCost representativesLink(const LinkCost& lane, const Topology& t) {
  return lane.atShare(1.0 / t.maxNodeSize());
}
bool isRepresentative(const Topology& t, int root);
// Index of node k's lane member (by local rank) in the lane group: nodes are in order.
inline int laneIndexOfNode(int node) { return node; }

std::string needRegular(const Topology& t);
std::string needConsecutive(const Topology& t);

}  // namespace strata
