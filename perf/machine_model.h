// strata-model's machine: nodes of ranks, the cost levels of the library's own cost file
// (STRATA_TOPO_FILE: flat.*, node.*, lane.*, as `strata-perf --calibrate` writes them) and the
// network interfaces the ranks of a node share. One file holds both: the machine's keys start with
// "machine." (the library skips them):
//
//   machine.nodes 512              nodes
//   machine.ranks_per_node 8       ranks (GPUs) per node
//   machine.nics_per_node 8        network interfaces per node; local ranks share them in blocks
//                                  (ranks_per_node / nics_per_node consecutive local ranks a NIC)
//   machine.nic_bandwidth 5e10     bytes per second per NIC and direction (0: no contention)
//   machine.core_bandwidth 1.6e12  bytes per second that every message between nodes shares, in
//                                  both directions: the switches' core behind the NICs (0, the
//                                  default: non-blocking; nodes x nics x nic_bandwidth / 4 is a 4:1
//                                  oversubscribed core). Needs nic_bandwidth
//   machine.eager_bytes 65536      messages up to this size leave before their receive is posted
//   machine.ranks_per_host 8       processes of one host: their buffers make the working set the
//                                  levels' curves are read at (default ranks_per_node; more
//                                  where virtual nodes share a host)
//
// The levels, as the library reads them: `node` prices the node steps (and local copies), `lane`
// a message between nodes of the compositions' lanes (alpha + m beta, on top of which the NICs are
// shared), `flat` a message of the flat algorithms over the whole communicator (the plan timing
// uses it for messages between two ranks of one node; on a machine of several nodes calibration
// measures it across them). gamma, a rank's reduction speed, is the flat level's.
#pragma once

#include <string>

#include "kernels/common/status.h"
#include "kernels/plan/collective.h"
#include "src/tuning/cost_model.h"

namespace strata::perf {

struct Machine {
  int nodes = 1;
  int ranksPerNode = 1;
  int nicsPerNode = 1;
  double nicBandwidth = 0;
  double coreBandwidth = 0;  // 0: the core carries whatever the NICs send
  double eagerBytes = 65536;
  int ranksPerHost = 0;  // 0: ranksPerNode
  CostParams costs;
  std::string source;  // the file, or "defaults"

  int ranks() const { return nodes * ranksPerNode; }
  int hostProcesses() const { return ranksPerHost > 0 ? ranksPerHost : ranksPerNode; }
  int nicOf(int localRank) const { return nicsPerNode <= 1 ? 0 : localRank * nicsPerNode / ranksPerNode; }
  // The machine as one call sees it: each level's beta and gamma read off its curve at the host's
  // working set (every rank's buffers), as the tuner does (kernels/plan/cost.h).
  Machine forCall(const CollectiveArgs& args) const;
  // Messages between nodes the core carries at once, each at coreRate() (bytes/s): as many NICs'
  // worth as it has, rounded down (at least one, at the core's own bandwidth where that is below a
  // NIC's). 0 without a core.
  int coreSlots() const;
  double coreRate() const;
  // The costs the closed forms price a call with (and the simulated plans are built with, as the
  // library would build them from costs calibrated on the machine): the levels as the file gives
  // them, and with a core, the lanes behind it (LinkCost::coreBeta = ranks / core_bandwidth): a
  // phase that keeps the share s of the ranks sending pays at least s ranks / core_bandwidth per
  // byte (a composition's full lanes all of it, a leader composition's 1 / ranks_per_node, a
  // binomial tree's round r 2^r / ranks). The flat level's messages cross it from one rank of each
  // node in a ring's rounds (nodes / core_bandwidth; all of them on nodes of one rank), and the
  // formulas of the butterflies and shifts (recursive doubling and halving, Rabenseifner,
  // circulant, Bruck, pairwise alltoall) price each round at the messages that cross it
  // (LinkCost::coreNodeRanks = ranks_per_node, LinkCost::crossing): none where a round stays in
  // the nodes, ranks_per_node times a ring's where every rank's message crosses; the pipelined and
  // two-tree broadcasts and reduces at their trees' edges between nodes (treeEdges). The binomial
  // trees' and the hypercube's rounds keep the ring's. The plan-level simulation books the core
  // message by message instead (perf/plan_timing.h).
  CostParams formulaCosts() const;
};

Status loadMachine(const std::string& path, Machine* out);

// The call of sweep size `bytes` on `p` ranks (nccl-tests' size: the larger buffer of a rank).
CollectiveArgs sweepCall(Collective coll, DataType type, RedOp op, size_t bytes, int p);
Status checkMachine(const Machine& m);

}  // namespace strata::perf
