#include "src/core/device_path.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/common/log.h"
#include "intra_node/node_team.h"
#include "inter_node/mpi_check.h"
#include "src/core/collective_runner.h"
#include "src/core/device_mode.h"
#include "src/core/memory_space.h"
#include "src/core/plan_agreement.h"
#include "src/core/progress_thread.h"
#include "src/tuning/device_model.h"

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime.h>

#include "intra_node/device_slots.h"
#include "intra_node/peer_node.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_compute.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_queues.h"
#include "src/core/stream_gate.h"
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

namespace strata {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

class DevicePath {
 public:
  std::unique_ptr<DeviceRuntime> queues;
  Executor executor;
  int device = -1;
  bool async = false;
  bool awareMpi = false;
  StagingPool staging;  // STRATA_STAGE_CHUNK and STRATA_STAGE_SLOTS (must be the same on every rank)

  ProgressThread progress;        // runs queued collectives when async
  std::mutex eventsMutex;
  std::vector<void*> freeEvents;  // cudaEvent_t for callers' streams, reused (under eventsMutex)
#ifdef STRATA_HAVE_CUDA
  StreamGate gate;                     // holds callers' streams until their tickets are written
  std::unique_ptr<DeviceSlots> slots;  // the node team's IPC slots, when the team has them
  // The single-kernel node collectives: a one-node communicator with a GPU per rank.
  std::unique_ptr<PeerNodeTeam> peer;
#endif
  DeviceNodeParams params;  // the device cost model's (STRATA_DEVICE_PARAMS)
};

namespace {

#ifdef STRATA_HAVE_CUDA

// What a timeout adds where the progress thread's own device work did not finish: that work may
// sit behind the caller's held stream in a hardware queue the two share (README, "Stream order").
constexpr const char* kHeldStreamNote =
    " (one possible cause: with more CUDA streams in the process than CUDA_DEVICE_MAX_CONNECTIONS, default 8, the "
    "caller's held stream may share a hardware queue with the progress thread's and stall it; STRATA_DEVICE_SYNC=1 "
    "runs device calls on the calling thread)";

// `phases`: the instrumentation the caller had set when it made the call (strata-perf --phases).
Status runPlan(strataComm* comm, DevicePath& path, const CachedPlan& cached, const void* send, void* recv,
               unsigned long long seq, PhaseTimes* phases) {
  const Plan& plan = cached.plan;
  Bindings bind;
  bind.send = send;
  bind.recv = recv;
  bind.type = cached.args.type;
  bind.op = cached.args.op;
  if (plan.scratchCount != 0) STRATA_CHECK(path.queues->scratch(plan.scratchCount * cached.args.elemSize(), &bind.scratch));
  ExecContext ctx;
  ctx.comm = comm->comm;
  ctx.tagUpperBound = comm->tagUpperBound;
  ctx.wait = comm->wait;
  ctx.maxMessageBytes = comm->config.maxMessageBytes;
  ctx.compute = &path.queues->compute();
  ctx.nodeOps = comm->deviceNodeTeam ? comm->nodeTeam.get() : nullptr;
  ctx.collective = collectiveName(cached.args.coll);
  ctx.seq = seq;
  ctx.phaseTimes = phases;
  ctx.device = path.queues.get();
  ctx.deviceAwareMpi = path.awareMpi;
  ctx.staging = path.staging;
  if (path.async) ctx.deviceStallNote = kHeldStreamNote;
  return path.executor.run(plan, bind, ctx);
}

// ---- The allocation gate -------------------------------------------------------------------------
// CUDA's allocation and free calls wait for the whole device, and a queued collective holds the
// caller's stream until its progress thread writes the ticket: an allocation made while any
// stream of the process waits for a ticket is the deadlock of a GPU (the driver may hold a lock
// the progress thread needs). So every allocation of the device path (first setup, growth of the
// staging and scratch, teardown) happens with the allocation gate held and every path of the process
// drained; a collective is queued with it held, so none slips in between. Setup and teardown
// exchange with their peers between gated steps (gatedSteps), and a call agrees on its plan before
// it takes the gate: else two threads setting up two communicators would deadlock against a peer
// process whose threads set them up in the other order, each process's gate held by the thread its
// peer's other thread waits for. The one wait on other processes left under the gate is the drain
// itself (queued work finishes with its peers): at setup (buildPath), at teardown, and where a call
// outgrows its communicator's scratch on a device without the stream-ordered allocator or beside a
// device-aware MPI (reserveFor). Two threads whose communicators grow so at once, in opposite
// orders on two processes, wait there to the bound.
std::mutex& allocationGate() {
  static std::mutex* m = new std::mutex;
  return *m;
}
// Guards comm->devicePath where another thread reads it (an abort, which must not wait for the
// allocation gate) against its publication and its teardown; the communicator's own calls read it
// without (one collective at a time per communicator). Never held across a wait.
std::mutex& publishedPaths() {
  static std::mutex* m = new std::mutex;
  return *m;
}
std::vector<DevicePath*>& livePaths() {  // under allocationGate()
  static auto* v = new std::vector<DevicePath*>;
  return *v;
}

// With the allocation gate held: no stream of the process waits for a ticket afterwards.
Status quiesceAllPaths(const WaitPolicy& policy) {
  for (DevicePath* p : livePaths()) STRATA_CHECK(p->progress.drain(policy));
  return Status::Ok();
}

// Each step with the allocation gate held and every path drained first (DeviceSyncSteps).
DeviceSyncSteps gatedSteps(const WaitPolicy& policy) {
  return [policy](const std::function<Status()>& step) {
    std::lock_guard<std::mutex> allocating(allocationGate());
    STRATA_CHECK(quiesceAllPaths(policy));
    return step();
  };
}

// Makes the staging and scratch hold a run of `cached`, and returns with the allocation gate
// (`allocating`) held. Scratch alone grows in stream order where the device can (no wait for the
// device, so no other communicator's work need finish): before the gate, after this
// communicator's own queued runs, which use the old scratch and finish with the same calls on
// every rank. Not where MPI is device-aware (buildPath's queues then allocate no pool memory). Else
// every path is drained with the gate held.
Status reserveFor(strataComm* comm, DevicePath& path, const CachedPlan& cached, std::unique_lock<std::mutex>* allocating) {
  const size_t staging = path.awareMpi || !hasMessages(cached.plan) ? 0 : path.staging.bytes();
  const size_t scratch = cached.plan.scratchCount * cached.args.elemSize();
  if (!path.queues->fits(staging, scratch) && path.queues->fits(staging, 0) && path.queues->growsScratchInStreamOrder()) {
    STRATA_CHECK(path.progress.drain(comm->wait));
    // A run that failed may have left copies of the old scratch in flight: nothing grows under them.
    const Status earlier = path.progress.firstError();
    if (!earlier.ok()) {
      return failComm(comm, Status(earlier.code(), "a device collective failed: " + earlier.message()));
    }
    STRATA_CHECK(path.queues->reserve(0, scratch));
  }
  *allocating = std::unique_lock<std::mutex>(allocationGate());
  if (path.queues->fits(staging, scratch)) return Status::Ok();
  STRATA_CHECK(quiesceAllPaths(comm->wait));
  return path.queues->reserve(staging, scratch);
}

bool askMpiCudaAware(int configured) {
  if (configured >= 0) return configured == 1;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

// Device slots for the node team (intra_node/device_slots.h), set up through the team itself;
// comm->deviceNodeTeam then says whether every rank of the communicator has them (else no rank uses
// device node ops, so all ranks choose among the same algorithms).
Status setUpIpcSlots(strataComm* comm, DevicePath& path, const DeviceSyncSteps& steps) {
  comm->deviceNodeTeam = false;
  NodeTeam& team = *comm->nodeTeam;
  // 16 MiB by default: a 256 MiB allreduce then takes 16 rounds on 2 ranks.
  const size_t slotBytes = comm->config.deviceSlotBytes;
  std::unique_ptr<DeviceSlots> slots;
  const Status s = DeviceSlots::setUp(team, slotBytes, comm->config.timeoutSeconds, steps, &slots);
  int mineOk = s.ok() ? 1 : 0, allOk = 0;
  const int rc = MPI_Allreduce(&mineOk, &allOk, 1, MPI_INT, MPI_MIN, comm->comm);
  if (rc != MPI_SUCCESS) {
    (void)slots.release();  // peers may have mapped them, and no barrier can be met: left allocated
    return mpiError("MPI_Allreduce (device slots)", rc, STRATA_WHERE);
  }
  if (allOk != 1) {
    // Nobody uses them: each closes what it opened and frees its own after the team's barrier.
    if (slots != nullptr) STRATA_CHECK(slots->release(&team, comm->config.timeoutSeconds, false, steps));
    if (!s.ok()) STRATA_WARN("device node slots unavailable (%s): device calls run flat plans", s.message().c_str());
    return Status::Ok();
  }
  team.attachDeviceSlots(slots->bases(), slots->slotBytes());
  path.slots = std::move(slots);
  comm->deviceNodeTeam = true;
  return Status::Ok();
}

// The peer collectives' buffers (intra_node/peer_node.h), for a communicator that is one node
// whose ranks each have their own GPU (`ownGpus`). Every rank learns whether every rank has them.
Status setUpPeerTeam(strataComm* comm, DevicePath& path, bool ownGpus, const DeviceSyncSteps& steps) {
  if (comm->nodeTeam == nullptr || comm->topology.numNodes() != 1 || comm->nodeTeam->size() != comm->size ||
      comm->config.peerHalfBytes == 0) {
    return Status::Ok();
  }
  if (!ownGpus) return Status::Ok();  // one GPU per member, or no peer collectives
  std::unique_ptr<PeerNodeTeam> peer;
  const Status s =
      PeerNodeTeam::setUp(*comm->nodeTeam, comm->config.peerHalfBytes, comm->config.timeoutSeconds, steps, &peer);
  int mineOk = s.ok() && peer != nullptr ? 1 : 0, allOk = 0;
  const int rc = MPI_Allreduce(&mineOk, &allOk, 1, MPI_INT, MPI_MIN, comm->comm);
  if (rc != MPI_SUCCESS) {
    (void)peer.release();  // as for the device slots
    return mpiError("MPI_Allreduce (peer buffers)", rc, STRATA_WHERE);
  }
  if (allOk != 1) {
    if (peer != nullptr) {
      const Status released = peer->release(comm->nodeTeam.get(), comm->config.timeoutSeconds, false, steps);
      destroyInStep(peer, steps);
      STRATA_CHECK(released);
    }
    if (!s.ok()) STRATA_WARN("peer collectives unavailable (%s): node rounds go through the host", s.message().c_str());
    return Status::Ok();
  }
  path.peer = std::move(peer);
  return Status::Ok();
}

// Whether `args` runs as a peer collective, and which: STRATA_ALGO naming one forces it (an error
// where it cannot run); naming another algorithm keeps the plans; else the peer path serves the
// four collectives it has whenever the node has it, the model choosing the allreduce's shape.
Status choosePeerAlgorithm(const strataComm* comm, const DevicePath& path, const CollectiveArgs& args, bool* use,
                           PeerAlgorithm* out) {
  *use = false;
  const std::string forced = comm->config.forcedFor(args.coll);
  if (!forced.empty() && forced != "auto") {
    if (!peerAlgorithmNamed(args.coll, forced, out)) return Status::Ok();
    STRATA_REQUIRE(path.peer != nullptr && args.counts.empty(), strataInvalidArgument,
                   "%s (STRATA_ALGO) needs a one-node communicator whose ranks each have their own GPU, and a "
                   "regular %s", forced.c_str(), collectiveName(args.coll));
    *use = true;
    return Status::Ok();
  }
  if (path.peer == nullptr || !args.counts.empty()) return Status::Ok();
  switch (args.coll) {
    case Collective::kAllReduce:
      *out = choosePeerAllReduce(comm->size, static_cast<double>(args.count * args.elemSize()),
                                 static_cast<double>(path.peer->node().halfBytes), path.params);
      break;
    case Collective::kReduceScatter: *out = PeerAlgorithm::kReduceScatter; break;
    case Collective::kAllGather: *out = PeerAlgorithm::kAllGather; break;
    case Collective::kBroadcast: *out = PeerAlgorithm::kBroadcast; break;
    default: return Status::Ok();
  }
  *use = true;
  return Status::Ok();
}

// An earlier peer kernel stopped (`stopped`): a member refused its call or failed, and that member's
// notice, sent beside its stop record, says which call and why. Waits for it and returns it;
// `stopped` where none came: within the communicator's bound after a refusal, whose notice always
// goes out, and a second after a failure.
Status noticeBehindStop(strataComm* comm, const DevicePath& path, const Status& stopped) {
  WaitPolicy policy = comm->wait;
  if (!path.peer->stoppedByRefusal()) policy.timeoutSeconds = std::min(policy.timeoutSeconds, 1.0);
  Status verdict;
  const Status waited = waitUntil(
      policy,
      [&] {
        verdict = comm->notices.poll();
        return !verdict.ok();
      },
      [] { return std::string("the notice of the node member a peer collective kernel stopped waiting for"); });
  if (!verdict.ok()) return verdict;
  return waited.code() == strataRemoteError ? waited : stopped;
}

Status runPeerCollective(strataComm* comm, DevicePath& path, const CollectiveArgs& args, PeerAlgorithm algorithm,
                         const void* send, void* recv, cudaStream_t stream) {
  // As for a plan: at the first call of its shape, every rank checks that all run the same.
  STRATA_CHECK(agreeOnPlan(comm, args, peerAlgorithmName(algorithm)));
  cuda::PeerCall call;
  call.algorithm = algorithm;
  call.send = send;
  call.recv = recv;
  call.count = args.count;
  call.root = args.root;
  call.divisor = args.op == strataAvg ? comm->size : 0;
  call.seq = comm->seq;
  Status s = path.peer->run(call, args.type, args.op, stream);
  if (s.code() == strataRemoteError) s = noticeBehindStop(comm, path, s);
  if (!s.ok() && s.code() != strataInvalidArgument && s.code() != strataInvalidUsage) failComm(comm, s);
  comm->lastPeerAlgorithm = peerAlgorithmName(algorithm);
  return s;
}

// Makes `device` current for the scope and restores the caller's device after: the queues, events
// and IPC slots belong to the buffers' device, whichever device the calling thread had selected.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (device != previous_) cudaSetDevice(device);
  }
  ~DeviceScope() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

// PeerNodeTeam::stopPeers on the path's device, whichever the calling thread has selected.
void stopPeersOf(DevicePath& path, unsigned long long seq, bool failed) {
  DeviceScope scope(path.device);
  const Status s = path.peer->stopPeers(seq, failed);
  if (!s.ok()) STRATA_WARN("telling the node's peer kernels to stop waiting for this rank: %s", s.message().c_str());
}

Status pointerDevice(const void* p, int* device) {
  cudaPointerAttributes attr{};
  STRATA_CHECK_CUDA(cudaPointerGetAttributes(&attr, p));
  *device = attr.device;
  return Status::Ok();
}

// Sets up `path` for `comm`, its CUDA calls that may wait for the device as gated `steps`. While a
// step drains this process's paths, no peer has queued a call on this communicator (a first call
// agrees on its plan with every rank before it is queued), so the work it waits for is another
// communicator's, whose peers' calls no step of this setup holds back (with three communicators
// or more, steps of setups under way at once in several processes can still hold each other's
// calls back, and end at the bound).
Status buildPath(strataComm* comm, int device, const DeviceSyncSteps& steps, DevicePath* path) {
  path->device = device;
  path->staging = StagingPool::sized(comm->config.stageChunkBytes, comm->config.stageSlots);
  path->awareMpi = askMpiCudaAware(comm->config.cudaAwareMpi);
  STRATA_CHECK(steps([&] {
    // A device-aware MPI is handed scratch to send, which it may map over CUDA IPC: not a pool's.
    STRATA_CHECK(makeCudaQueues(device, comm->config.timeoutSeconds, !path->awareMpi, &path->queues));
    // The staging pool (its size is fixed) now, wherever a call may stage a message: grown at a
    // first staged call instead, it would drain every communicator's queued work with the gate
    // held, a wait on other processes (above).
    if (!path->awareMpi && comm->size > 1) STRATA_CHECK(path->queues->reserve(path->staging.bytes(), 0));
    // Every kernel the path may launch, loaded before any stream is held (cuda_kernels.h).
    return cuda::preloadKernels();
  }));
  STRATA_CHECK(loadDeviceParams(comm->config.deviceParamsFile, &path->params));
  // How the node's members hold their GPUs: the peer collectives need one each, and members that
  // share one run synchronously by default (device_mode.h).
  NodeGpus gpus;
  if (comm->nodeTeam != nullptr) STRATA_CHECK(exchangeNodeGpus(*comm->nodeTeam, comm->config.timeoutSeconds, &gpus));
  // The mode and the stream gate first: a refusal there comes before the collective setup below,
  // on every rank alike.
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  DeviceMode mode;
  STRATA_CHECK(chooseDeviceMode(comm->config, level == MPI_THREAD_MULTIPLE, std::getenv("CUDA_LAUNCH_BLOCKING"),
                                std::getenv("CUDA_DEVICE_MAX_CONNECTIONS"), gpus.shared, &mode));
  path->async = mode.async;
  if (path->async) STRATA_CHECK(steps([&] { return path->gate.init(comm->config.streamGate); }));
  if (comm->nodeTeam != nullptr) STRATA_CHECK(setUpIpcSlots(comm, *path, steps));
  STRATA_CHECK(setUpPeerTeam(comm, *path, gpus.own, steps));
  if (path->async) {
    path->progress.start([device] { cudaSetDevice(device); }, [path](uint32_t ticket) { path->gate.release(ticket); },
                         &comm->aborted);
  }
  STRATA_INFO("device collectives on device %d: %s%s, MPI %s, node collectives %s", device, mode.why.c_str(),
              !path->async                 ? ""
              : path->gate.usesWaitValue() ? ", streams held by the wait-value operation"
                                           : ", streams held by a polling kernel",
              path->awareMpi ? "device-aware" : "staged through pinned host chunks",
              path->peer ? "as single kernels over peer memory" : "in host-synchronised rounds");
  return Status::Ok();
}

// Not under the allocation gate: the setup's exchanges with the other ranks run between its gated
// steps. A path that failed to build is freed in a step (or, where none can run, left allocated).
Status ensurePath(strataComm* comm, int device, DevicePath** out) {
  if (DevicePath* existing = comm->devicePath; existing != nullptr) {
    STRATA_REQUIRE(existing->device == device, strataInvalidUsage,
                   "this communicator runs its device collectives on device %d; the buffers are on device %d",
                   existing->device, device);
    *out = existing;
    return Status::Ok();
  }
  const DeviceSyncSteps steps = gatedSteps(comm->wait);
  auto path = std::make_unique<DevicePath>();
  const Status built = buildPath(comm, device, steps, path.get());
  if (!built.ok()) {
    if (path->slots != nullptr) {
      // Set up on every rank, then this one failed: the peers may use our slots, so they are
      // unmapped here and left allocated (abandoned), not freed.
      if (comm->nodeTeam != nullptr) comm->nodeTeam->attachDeviceSlots({}, 0);
      (void)path->slots->release(comm->nodeTeam.get(), comm->config.timeoutSeconds, true, steps);
    }
    comm->deviceNodeTeam = false;
    path->progress.stop();
    destroyInStep(path, steps);
    return built;
  }
  std::lock_guard<std::mutex> allocating(allocationGate());
  std::lock_guard<std::mutex> published(publishedPaths());
  comm->devicePath = path.release();
  livePaths().push_back(comm->devicePath);
  *out = comm->devicePath;
  return Status::Ok();
}

// Queues the collective for the progress thread and makes `stream` wait for its ticket, with the
// allocation gate (`allocating`) held until it is queued.
Status enqueueOnStream(strataComm* comm, DevicePath& path, std::shared_ptr<CachedPlan> cached, const void* send,
                       void* recv, unsigned long long seq, cudaStream_t stream, std::unique_lock<std::mutex>& allocating) {
  cudaEvent_t ready = nullptr;
  {
    std::lock_guard<std::mutex> lock(path.eventsMutex);
    if (!path.freeEvents.empty()) {
      ready = static_cast<cudaEvent_t>(path.freeEvents.back());
      path.freeEvents.pop_back();
    }
  }
  if (ready == nullptr) STRATA_CHECK_CUDA(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  STRATA_CHECK_CUDA(cudaEventRecord(ready, stream));
  ProgressThread::Job job;
  job.run = [comm, &path, cached = std::move(cached), send, recv, seq, ready, phases = comm->phaseTimes]() {
    Status s = waitForEvent(ready, comm->wait, "the work queued before it on the caller's stream");
    // A device wait: the executor names the cause itself where its own device work stalled.
    if (s.code() == strataTimeout) s = Status(s.code(), s.message() + kHeldStreamNote);
    if (s.ok()) s = runPlan(comm, path, *cached, send, recv, seq, phases);
    if (s.ok()) return s;
    // The executor's errors begin with the call already ("allreduce #3 (ring): step ..."); others get it.
    const std::string call = strformat("%s #%llu", collectiveName(cached->args.coll), seq);
    if (s.message().rfind(call, 0) != 0) s.withContext(call);
    // The communicator fails with this (at the caller's next call): its peers hear so now, their
    // peer collective kernels too (the stop records, once this rank's own kernels have ended).
    comm->notices.failed(seq, s.message());
    if (path.peer != nullptr) stopPeersOf(path, seq, true);
    return s;
  };
  job.finish = [&path, ready]() {
    std::lock_guard<std::mutex> lock(path.eventsMutex);
    path.freeEvents.push_back(ready);
  };
  // The work is handed over before the stream is made to wait: under CUDA_LAUNCH_BLOCKING=1 the
  // fallback wait kernel's launch returns only once the ticket is written.
  const uint32_t ticket = path.progress.push(std::move(job));
  // Work enqueued on `stream` after this call waits until the progress thread writes the ticket;
  // the fallback kernel's bound lies beyond the progress thread's own, so it fires only when that
  // thread is stuck.
  const Status held = path.gate.hold(stream, ticket, 2 * comm->config.timeoutSeconds + 10);
  allocating.unlock();
  if (!held.ok()) {
    // Queued, but the stream is not held: the call completes here, before it returns its error, so
    // nothing the caller queues on the stream afterwards runs before it. If it cannot complete in
    // the bound, the communicator is failed: the queued work may still touch the buffers.
    const Status drained = path.progress.drain(comm->wait);
    if (!drained.ok()) {
      return failComm(comm, Status(drained.code(), held.message() + "; the queued call did not complete either: " +
                                                       drained.message()));
    }
  }
  return held;
}

#endif  // STRATA_HAVE_CUDA

}  // namespace

Status runDeviceCollective(strataComm* comm, const CollectiveArgs& args, const void* send, void* recv,
                           cudaStream_t stream) {
#ifdef STRATA_HAVE_CUDA
  // The device is the one whose memory the call's significant buffers are in (validate() found
  // them device memory): a buffer this rank does not use (a non-root's sendbuff in a broadcast,
  // say) may hold anything.
  const bool sendMatters = sendUse(args, comm->rank).used && send != nullptr;
  const void* probe = sendMatters ? send : recv;
  int device = -1;
  STRATA_CHECK(pointerDevice(probe, &device));
  DeviceScope scope(device);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  STRATA_CHECK_CUDA(cudaStreamIsCapturing(stream, &capture));
  STRATA_REQUIRE(capture == cudaStreamCaptureStatusNone, strataInvalidUsage,
                 "the stream is being captured into a CUDA graph: Strata's collectives wait for a progress thread, "
                 "which a graph cannot replay; call them outside the capture");
  DevicePath* path = nullptr;
  STRATA_CHECK(ensurePath(comm, device, &path));
  if (path->async) {
    // An earlier queued collective's failure is reported here, not waited for.
    const Status earlier = path->progress.firstError();
    if (!earlier.ok()) {
      return failComm(comm, Status(earlier.code(), "a device collective failed: " + earlier.message()));
    }
  }
  const unsigned long long seq = comm->seq;
  STRATA_CHECK(startCall(comm));
  bool peer = false;
  PeerAlgorithm peerAlgorithm = PeerAlgorithm::kAllReduceOneShot;
  STRATA_CHECK(choosePeerAlgorithm(comm, *path, args, &peer, &peerAlgorithm));
  // The peer kernels hold no stream for a ticket, so they are launched without the gate; the plan
  // is agreed (a wait for the peers) before the gate is taken.
  if (peer) return runPeerCollective(comm, *path, args, peerAlgorithm, send, recv, stream);
  Status s = planFor(comm, args);
  if (!s.ok()) return s.withContext(strformat("%s #%llu", collectiveName(args.coll), seq));
  std::shared_ptr<CachedPlan> cached = comm->lastPlan;  // queued work keeps it
  std::unique_lock<std::mutex> allocating;
  STRATA_CHECK(reserveFor(comm, *path, *cached, &allocating));
  if (path->async) return enqueueOnStream(comm, *path, std::move(cached), send, recv, seq, stream, allocating);
  allocating.unlock();
  STRATA_CHECK(waitForStreamWork(stream, comm->wait));
  s = runPlan(comm, *path, *cached, send, recv, seq, comm->phaseTimes);
  if (!s.ok() && s.code() != strataInvalidArgument && s.code() != strataInvalidUsage) failComm(comm, s);
  return s;
#else
  return makeStatus(strataInvalidUsage, "device buffers in a build without CUDA");
#endif
}

namespace {
// What failed in the path's queued work: a collective, or a stream's wait for one on the device.
Status queuedWorkError(const DevicePath& path) {
  Status error = path.progress.firstError();
#ifdef STRATA_HAVE_CUDA
  if (path.gate.timedOut()) {
    error.update(makeStatus(strataTimeout, "a stream's wait for a device collective timed out on the device"));
  }
#endif
  return error;
}
}  // namespace

Status drainDevicePath(strataComm* comm) {
  DevicePath* path = comm->devicePath;
  if (path == nullptr) return Status::Ok();
#ifdef STRATA_HAVE_CUDA
  STRATA_CHECK(path->progress.drain(comm->wait));
#endif
  const Status error = queuedWorkError(*path);
  if (!error.ok()) {
    return failComm(comm, Status(error.code(), "a device collective failed: " + error.message()));
  }
  return Status::Ok();
}

Status deviceAsyncError(strataComm* comm) {
#ifdef STRATA_HAVE_CUDA
  // The calling thread may be publishing the path; the caller's hold keeps any teardown from
  // clearing it. Each source is read without a wait: the progress thread's error under its lock,
  // the gate's and the peer kernels' words in host-mapped memory.
  const DevicePath* path = comm->devicePath.load(std::memory_order_acquire);
  if (path == nullptr) return Status::Ok();
  Status error = queuedWorkError(*path);
  if (error.ok() && path->peer != nullptr) error = path->peer->kernelStatus();
  if (!error.ok()) return Status(error.code(), "a device collective failed: " + error.message());
#else
  (void)comm;
#endif
  return Status::Ok();
}

bool deviceCallsQueued(const strataComm* comm) {
  const DevicePath* path = comm->devicePath;
  return path != nullptr && path->async;
}

bool lastPeerSchedule(const strataComm* comm, double* rounds, double* barriers) {
#ifdef STRATA_HAVE_CUDA
  const DevicePath* path = comm->devicePath;
  if (comm->lastPeerAlgorithm == nullptr || path == nullptr || path->peer == nullptr) return false;
  const cuda::PeerSchedule& s = path->peer->lastSchedule();
  *rounds = static_cast<double>(s.rounds);
  *barriers = static_cast<double>(s.barriers);
  return true;
#else
  (void)comm, (void)rounds, (void)barriers;
  return false;
#endif
}

void abortDevicePath(strataComm* comm) {
#ifdef STRATA_HAVE_CUDA
  std::lock_guard<std::mutex> published(publishedPaths());
  DevicePath* path = comm->devicePath;
  if (path == nullptr || path->peer == nullptr) return;
  path->peer->abort();
  stopPeersOf(*path, 0, true);  // the other members' kernels waiting for this one stop too
#else
  (void)comm;
#endif
}

void stopPeerKernels(strataComm* comm, unsigned long long seq, bool failed) {
#ifdef STRATA_HAVE_CUDA
  DevicePath* path = comm->devicePath;
  if (path != nullptr && path->peer != nullptr) stopPeersOf(*path, seq, failed);
#else
  (void)comm;
  (void)seq;
  (void)failed;
#endif
}

void stopDevicePath(strataComm* comm) {
  DevicePath* path = comm->devicePath;
  if (path == nullptr) return;
  path->progress.stop();  // the queue drains first: every ticket is written, every stream released
#ifdef STRATA_HAVE_CUDA
  {
    std::lock_guard<std::mutex> allocating(allocationGate());
    auto& live = livePaths();
    live.erase(std::remove(live.begin(), live.end(), path), live.end());
  }
  // Not abortable: other communicators' device work must finish before the slots go, aborted or
  // not. Each release meets the node's team between its gated steps; a step that cannot run
  // (another communicator's work did not finish) leaves what it would have freed allocated.
  WaitPolicy unabortable = comm->wait;
  unabortable.abortFlag = nullptr;
  unabortable.peers = nullptr;
  const DeviceSyncSteps steps = gatedSteps(unabortable);
  if (path->peer != nullptr) {
    Status s = path->peer->release(comm->nodeTeam.get(), comm->config.timeoutSeconds, comm->aborted.load(), steps);
    if (!s.ok()) STRATA_WARN("releasing the peer buffers: %s", s.message().c_str());
  }
  if (path->slots != nullptr) {
    if (comm->nodeTeam != nullptr) comm->nodeTeam->attachDeviceSlots({}, 0);
    Status s = path->slots->release(comm->nodeTeam.get(), comm->config.timeoutSeconds, comm->aborted.load(), steps);
    if (!s.ok()) STRATA_WARN("releasing the device node slots: %s", s.message().c_str());
  }
  {
    std::lock_guard<std::mutex> published(publishedPaths());  // an abort no longer finds it
    comm->devicePath = nullptr;
  }
  const Status freed = steps([&] {
    for (void* e : path->freeEvents) cudaEventDestroy(static_cast<cudaEvent_t>(e));
    delete path;
    return Status::Ok();
  });
  if (!freed.ok()) STRATA_WARN("destroying a communicator: its device queues stay allocated: %s", freed.message().c_str());
#else
  comm->devicePath = nullptr;
  delete path;
#endif
}

}  // namespace strata
