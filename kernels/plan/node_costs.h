// The node steps' costs (intra_node/node_collectives.h builds the steps, intra_node/node_team.h
// runs them), in the cost vocabulary of kernels/plan/cost.h: where the compositions
// (hierarchy/) and the tuner (src/tuning/) price every step that runs inside a node.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/plan/cost.h"
#include "kernels/plan/plan.h"

namespace strata {

// Costs of the node ops in the alpha-beta-gamma model of the node level: a round costs alpha,
// every byte copied into or out of the segment beta, every byte a member copies out of its own
// pieces the level's `copy` (a copy within the rank), every input byte of a reduction gamma; the
// members work in parallel, so the slowest member's share is the time. Where only each node's root
// works (the reduce's reduction, the broadcast's and scatter's writes, the gather's reads) the
// level's costs at the share 1/n apply (nodeRootAlone), where the members work and the roots wait
// the share (n - 1)/n (nodeMembersBusy), and the root's side and the members' side pipeline over the
// rounds where each process has a core (node_costs.cc). `m` is the whole vector
// (or, for the block collectives, the whole gathered buffer), n the team size.
double nodeReduceScatterCost(double m, int n, const LinkCost& c);
double nodeAllGatherCost(double m, int n, const LinkCost& c);
// `rootCopies`: the root also copies its send buffer into its receive buffer, round by round beside
// its writes into its slot (a broadcast out of place whose root's node has no other step).
double nodeBroadcastCost(double m, int n, const LinkCost& c, bool rootCopies = false);
double nodeReduceCost(double m, int n, const LinkCost& c);
double nodeAllReduceCost(double m, int n, const LinkCost& c);
// `rootCopies`: the root copies its own block between its buffers (false where the call is in
// place on that root: its block is already where it goes).
double nodeGatherCost(double m, int n, const LinkCost& c, bool rootCopies = true);
double nodeScatterCost(double m, int n, const LinkCost& c, bool rootCopies = true);
double nodeAllToAllCost(double m, int n, const LinkCost& c);  // m: one member's send bytes
// `exclusive`: an exscan's (member j reads members 0..j-1); `inPlace`: its output is its input.
double nodeScanCost(double m, int n, const LinkCost& c, bool exclusive = false, bool inPlace = false);
double nodeBarrierCost(int n, const LinkCost& c);
// The node level's costs while one member of each node works and the others wait, and while the
// others work and it waits.
LinkCost nodeRootAlone(int n, const LinkCost& c);
LinkCost nodeMembersBusy(int n, const LinkCost& c);

// Rounds of a node op that puts `sharedBytes` per member through slots of c.roundBytes.
double nodeOpRounds(double sharedBytes, const LinkCost& c);
// A node op's time on its team (team[j]: member j's description), priced from the descriptions by
// the accounting of the formulas above: alpha per round, beta per byte a member puts into its slot
// and per byte it writes into its buffers, gamma per input byte of its reductions; a root-centred
// op (one member writes and the others read, or the others write and one reads) as the pipeline of
// its root's side and its members' (strata-model's plan timing, perf/plan_timing.h).
double nodeOpTeamCost(const std::vector<const NodeOpDesc*>& team, size_t elemSize, const LinkCost& c);

}  // namespace strata
