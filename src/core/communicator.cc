#include "src/core/communicator.h"

#include "src/core/device_path.h"

#include <atomic>
#include <cstdlib>
#include <deque>
#include <set>

#include "inter_node/mpi_check.h"
#include "kernels/common/log.h"

namespace strata {
namespace {

std::mutex& registryMutex() {
  static std::mutex m;
  return m;
}
std::set<strataComm_t>& registry() {
  static std::set<strataComm_t> r;
  return r;
}
std::deque<void*>& quarantine() {  // under registryMutex()
  static auto* q = new std::deque<void*>;
  return *q;
}

// A communicator that failed or was aborted, or whose notices may still be on their way
// (PeerNotices::close), may have messages still on their way to it: its MPI communicators are kept
// (retireComm), not freed.
void freeComms(strataComm* c) {
  const bool retire = c->notices.close(c->aborted.load() || !c->fatal.ok(), c->wait);
  for (MPI_Comm* m : {&c->agreeComm, &c->laneComm, &c->nodeComm, &c->comm}) {
    if (*m == MPI_COMM_NULL) continue;
    if (retire) {
      retireComm(m);
    } else {
      MPI_Comm_free(m);
    }
  }
}

// Node keys from MPI: the smallest rank of each shared-memory node, gathered on every rank.
Status discoverTopology(MPI_Comm comm, int rank, int size, Topology* out) {
  MPI_Comm shared = MPI_COMM_NULL;
  STRATA_CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
  int leader = rank;
  const int rc = MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, shared);
  MPI_Comm_free(&shared);
  if (rc != MPI_SUCCESS) return mpiError("MPI_Allreduce(node leader)", rc, STRATA_WHERE);
  std::vector<int> keys(static_cast<size_t>(size));
  STRATA_CHECK_MPI(MPI_Allgather(&leader, 1, MPI_INT, keys.data(), 1, MPI_INT, comm));
  *out = Topology::fromNodeKeys(keys, rank);
  return Status::Ok();
}

// How many of the communicator's processes share this host (the node team's spin policy).
Status hostProcessCount(MPI_Comm comm, int rank, int* out) {
  MPI_Comm shared = MPI_COMM_NULL;
  STRATA_CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
  const int rc = MPI_Comm_size(shared, out);
  MPI_Comm_free(&shared);
  if (rc != MPI_SUCCESS) return mpiError("MPI_Comm_size(host)", rc, STRATA_WHERE);
  return Status::Ok();
}

// The node team finds its shared segment over the node's MPI communicator.
class MpiNodeBootstrap final : public NodeBootstrap {
 public:
  explicit MpiNodeBootstrap(MPI_Comm nodeComm) : comm_(nodeComm) {}
  Status broadcastName(std::string* name) override {
    int len = static_cast<int>(name->size());
    STRATA_CHECK_MPI(MPI_Bcast(&len, 1, MPI_INT, 0, comm_));
    name->resize(static_cast<size_t>(len));
    if (len > 0) STRATA_CHECK_MPI(MPI_Bcast(name->data(), len, MPI_CHAR, 0, comm_));
    return Status::Ok();
  }
  Status agree(bool ok, bool* allOk) override {
    int mine = ok ? 1 : 0, all = 0;
    STRATA_CHECK_MPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm_));
    *allOk = all == 1;
    return Status::Ok();
  }

 private:
  MPI_Comm comm_;
};

// Sets up the node team; if any node cannot (shared memory missing, a virtual node spanning
// hosts), every rank goes on without node teams, so all ranks choose among the same algorithms.
Status setUpNodeTeam(strataComm* c) {
  MpiNodeBootstrap boot(c->nodeComm);
  std::unique_ptr<NodeTeam> team;
  NodeTeamOptions options;
  options.setupTimeoutSeconds = c->config.timeoutSeconds;
  options.spinSeconds = c->wait.spinSeconds;
  Status s = NodeTeam::create(c->topology.nodeSize(c->topology.myNode()), c->topology.myLocalRank(), boot, options, &team);
  int mine = s.ok() ? 1 : 0, all = 0;
  STRATA_CHECK_MPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, c->comm));
  if (all == 1) {
    c->nodeTeam = std::move(team);
  } else {
    STRATA_WARN("node teams unavailable (%s): hierarchical algorithms disabled on this communicator",
                s.ok() ? "another node could not set up its shared memory" : s.message().c_str());
  }
  return Status::Ok();
}

}  // namespace

HostScratch::~HostScratch() { std::free(data_); }

PlanKey PlanKey::of(const CollectiveArgs& a) {
  PlanKey k;
  k.coll = a.coll;
  k.type = a.type;
  k.op = a.op;
  k.inPlace = a.inPlace;
  k.device = a.device;
  k.root = a.root;
  k.shift = a.shift;
  k.count = a.count;
  if (a.counts.empty() && a.displs.empty() && a.sendCounts.empty() && a.sendDispls.empty()) return k;
  size_t h = 0;
  for (const auto* v : {&a.counts, &a.displs, &a.sendCounts, &a.sendDispls}) {
    h = h * 1000003u + v->size() + 1;
    for (size_t x : *v) h = (h ^ x) * 0x100000001b3ull;
  }
  k.arraysHash = h;
  return k;
}

size_t PlanKeyHash::operator()(const PlanKey& k) const {
  size_t h = static_cast<size_t>(k.coll) | (static_cast<size_t>(k.type) << 8) | (static_cast<size_t>(k.op) << 16) |
             (static_cast<size_t>(k.inPlace) << 24);
  h ^= std::hash<size_t>()(k.count) * 31;
  h ^= std::hash<int>()(k.root) * 131 + std::hash<int>()(k.shift) * 1313 + k.arraysHash;
  return h;
}

Status HostScratch::reserve(size_t bytes, void** out) {
  if (bytes > bytes_) {
    std::free(data_);
    data_ = nullptr;
    bytes_ = 0;
    const size_t rounded = (bytes + 4095) / 4096 * 4096;
    data_ = std::aligned_alloc(4096, rounded);
    STRATA_REQUIRE(data_ != nullptr, strataSystemError, "cannot allocate %zu bytes of host scratch", rounded);
    bytes_ = rounded;
  }
  *out = data_;
  return Status::Ok();
}

// Destroying a communicator bumps the generation, so a thread's memory of "this handle was live
// at generation g" stays valid until any communicator is destroyed: the common case (the same
// communicator, call after call) skips the lock.
std::atomic<uint64_t> gRegistryGeneration{1};
thread_local strataComm_t tlsLastLive = nullptr;
thread_local uint64_t tlsLastGeneration = 0;

bool isLiveComm(strataComm_t comm) {
  if (comm == nullptr) return false;
  const uint64_t gen = gRegistryGeneration.load(std::memory_order_acquire);
  if (comm == tlsLastLive && gen == tlsLastGeneration) return true;
  std::lock_guard<std::mutex> lock(registryMutex());
  if (registry().count(comm) == 0) return false;
  tlsLastLive = comm;
  tlsLastGeneration = gen;
  return true;
}
void registerComm(strataComm_t comm) {
  std::lock_guard<std::mutex> lock(registryMutex());
  registry().insert(comm);
}
bool acquireComm(strataComm_t comm) {
  if (comm == nullptr) return false;
  std::lock_guard<std::mutex> lock(registryMutex());
  if (registry().count(comm) == 0 || comm->tearingDown) return false;
  comm->inFlight.fetch_add(1);
  return true;
}
void releaseComm(strataComm_t comm) { comm->inFlight.fetch_sub(1); }

Teardown claimTeardown(strataComm_t comm, void (*whileLive)(strataComm_t)) {
  std::lock_guard<std::mutex> lock(registryMutex());
  if (comm == nullptr || registry().count(comm) == 0) return Teardown::kNotLive;
  if (whileLive != nullptr) whileLive(comm);
  if (comm->tearingDown) return Teardown::kClaimedByAnother;
  comm->tearingDown = true;
  return Teardown::kClaimed;
}
void unclaimTeardown(strataComm_t comm) {
  std::lock_guard<std::mutex> lock(registryMutex());
  comm->tearingDown = false;
}

void unregisterComm(strataComm_t comm) {
  std::lock_guard<std::mutex> lock(registryMutex());
  registry().erase(comm);
  gRegistryGeneration.fetch_add(1, std::memory_order_acq_rel);
}

Status createComm(MPI_Comm mpiComm, const strataConfig_t* userConfig, strataComm_t* out) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  STRATA_REQUIRE(initialized && !finalized, strataInvalidUsage,
                 "MPI is not initialized (call MPI_Init before strataCommInitMpi)");
  STRATA_REQUIRE(mpiComm != MPI_COMM_NULL, strataInvalidArgument, "mpiComm is MPI_COMM_NULL");
  int isInter = 0;
  STRATA_CHECK_MPI(MPI_Comm_test_inter(mpiComm, &isInter));
  STRATA_REQUIRE(!isInter, strataInvalidArgument, "mpiComm is an intercommunicator");

  // What may fail on one rank alone (its environment, its cost file, a node shape that does not fit
  // its communicator) is found before any collective, and every rank learns whether every rank
  // succeeded: a rank that failed and left while its peers went on into the collectives below would
  // leave them waiting there, unbounded (the MPI face, which then passes the communicator's calls
  // to MPI on every rank, would hang in its first one).
  int rank = 0, size = 0;
  STRATA_CHECK_MPI(MPI_Comm_rank(mpiComm, &rank));
  STRATA_CHECK_MPI(MPI_Comm_size(mpiComm, &size));
  Config config;
  CostParams costs = defaultCostParams();
  Topology shaped;
  Status local = resolveConfig(userConfig, &config);
  if (local.ok() && !config.topoFile.empty()) local = loadCostParams(config.topoFile, &costs);
  if (local.ok() && !config.nodeShape.empty()) local = Topology::fromShape(config.nodeShape, size, rank, &shaped);
  const int mine = local.ok() ? 1 : 0;
  int all = 0;
  STRATA_CHECK_MPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, mpiComm));
  STRATA_CHECK(local);
  STRATA_REQUIRE(all == 1, strataRemoteError,
                 "another rank could not create the communicator (its configuration, cost file or node shape; its "
                 "own error says which), so no rank did");

  auto c = std::make_unique<strataComm>();
  c->config = config;
  Status status;
  STRATA_CHECK_GOTO(([&]() -> Status {
                      STRATA_CHECK_MPI(MPI_Comm_dup(mpiComm, &c->comm));
                      // Errors come back as codes, so they can be reported instead of aborting the job.
                      STRATA_CHECK_MPI(MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN));
                      // Its own context: the agreement's collective cannot meet a progress thread's messages.
                      STRATA_CHECK_MPI(MPI_Comm_dup(c->comm, &c->agreeComm));
                      STRATA_CHECK(c->notices.open(c->comm));
                      STRATA_CHECK_MPI(MPI_Comm_rank(c->comm, &c->rank));
                      STRATA_CHECK_MPI(MPI_Comm_size(c->comm, &c->size));
                      // MPI_TAG_UB is an attribute of MPI_COMM_WORLD (MPI 4.1, 9.1.1), the same
                      // for every communicator; a split communicator need not carry it (Open MPI's
                      // do not), and the standard's least bound, 32767, folded the plans' phase
                      // tags onto each other: a ring allreduce's allgather receive matched its
                      // reduce-scatter message.
                      int* ub = nullptr;
                      int flag = 0;
                      STRATA_CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
                      if (flag && ub != nullptr) c->tagUpperBound = *ub;
                      if (config.nodeShape.empty()) {
                        STRATA_CHECK(discoverTopology(c->comm, c->rank, c->size, &c->topology));
                      } else {
                        c->topology = shaped;
                      }
                      const Topology& t = c->topology;
                      STRATA_CHECK_MPI(MPI_Comm_split(c->comm, t.myNode(), c->rank, &c->nodeComm));
                      STRATA_CHECK_MPI(MPI_Comm_split(c->comm, t.myLocalRank(), t.myNode(), &c->laneComm));
                      c->costs = costs;
                      c->deviceCosts = deviceCostParams(c->costs);
                      // Every wait's policy: the timeout, a spin for how busy this host's cores are
                      // (kernels/common/bounded_wait.h), the abort flag.
                      int onHost = 1;
                      STRATA_CHECK(hostProcessCount(c->comm, c->rank, &onHost));
                      STRATA_CHECK_MPI(MPI_Allreduce(&onHost, &c->hostProcesses, 1, MPI_INT, MPI_MAX, c->comm));
                      c->wait.timeoutSeconds = config.timeoutSeconds;
                      c->wait.spinSeconds = config.waitSpinSeconds >= 0 ? config.waitSpinSeconds
                                                                        : WaitPolicy::defaultSpinSeconds(onHost);
                      c->wait.abortFlag = &c->aborted;
                      c->wait.peers = &c->notices;
                      STRATA_CHECK(setUpNodeTeam(c.get()));
                      return Status::Ok();
                    })(),
                    status, fail);
  setLogRank(c->rank);
  STRATA_INFO("communicator: %d ranks, nodes %s%s, node team %s, timeout %.0f s, costs from %s", c->size,
              c->topology.shapeText().c_str(), c->topology.virtualNodes ? " (virtual)" : "",
              c->nodeTeam ? "on shared memory" : "unavailable", config.timeoutSeconds, c->costs.source.c_str());
  *out = c.release();
  registerComm(*out);
  return Status::Ok();

fail:
  freeComms(c.get());
  return status;
}

}  // namespace strata

void* strataComm::operator new(size_t bytes) { return ::operator new(bytes); }
void strataComm::operator delete(void* p) {
  void* evicted = nullptr;
  {
    std::lock_guard<std::mutex> lock(strata::registryMutex());
    auto& q = strata::quarantine();
    q.push_back(p);
    if (q.size() > kQuarantined) {
      evicted = q.front();
      q.pop_front();
    }
  }
  ::operator delete(evicted);
}

namespace strata {

const Status& failComm(strataComm* comm, const Status& error) {
  comm->fatal = error;
  comm->setLastError(error.message());  // what a watchdog reads once it sees the code below
  comm->fatalCode.store(error.code(), std::memory_order_release);
  comm->notices.failed(comm->seq, error.message());
  stopPeerKernels(comm, comm->seq, true);
  return comm->fatal;
}

namespace {

int mpiThreadLevel() {  // fixed once MPI is initialized, as it is while a communicator lives
  static const int level = [] {
    int l = MPI_THREAD_SINGLE;
    return MPI_Query_thread(&l) == MPI_SUCCESS ? l : MPI_THREAD_SERIALIZED;
  }();
  return level;
}

bool onMainThread() {
  int main = 0;
  return MPI_Is_thread_main(&main) == MPI_SUCCESS && main != 0;
}

}  // namespace

void tellPeersOfAbort(strataComm* comm) {
  // Another thread may enter MPI only under MPI_THREAD_MULTIPLE (an abort from a watchdog thread):
  // below it, only the main thread tells.
  if (mpiThreadLevel() != MPI_THREAD_MULTIPLE && !onMainThread()) return;
  comm->notices.failed(comm->seq, "strataCommAbort: the communicator was aborted");
}

bool mayEnterMpiBesideCalls() {
  const int level = mpiThreadLevel();
  return level == MPI_THREAD_MULTIPLE || (level != MPI_THREAD_SERIALIZED && onMainThread());
}

Status peersAsyncError(strataComm* comm) {
  return mayEnterMpiBesideCalls() ? comm->notices.poll() : Status::Ok();
}

Status startCall(strataComm* comm) {
  const Status heard = comm->notices.started(comm->seq, comm->wait);
  return heard.ok() ? heard : failComm(comm, heard);
}

Status destroyComm(strataComm_t comm) {
  stopDevicePath(comm);  // queued device work first: it uses the MPI communicators freed below
  unregisterComm(comm);
  comm->nodeTeam.reset();
  freeComms(comm);
  comm->magic = 0;
  delete comm;
  return Status::Ok();
}

}  // namespace strata
