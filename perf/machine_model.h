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
};

Status loadMachine(const std::string& path, Machine* out);

// The call of sweep size `bytes` on `p` ranks (nccl-tests' size: the larger buffer of a rank).
CollectiveArgs sweepCall(Collective coll, DataType type, RedOp op, size_t bytes, int p);
Status checkMachine(const Machine& m);

}  // namespace strata::perf
