#include "src/core/collective_runner.h"

#include "kernels/common/log.h"
#include "kernels/plan/plan_builder.h"
#include "src/core/device_path.h"
#include "src/core/memory_space.h"
#include "src/core/native_runner.h"
#include "src/core/plan_agreement.h"
#include "src/tuning/tuner.h"  // kNativeAlgorithm

namespace strata {

namespace {
bool sameArrays(const CollectiveArgs& a, const CollectiveArgs& b) {
  return a.counts == b.counts && a.displs == b.displs && a.sendCounts == b.sendCounts && a.sendDispls == b.sendDispls;
}
}  // namespace

Status planFor(strataComm* comm, const CollectiveArgs& args) {
  // The call runs a plan, not a peer collective (device_path.cc): the last algorithm is the plan's.
  comm->lastPeerAlgorithm = nullptr;
  const PlanKey key = PlanKey::of(args);
  if (comm->lastPlan != nullptr && key == comm->lastKey && (key.arraysHash == 0 || sameArrays(comm->lastPlan->args, args))) {
    return Status::Ok();
  }
  auto it = comm->plans.find(key);
  if (it != comm->plans.end() && sameArrays(it->second->args, args)) {
    comm->lastKey = key;
    comm->lastPlan = it->second;
    return Status::Ok();
  }
  TunerInput in;
  in.args = &args;
  in.topology = &comm->topology;
  in.costs = args.device ? &comm->deviceCosts : &comm->costs;
  in.config = &comm->config;
  // Device buffers use hierarchical plans only when the node team has device slots (CUDA IPC, set
  // up with the first device call); otherwise STRATA_ALGO naming one is refused by the tuner
  // instead of being swapped for another.
  in.nodeTeam = comm->nodeTeam != nullptr && (!args.device || comm->deviceNodeTeam);
  in.hostProcesses = comm->hostProcesses;
  in.nativeTimes = &comm->costs.native;
  in.native = nativeSupports(args) && (comm->config.mpiNative || comm->config.forcedFor(args.coll) == kNativeAlgorithm);
  Candidate choice;
  // Every rank takes part in the agreement, a rank whose selection failed too (its peers learn of it).
  const Status selected = selectAlgorithm(in, &choice);
  const Status agreed = agreeOnPlan(comm, args, selected.ok() ? choice.name : std::string());
  // Past the agreement every rank knows every rank's choice: a rank whose selection failed made the
  // digests differ (agreeOnPlan marks that), or every rank's failed alike.
  if (agreed.ok() && !selected.ok()) comm->callFailedAlike = true;
  STRATA_CHECK(selected);
  STRATA_CHECK(agreed);
  auto cached = std::make_shared<CachedPlan>();
  cached->plan.algorithm = choice.name;
  cached->plan.divisor = comm->size;
  cached->predictedSeconds = choice.calledSeconds;  // in place, this rank's call as made
  PlanBuilder b(&cached->plan);
  applyInPlaceAlias(b, args, comm->rank);
  choice.build(b);
  b.finish();
  // Each rank checks its own steps (a node's leader has more than its members): refused, not alike.
  STRATA_CHECK(checkFoldedTags(cached->plan, comm->tagUpperBound));
  STRATA_INFO("%s count %zu %s %s root %d%s: %s, predicted %.2f us, %zu steps", collectiveName(args.coll), args.count,
              dataTypeName(args.type), redOpName(args.op), args.root, args.inPlace ? " in-place" : "",
              choice.name.c_str(), choice.calledSeconds * 1e6, cached->plan.size());
  if (logLevel() >= LogLevel::kTrace) STRATA_TRACE("%s", cached->plan.dump(args.type).c_str());
  cached->args = args;
  // A long-running job with ever-changing sizes must not grow the cache without bound.
  if (comm->plans.size() >= 4096) comm->plans.clear();
  comm->plans[key] = cached;
  comm->lastKey = key;
  comm->lastPlan = std::move(cached);
  return Status::Ok();
}

Status runCollective(strataComm* comm, const CollectiveArgs& args, const void* send, void* recv, cudaStream_t stream) {
  if (args.device) return runDeviceCollective(comm, args, send, recv, stream);
  // Device collectives queued on this communicator use the same tags: let them finish first.
  STRATA_CHECK(drainDevicePath(comm));
  const unsigned long long seq = comm->seq;
  STRATA_CHECK(startCall(comm));
  STRATA_CHECK(synchronizeStream(stream, comm->wait));
  Status s = planFor(comm, args);
  if (!s.ok()) return s.withContext(strformat("%s #%llu", collectiveName(args.coll), seq));
  // Not a copy of the shared pointer (an atomic count's round trip per call): the communicator's
  // calls are one at a time, so its last plan stays as it is until this call returns.
  const Plan& plan = comm->lastPlan->plan;
  if (plan.algorithm == kNativeAlgorithm) {
    s = runNative(comm, args, send, recv);
    if (!s.ok()) {
      s.withContext(strformat("%s #%llu (native)", collectiveName(args.coll), seq));
      failComm(comm, s);  // the MPI library's collective failed part-way: messages may be in flight
    }
    return s;
  }

  Bindings bind;
  bind.send = send;
  bind.recv = recv;
  bind.type = args.type;
  bind.op = args.op;
  if (plan.scratchCount != 0) STRATA_CHECK(comm->hostScratch.reserve(plan.scratchCount * args.elemSize(), &bind.scratch));

  ExecContext ctx;
  ctx.comm = comm->comm;
  ctx.tagUpperBound = comm->tagUpperBound;
  ctx.wait = comm->wait;
  ctx.maxMessageBytes = comm->config.maxMessageBytes;
  ctx.compute = &hostComputeBackend();
  ctx.nodeOps = comm->nodeTeam.get();
  ctx.collective = collectiveName(args.coll);
  ctx.seq = seq;
  ctx.phaseTimes = comm->phaseTimes;
  s = comm->executor.run(plan, bind, ctx);
  if (!s.ok() && (s.code() == strataTimeout || s.code() == strataSystemError || s.code() == strataInternalError ||
                  s.code() == strataRemoteError)) {
    failComm(comm, s);
  }
  return s;
}

}  // namespace strata
