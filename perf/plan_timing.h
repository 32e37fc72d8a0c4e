// strata-model's plan-level simulation: every rank's plan (the one the library would build for the
// call) executed in simulated time on a Machine (perf/machine_model.h).
//
// A step starts when its predecessors have finished. A rank's reductions, copies and divisions run
// one at a time (gamma per byte of output per input beyond the first; a copy moves at the node's
// beta), with the copies it makes of messages from its node, each in the earliest gap from when it
// is ready. A message between ranks of one node costs the flat level's alpha + m beta; between nodes the
// lane's alpha + m beta, and its bytes also pass the sender's NIC and the receiver's, each direction
// of each NIC carrying one message at a time at machine.nic_bandwidth: the ranks of a node that
// share a NIC contend for it, as lanes do. With machine.core_bandwidth, every message between nodes
// also crosses the switches' core, which carries Machine::coreSlots() of them at once, each at
// Machine::coreRate(): a tapered network's contention among nodes. A message up to
// machine.eager_bytes leaves when its send is ready, and the send is complete once its bytes have
// left (MPI holds them); a larger one leaves when both its send and its receive are ready
// (rendezvous), and its send completes when it has arrived. A node op starts when every member of
// its team has reached it and lasts as the node costs price it from the members' descriptions
// (kernels/plan/node_costs.h, nodeOpTeamCost: a root-centred op as the pipeline of its root's side
// and its members'), during which its members do nothing else.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/common/status.h"
#include "kernels/plan/collective.h"
#include "kernels/plan/plan.h"
#include "perf/machine_model.h"

namespace strata::perf {

struct PlanTiming {
  double seconds = 0;  // when the last rank finished
  size_t steps = 0, messages = 0, networkMessages = 0;
  double busiestNic = 0;  // seconds the busiest NIC direction carried data
};

// `plans[r]` is rank r's plan, rank r on node r / m.ranksPerNode.
Status timePlans(const std::vector<Plan>& plans, const Machine& m, size_t elemSize, PlanTiming* out);

// Builds every rank's plan of `algorithm` for the call on the machine and times them; when the
// plans together hold more than `maxSteps` steps (0: no limit), stops building and sets
// *overBudget instead.
Status timeAlgorithm(const CollectiveArgs& args, const std::string& algorithm, const Machine& m, double maxSteps,
                     PlanTiming* out, bool* overBudget);

}  // namespace strata::perf
