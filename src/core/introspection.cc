#include "src/core/introspection.h"

#include "src/core/collective_runner.h"
#include "src/core/communicator.h"
#include "src/core/device_path.h"

namespace strata::tools {

const Topology& topologyOf(strataComm_t comm) { return comm->topology; }
int hostProcessesOf(strataComm_t comm) { return comm->hostProcesses; }
bool hasNodeTeam(strataComm_t comm) { return comm->nodeTeam != nullptr; }

Status planOf(strataComm_t comm, const CollectiveArgs& args, PlannedCall* out) {
  STRATA_CHECK(planFor(comm, args));
  out->algorithm = comm->lastPlan->plan.algorithm;
  out->predictedSeconds = comm->lastPlan->predictedSeconds;
  return Status::Ok();
}

std::vector<Candidate> candidatesUnder(strataComm_t comm, const CollectiveArgs& args, const LevelCosts& costs,
                                       int hostProcesses) {
  TunerInput in;
  in.args = &args;
  in.topology = &comm->topology;
  in.costs = &costs;
  in.config = &comm->config;
  in.nodeTeam = comm->nodeTeam != nullptr;
  in.hostProcesses = hostProcesses > 0 ? hostProcesses : comm->hostProcesses;
  return candidatesFor(in, nullptr);
}

void recordPhases(strataComm_t comm, PhaseTimes* times) { comm->phaseTimes = times; }

bool lastPeerCall(strataComm_t comm, PeerCallInfo* out) {
  if (!lastPeerSchedule(comm, &out->rounds, &out->barriers)) return false;
  out->algorithm = comm->lastPeerAlgorithm;
  return true;
}

bool deviceCallsQueued(strataComm_t comm) { return strata::deviceCallsQueued(comm); }

Status deviceParamsOf(strataComm_t comm, DeviceNodeParams* out) {
  return loadDeviceParams(comm->config.deviceParamsFile, out);
}

}  // namespace strata::tools
