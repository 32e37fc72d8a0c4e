// What the tools (strata-perf and its calibration) may learn of a communicator and ask of it,
// without reaching into strataComm: its topology and host, the plan it would run for a call with
// the model's prediction, the tuner's candidates under other cost parameters (calibration prices
// each formula with unit parameters), and per-phase timings of the calls that follow.
#pragma once

#include <strata/strata.h>

#include <string>
#include <vector>

#include "inter_node/executor.h"
#include "kernels/common/status.h"
#include "kernels/plan/collective.h"
#include "kernels/plan/cost.h"
#include "kernels/plan/topology.h"
#include "src/tuning/device_model.h"
#include "src/tuning/tuner.h"

namespace strata::tools {

const Topology& topologyOf(strataComm_t comm);
// The most processes of the communicator on one host (the cost model's cache term).
int hostProcessesOf(strataComm_t comm);
// Whether the communicator's node teams share memory (hierarchical algorithms are possible).
bool hasNodeTeam(strataComm_t comm);

struct PlannedCall {
  std::string algorithm;
  double predictedSeconds = 0;  // the tuner's price of this rank's call as made (Candidate::calledSeconds)
};
// The plan the communicator runs for `args` (built and cached as a call would; collective over the
// communicator the first time, as a call is).
Status planOf(strataComm_t comm, const CollectiveArgs& args, PlannedCall* out);

// Every candidate for `args` as the tuner prices it with `costs` in place of the communicator's,
// and where `hostProcesses` > 0 that many processes of the host's in place of the communicator's
// (a sub-communicator's calls keyed by the whole job's working set, as calibration keys them).
std::vector<Candidate> candidatesUnder(strataComm_t comm, const CollectiveArgs& args, const LevelCosts& costs,
                                       int hostProcesses = 0);

// The last call, when it ran as a single-kernel peer collective: its algorithm and its schedule's
// rounds and barriers. False when it did not.
struct PeerCallInfo {
  std::string algorithm;
  double rounds = 0, barriers = 0;
};
bool lastPeerCall(strataComm_t comm, PeerCallInfo* out);
// Whether the communicator's device calls are queued on the caller's stream for its progress thread
// (false: they run on the calling thread, under STRATA_DEVICE_SYNC=1 or an MPI thread level below
// MPI_THREAD_MULTIPLE; false too before the first device call).
bool deviceCallsQueued(strataComm_t comm);
// The device cost model's parameters the communicator uses (STRATA_DEVICE_PARAMS, or built-in).
Status deviceParamsOf(strataComm_t comm, DeviceNodeParams* out);

// Per-phase timings of the calls that follow into `times` (nullptr stops); device calls also record
// their staged chunks' stages. A device call queued on a stream writes `times` from the progress
// thread until the stream has been synchronised: keep it alive and unread until then.
void recordPhases(strataComm_t comm, PhaseTimes* times);

}  // namespace strata::tools
