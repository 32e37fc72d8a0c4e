// The communicator: a duplicate of the caller's MPI communicator, its topology (node team and
// lane), configuration, plan cache, executor and scratch memory, and its error state.
#pragma once

#include <mpi.h>
#include <strata/strata.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "inter_node/executor.h"
#include "intra_node/node_team.h"
#include "kernels/common/status.h"
#include "kernels/plan/collective.h"
#include "kernels/plan/plan.h"
#include "src/core/config.h"
#include "src/core/peer_notices.h"
#include "kernels/plan/topology.h"
#include "src/tuning/cost_model.h"

namespace strata {

class DevicePath;

// Page-aligned host memory that grows on demand and is reused across calls.
class HostScratch {
 public:
  HostScratch() = default;
  HostScratch(const HostScratch&) = delete;
  HostScratch& operator=(const HostScratch&) = delete;
  ~HostScratch();
  Status reserve(size_t bytes, void** out);

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

struct CachedPlan {
  Plan plan;
  double predictedSeconds = 0;
  CollectiveArgs args;  // the call it was built for (the v-variants' arrays included)
};

// What identifies a plan: the call's scalars, plus a hash of the v-variants' arrays (compared in
// full on a hit).
struct PlanKey {
  Collective coll = Collective::kAllReduce;
  DataType type = strataFloat32;
  RedOp op = strataSum;
  bool inPlace = false;
  bool device = false;
  int root = 0;
  int shift = 0;
  size_t count = 0;
  size_t arraysHash = 0;
  bool operator==(const PlanKey& o) const {
    return coll == o.coll && type == o.type && op == o.op && inPlace == o.inPlace && device == o.device && root == o.root && shift == o.shift &&
           count == o.count && arraysHash == o.arraysHash;
  }
  static PlanKey of(const CollectiveArgs& a);
};
struct PlanKeyHash {
  size_t operator()(const PlanKey& k) const;
};

}  // namespace strata

struct strataComm {
  static constexpr unsigned long long kMagic = 0x5354524154414331ull;  // "STRATAC1"
  unsigned long long magic = kMagic;

  // A destroyed communicator's memory is held back while the next kQuarantined are destroyed
  // (communicator.cc), so a new communicator never takes the address of a recent one: a handle
  // used after its destroy is refused as not live instead of reaching whatever took its place.
  static constexpr size_t kQuarantined = 64;
  static void* operator new(size_t bytes);
  static void operator delete(void* p);

  MPI_Comm comm = MPI_COMM_NULL;      // our duplicate: no tag can clash with the caller's traffic
  MPI_Comm nodeComm = MPI_COMM_NULL;  // the node team
  MPI_Comm laneComm = MPI_COMM_NULL;  // the lane
  MPI_Comm agreeComm = MPI_COMM_NULL; // the ranks' plan agreement (src/core/plan_agreement.h)
  int rank = 0;
  int size = 1;
  int tagUpperBound = 32767;
  int hostProcesses = 1;  // the most of this communicator's processes on one host (all ranks agree)
  strata::Topology topology;
  strata::Config config;
  strata::CostParams costs;
  strata::LevelCosts deviceCosts;  // the levels as device buffers see them (deviceCostParams)

  std::unordered_map<strata::PlanKey, std::shared_ptr<strata::CachedPlan>, strata::PlanKeyHash> plans;
  strata::WaitPolicy wait;                          // every wait's bound, spin and abort flag
  std::unordered_set<uint64_t> agreedCalls;         // call shapes the ranks agreed on (plan_agreement.h)
  strata::PlanKey lastKey;                          // the last call's plan, checked first
  std::shared_ptr<strata::CachedPlan> lastPlan;
  // The last call ran as a peer collective (src/core/device_path.cc): its name; else null.
  const char* lastPeerAlgorithm = nullptr;
  strata::Executor executor;
  // The node team's shared memory; null when it could not be set up (then only flat algorithms run).
  std::unique_ptr<strata::NodeTeam> nodeTeam;
  strata::HostScratch hostScratch;
  // Collective calls made on this communicator, refused or not: numbered alike on every rank
  // (src/core/peer_notices.h).
  unsigned long long seq = 0;
  // What this rank tells its peers, and hears from them, when a call fails (every wait reads it).
  strata::PeerNotices notices;
  // The current call failed the same way on every rank, each finding it itself (the plan agreement
  // saw the ranks' calls differ, or a plan all of them agreed on cannot run): no one is told.
  bool callFailedAlike = false;
  strata::PhaseTimes* phaseTimes = nullptr;  // instrumentation (strata-perf --phases), or null
  // Collectives on device buffers: lanes, progress thread, stream flags (src/core/device_path.cc).
  // Atomic for strataCommGetAsyncError, which reads it on any thread, without a lock, while the
  // communicator's own call may publish it (under a hold no teardown clears it).
  std::atomic<strata::DevicePath*> devicePath{nullptr};
  // The node team can run node ops on device buffers (CUDA IPC slots, or the emulated device's
  // host slots): hierarchical plans are then candidates for device calls too.
  bool deviceNodeTeam = false;

  std::atomic<bool> aborted{false};
  std::atomic<int> inFlight{0};  // API calls holding it (acquireComm): teardown waits for them
  bool tearingDown = false;      // a destroy or abort has claimed it (under the registry's lock)
  // After a timeout or a transport failure the communicator can no longer be trusted (messages may
  // be in flight): every later call returns this error until it is destroyed.
  strata::Status fatal;
  // fatal's code, for strataCommGetAsyncError from any thread (fatal itself is the calls' own).
  std::atomic<int> fatalCode{strataSuccess};
  std::mutex errorMutex;
  std::string lastError;
  std::string asyncReported;  // the device or peers' error strataCommGetAsyncError last recorded (under errorMutex)

  void setLastError(const std::string& message) {
    std::lock_guard<std::mutex> lock(errorMutex);
    lastError = message;
  }
};

namespace strata {

// The communicator can no longer be trusted after `error` (messages may be in flight): every later
// call returns it, and its peers are told (PeerNotices::failed). Returns it (comm->fatal).
const strata::Status& failComm(strataComm* comm, const strata::Status& error);
// strataCommAbort, once no call is in flight: tells the peers that did not hear it yet (a call it
// ended told them) that this rank's communicator failed, so a peer waiting for it in a call, or
// making its next one, ends at once with strataRemoteError instead of at its bound. Up to p - 1
// small messages, not waited for (PeerNotices::failed); only from a thread that may enter MPI.
void tellPeersOfAbort(strataComm* comm);
// What the peers' notices say while no call of this rank's reads them (strataCommGetAsyncError):
// a peer's communicator that failed or was aborted, or its refusal of a call this rank made, as
// strataRemoteError; Ok otherwise. Read only where this thread may enter MPI while another
// thread's call may be inside it (mayEnterMpiBesideCalls), and at most once per
// PeerNotices::kQuietReadEvery while nothing arrived; Ok where it may not read.
strata::Status peersAsyncError(strataComm* comm);
// Whether the calling thread may make an MPI call while another thread may be in one: any thread
// under MPI_THREAD_MULTIPLE; the main thread under MPI_THREAD_SINGLE or MPI_THREAD_FUNNELED (only
// it calls MPI there, and Strata starts no thread that does); no thread under
// MPI_THREAD_SERIALIZED, whose calls the program orders itself.
bool mayEnterMpiBesideCalls();
// The call numbered comm->seq starts (this rank's checks passed): what its peers said so far (a
// refusal of this call or of one this rank made, a communicator that failed) ends it here, before
// it communicates, and the communicator with it.
strata::Status startCall(strataComm* comm);

// Live communicators, so a destroyed or foreign handle is reported instead of dereferenced.
bool isLiveComm(strataComm_t comm);
void registerComm(strataComm_t comm);
void unregisterComm(strataComm_t comm);

// An API call's hold on a live communicator: checked and counted in flight at once, under the
// registry's lock, so no teardown frees it between the check and the use. False when it is not
// live, or a destroy or abort has claimed it. releaseComm ends the hold.
bool acquireComm(strataComm_t comm);
void releaseComm(strataComm_t comm);
// The one teardown of a communicator (strataCommDestroy, strataCommAbort). Under the registry's
// lock: when the communicator is live, `whileLive` runs (an abort raises its flag there, which
// reaches a teardown already under way too), then the teardown is claimed unless another call
// holds it. New holds are refused from the claim on; unclaimTeardown gives the claim back when the
// teardown cannot finish (calls still in flight at its bound).
enum class Teardown { kClaimed, kNotLive, kClaimedByAnother };
Teardown claimTeardown(strataComm_t comm, void (*whileLive)(strataComm_t));
void unclaimTeardown(strataComm_t comm);

Status createComm(MPI_Comm mpiComm, const strataConfig_t* config, strataComm_t* out);
Status destroyComm(strataComm_t comm);

}  // namespace strata
