#include "inter_node/executor.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>

#include "inter_node/mpi_check.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

size_t pieceCount(size_t bytes, size_t maxBytes) {
  if (bytes == 0) return 1;
  return (bytes + maxBytes - 1) / maxBytes;
}

std::string contextText(const Plan& plan, const ExecContext& ctx) {
  return strformat("%s #%llu (%s)", ctx.collective, ctx.seq, plan.algorithm.c_str());
}

}  // namespace

int foldTag(int tag, int upperBound) {
  // In 64 bits: Open MPI's bound is INT_MAX, and upperBound + 1 in int overflowed
  // (UndefinedBehaviorSanitizer found it).
  if (upperBound <= 0) return tag;
  return static_cast<int>(static_cast<int64_t>(tag) % (static_cast<int64_t>(upperBound) + 1));
}

int callTag(int planTag, unsigned long long seq, int upperBound) {
  if (upperBound <= 0) return planTag;
  const int64_t tags = static_cast<int64_t>(upperBound) + 1;
  const int64_t moved = planTag + static_cast<int64_t>(seq % kCallsApart) * (tags / kCallsApart);
  return static_cast<int>(moved % tags);
}

Status checkFoldedTags(const Plan& plan, int upperBound) {
  if (upperBound <= 0 || std::none_of(plan.steps.begin(), plan.steps.end(),
                                      [&](const Step& st) { return st.tag > upperBound; })) {
    return Status::Ok();  // nothing folds
  }
  // Folding is safe as long as no two messages with one peer in one direction land on one tag:
  // MPI would match them by arrival, not by the plan's order.
  std::map<std::tuple<int, bool, int>, int> seen;  // (peer, send, folded tag) -> the plan's tag
  for (const Step& st : plan.steps) {
    if (st.kind != StepKind::kSend && st.kind != StepKind::kRecv) continue;
    const auto [it, fresh] = seen.emplace(std::make_tuple(st.peer, st.kind == StepKind::kSend, foldTag(st.tag, upperBound)), st.tag);
    STRATA_REQUIRE(fresh || it->second == st.tag, strataInvalidUsage,
                   "this MPI's MPI_TAG_UB (%d) is too small for the %s plan: its tags %d and %d with rank %d fold onto "
                   "tag %d; choose another algorithm (STRATA_ALGO)",
                   upperBound, plan.algorithm.c_str(), it->second, st.tag, st.peer, foldTag(st.tag, upperBound));
  }
  return Status::Ok();
}

bool hasMessages(const Plan& plan) {
  for (const Step& st : plan.steps) {
    if (st.kind == StepKind::kSend || st.kind == StepKind::kRecv) return true;
  }
  return false;
}

void PhaseTimes::record(const char* label, double start, double end) {
  for (Phase& p : phases) {
    if (p.label == label) {
      p.start = std::min(p.start, start);
      p.end = std::max(p.end, end);
      return;
    }
  }
  phases.push_back({label, start, end});
}

Status Executor::run(const Plan& plan, const Bindings& bind, const ExecContext& ctx) {
  const size_t n = plan.size();
  if (n == 0) return Status::Ok();
  // A plan of one node op (a one-shot allreduce inside a node) needs none of the bookkeeping below.
  if (n == 1 && plan.steps[0].kind == StepKind::kNodeOp && ctx.phaseTimes == nullptr && ctx.nodeOps != nullptr &&
      ctx.device == nullptr) {
    ctx_ = &ctx;
    plan_ = &plan;
    bind_ = &bind;
    progressError_ = Status::Ok();
    done_ = 0;
    remaining_.assign(1, 0);
    ready_.clear();
    readyHead_ = 0;
    requests_.clear();
    requestStep_.clear();
    Status s = runNodeOp(plan, 0, bind, ctx);
    return s.ok() ? s : s.withContext(contextText(plan, ctx));
  }
  remaining_.resize(n);
  pendingRequests_.assign(n, 0);
  ready_.clear();
  readyHead_ = 0;
  pendingNodeOps_.clear();
  pendingLocal_.clear();
  requests_.clear();
  requestStep_.clear();
  done_ = 0;
  for (StepId i = 0; i < n; ++i) {
    remaining_[i] = plan.steps[i].depCount;
    if (remaining_[i] == 0) ready_.push_back(i);
  }

  gated_.clear();
  plan_ = &plan;
  bind_ = &bind;
  progressError_ = Status::Ok();
  char* pool = nullptr;
  if (ctx.device != nullptr) {
    ctx.device->resetMarkers();
    marker_.assign(n, kNoMarker);
    markerQueue_.assign(n, -1);
    if (!ctx.deviceAwareMpi && hasMessages(plan)) {
      Status s = ctx.device->staging(ctx.staging.bytes(), &pool);
      if (!s.ok()) return s.withContext(contextText(plan, ctx));
    }
  }
  if (ctx.phaseTimes != nullptr) {
    runStart_ = Clock::now();
    stepStart_.assign(n, 0.0);
  }
  // Device runs start the pipeline afresh (a previous run may have left its last copies to the
  // device in it, with markers of that run); host runs never use it.
  if (ctx.device != nullptr) {
    staging_.begin(pool, ctx.staging, ctx.maxMessageBytes, ctx.device, ctx.comm);
    timeline_ = ctx.phaseTimes != nullptr ? &ctx.phaseTimes->staging : nullptr;
    staging_.timeStages(timeline_, runStart_);
    chunkReducer_.assign(n, kNoStep);
    chunkSource_.assign(n, kNoStep);
    unreduced_.clear();
    reduceTimes_.clear();
  }

  Waiter waiter(ctx.wait);  // reads the clock only once something has to be waited for
  ctx_ = &ctx;
  size_t nodeOpHead = 0, localHead = 0;
  while (done_ < n) {
    // Post every ready message first, then run the ready local steps, then the node ops. A host
    // copy or reduction holds this thread for its whole length: a message posted before it is in
    // flight meanwhile (its peer copies it, or the network moves it), posted after it the two take
    // turns (a broadcast root's copy to its own receive buffer ahead of its send made the 2-rank
    // broadcast 1.7x slower at 16 MiB). A node op blocks until the whole node team is in it, so it is
    // entered only when nothing else is waiting to start.
    while (readyHead_ < ready_.size() || localHead < pendingLocal_.size() || nodeOpHead < pendingNodeOps_.size()) {
      Status s;
      if (readyHead_ < ready_.size()) {
        s = dispatchReady(plan, ready_[readyHead_++], bind, ctx, /*inNodeOp=*/false);
      } else if (localHead < pendingLocal_.size()) {
        const StepId id = pendingLocal_[localHead++];
        s = ctx.device != nullptr ? startDeviceStep(plan, id, bind, ctx) : startStep(plan, id, bind, ctx);
      } else {
        s = runNodeOp(plan, pendingNodeOps_[nodeOpHead++], bind, ctx);
      }
      if (!s.ok()) return failPending(plan, bind, ctx, s);
    }
    if (done_ == n) break;
    if (ctx.device != nullptr) {
      bool progressed = false;
      Status s = pollDevice(plan, bind, ctx, &progressed);
      if (!s.ok()) return failPending(plan, bind, ctx, s);
      if (progressed) {
        waiter.progressed();
        continue;
      }
    }
    if (requests_.empty() && (ctx.device == nullptr || staging_.idle()) && gated_.empty()) {
      return failPending(plan, bind, ctx,
                         makeStatus(strataInternalError, "plan stalled with %zu of %zu steps done and nothing in flight",
                                    done_, n));
    }
    bool moved = false;
    Status tested = testMessages(plan, bind, ctx, ctx.blockInMpiWhenIdle && ctx.device == nullptr, &moved);
    if (!tested.ok()) return failPending(plan, bind, ctx, tested);
    if (moved) {
      waiter.progressed();
      continue;
    }
    // Nothing moved: wait (bounded, abortable), naming the oldest step still waiting, the one the
    // others wait behind.
    Status s = waiter.idle([&] {
      StepId oldest = requestStep_.empty() ? kNoStep : *std::min_element(requestStep_.begin(), requestStep_.end());
      if (ctx.device != nullptr) oldest = std::min(oldest, staging_.oldestStep());
      for (StepId g : gated_) oldest = std::min(oldest, g);
      if (oldest == kNoStep) oldest = 0;
      std::string what = strformat("%s; %zu of %zu steps done", plan.describe(oldest, bind.type).c_str(), done_, n);
      if (ctx.device != nullptr && !ctx.deviceAwareMpi && !staging_.idle()) what += "; " + staging_.describe();
      if (ctx.device != nullptr && ctx.deviceStallNote != nullptr && (staging_.deviceCopiesPending() || !gated_.empty())) {
        what += ctx.deviceStallNote;
      }
      return what;
    });
    if (!s.ok()) return failPending(plan, bind, ctx, s);
  }
  if (ctx.device != nullptr) {
    Status s = finishDevice(plan, ctx);
    if (!s.ok()) return s.withContext(contextText(plan, ctx));
  }
  return Status::Ok();
}

Status Executor::startStep(const Plan& plan, StepId id, const Bindings& bind, const ExecContext& ctx) {
  const Step& s = plan.steps[id];
  if (ctx.phaseTimes != nullptr) stepStart_[id] = std::chrono::duration<double>(Clock::now() - runStart_).count();
  const size_t elem = dataTypeSize(bind.type);
  switch (s.kind) {
    case StepKind::kSend:
    case StepKind::kRecv:
      return postMessage(plan, id, bind, ctx, static_cast<char*>(bind.at(s.kind == StepKind::kSend ? s.src : s.dst)));
    case StepKind::kReduce: {
      const void* inputs[kMaxReduceInputs];
      const Slice* in = plan.reduceInputs(s);
      if (s.inputCount == 0 || s.inputCount > static_cast<uint32_t>(kMaxReduceInputs)) {
        return makeStatus(strataInternalError, "%s has %u inputs", plan.describe(id, bind.type).c_str(), s.inputCount);
      }
      for (uint32_t k = 0; k < s.inputCount; ++k) inputs[k] = bind.at(in[k]);
      Status st = ctx.compute->reduce(bind.at(s.dst), inputs, static_cast<int>(s.inputCount), s.dst.count, bind.type,
                                      bind.op);
      if (!st.ok()) return st.withContext(plan.describe(id, bind.type));
      complete(plan, id);
      return Status::Ok();
    }
    case StepKind::kCopy: {
      Status st = copyInPieces(static_cast<char*>(bind.at(s.dst)), static_cast<const char*>(bind.at(s.src)),
                               s.dst.count * elem, ctx.compute);
      if (!st.ok()) return st.withContext(plan.describe(id, bind.type));
      complete(plan, id);
      return Status::Ok();
    }
    case StepKind::kDivide: {
      Status st = ctx.compute->divide(bind.at(s.dst), s.dst.count, bind.type, plan.divisor);
      if (!st.ok()) return st.withContext(plan.describe(id, bind.type));
      complete(plan, id);
      return Status::Ok();
    }
    case StepKind::kNodeOp: return runNodeOp(plan, id, bind, ctx);
  }
  return makeStatus(strataInternalError, "step %u has an unknown kind", id);
}

Status Executor::copyInPieces(char* dst, const char* src, size_t bytes, ComputeBackend* compute) {
  for (size_t done = 0;;) {
    const size_t n = std::min(kProgressBytes, bytes - done);
    STRATA_CHECK(compute->copy(dst + done, src + done, n));
    done += n;
    if (done >= bytes) return Status::Ok();
    // Only while messages are in flight: their completions, and the messages they make ready
    // (posted now; a local step they make ready waits its turn).
    if (!requests_.empty()) STRATA_CHECK(progressMessages());
  }
}

Status Executor::runNodeOp(const Plan& plan, StepId id, const Bindings& bind, const ExecContext& ctx) {
  const Step& s = plan.steps[id];
  if (ctx.phaseTimes != nullptr) stepStart_[id] = std::chrono::duration<double>(Clock::now() - runStart_).count();
  if (ctx.nodeOps == nullptr) {
    return makeStatus(strataInternalError, "%s: no node team to run it", plan.describe(id, bind.type).c_str());
  }
  if (ctx.device != nullptr) STRATA_CHECK(waitForInputs(plan, id, DeviceQueue::kCompute));
  NodeOpCall call;
  call.device = ctx.device;
  call.deviceStallNote = ctx.deviceStallNote;
  call.desc = &plan.nodeOps[s.nodeOp];
  for (int b = 0; b < kNumBufferIds; ++b) call.bases[b] = bind.base(static_cast<BufferId>(b));
  call.type = bind.type;
  call.op = bind.op;
  call.wait = ctx.wait;
  call.collective = ctx.collective;
  call.seq = ctx.seq;
  call.step = id;
  call.label = s.what;
  // While the team gathers, keep this rank's messages moving: a peer may need them to get here.
  call.progress = &Executor::progressDuringNodeOp;
  call.progressContext = this;
  Status st = ctx.nodeOps->run(call);
  if (st.ok()) st = progressError_;
  if (!st.ok()) return st.withContext(plan.describe(id, bind.type));
  if (ctx.device != nullptr) {
    // Its device work has completed (the team waits for it before each publish); the marker
    // orders the successors on the other queues all the same.
    STRATA_CHECK(ctx.device->record(DeviceQueue::kCompute, &marker_[id]));
    markerQueue_[id] = static_cast<int8_t>(DeviceQueue::kCompute);
  }
  complete(plan, id);
  return Status::Ok();
}

void Executor::complete(const Plan& plan, StepId id) {
  ++done_;
  if (ctx_ != nullptr && ctx_->phaseTimes != nullptr) {
    ctx_->phaseTimes->record(plan.steps[id].what, stepStart_[id],
                             std::chrono::duration<double>(Clock::now() - runStart_).count());
  }
  for (uint32_t k = plan.succBegin[id]; k < plan.succBegin[id + 1]; ++k) {
    const StepId next = plan.succ[k];
    if (--remaining_[next] == 0) ready_.push_back(next);
  }
}

Status Executor::failPending(const Plan& plan, const Bindings& bind, const ExecContext& ctx, Status why) {
  (void)bind;
  // Device work already enqueued still reads and writes the buffers and the staging: let it drain
  // (bounded) before the caller reuses them.
  if (ctx.device != nullptr) {
    (void)finishDevice(plan, ctx);
    staging_.abandon();
  }
  // Receives can be cancelled and completed locally; sends cannot be taken back reliably, so their
  // requests are released and the communicator is left in an error state by the caller.
  for (size_t r = 0; r < requests_.size(); ++r) {
    if (requests_[r] == MPI_REQUEST_NULL) continue;
    const Step& s = plan.steps[requestStep_[r]];
    if (s.kind == StepKind::kRecv) {
      MPI_Cancel(&requests_[r]);
      MPI_Request_free(&requests_[r]);
    } else {
      MPI_Request_free(&requests_[r]);
    }
  }
  requests_.clear();
  requestStep_.clear();
  return why.withContext(contextText(plan, ctx));
}


Status Executor::postMessage(const Plan& plan, StepId id, const Bindings& bind, const ExecContext& ctx, char* ptr) {
  const Step& s = plan.steps[id];
  const bool isSend = s.kind == StepKind::kSend;
  const size_t bytes = (isSend ? s.src.count : s.dst.count) * dataTypeSize(bind.type);
  const size_t pieces = pieceCount(bytes, ctx.maxMessageBytes);
  const int tag = callTag(s.tag, ctx.seq, ctx.tagUpperBound);
  for (size_t k = 0; k < pieces; ++k) {
    const size_t off = k * ctx.maxMessageBytes;
    const int len = static_cast<int>(std::min(ctx.maxMessageBytes, bytes - std::min(bytes, off)));
    MPI_Request req = MPI_REQUEST_NULL;
    const int rc = isSend ? MPI_Isend(ptr + off, len, MPI_BYTE, s.peer, tag, ctx.comm, &req)
                          : MPI_Irecv(ptr + off, len, MPI_BYTE, s.peer, tag, ctx.comm, &req);
    if (rc != MPI_SUCCESS) {
      return mpiError(isSend ? "MPI_Isend" : "MPI_Irecv", rc, STRATA_WHERE).withContext(plan.describe(id, bind.type));
    }
    requests_.push_back(req);
    requestStep_.push_back(id);
    ++pendingRequests_[id];
  }
  return Status::Ok();
}

Status Executor::testMessages(const Plan& plan, const Bindings& bind, const ExecContext& ctx, bool block, bool* moved) {
  *moved = false;
  completedIndices_.resize(requests_.size());
  statuses_.resize(requests_.size());
  int outcount = 0;
  const int rc = (block ? MPI_Waitsome : MPI_Testsome)(static_cast<int>(requests_.size()), requests_.data(), &outcount,
                                                        completedIndices_.data(), statuses_.data());
  if (rc != MPI_SUCCESS) {
    Status s = mpiError(block ? "MPI_Waitsome" : "MPI_Testsome", rc, STRATA_WHERE);
    // Which message failed, and how (a truncation names a receive matched by a larger message).
    for (int k = 0; rc == MPI_ERR_IN_STATUS && k < outcount && outcount != MPI_UNDEFINED; ++k) {
      const MPI_Status& st = statuses_[static_cast<size_t>(k)];
      if (st.MPI_ERROR == MPI_SUCCESS || st.MPI_ERROR == MPI_ERR_PENDING) continue;
      char text[MPI_MAX_ERROR_STRING];
      int len = 0;
      MPI_Error_string(st.MPI_ERROR, text, &len);
      const StepId id = requestStep_[static_cast<size_t>(completedIndices_[static_cast<size_t>(k)])];
      s = s.withContext(strformat("%s (source %d, tag %d): %.*s", plan.describe(id, bind.type).c_str(), st.MPI_SOURCE,
                                  st.MPI_TAG, len, text));
      break;
    }
    return s;
  }
  if (outcount == 0 || outcount == MPI_UNDEFINED) return Status::Ok();
  *moved = true;
  for (int k = 0; k < outcount; ++k) {
    const size_t r = static_cast<size_t>(completedIndices_[static_cast<size_t>(k)]);
    const StepId id = requestStep_[r];
    if (--pendingRequests_[id] == 0) complete(plan, id);
  }
  // Drop completed requests (MPI set them to MPI_REQUEST_NULL).
  size_t w = 0;
  for (size_t r = 0; r < requests_.size(); ++r) {
    if (requests_[r] != MPI_REQUEST_NULL) {
      requests_[w] = requests_[r];
      requestStep_[w] = requestStep_[r];
      ++w;
    }
  }
  requests_.resize(w);
  requestStep_.resize(w);
  return Status::Ok();
}

Status Executor::dispatchReady(const Plan& plan, StepId id, const Bindings& bind, const ExecContext& ctx, bool inNodeOp) {
  const StepKind kind = plan.steps[id].kind;
  if (kind == StepKind::kNodeOp) {
    pendingNodeOps_.push_back(id);
    return Status::Ok();
  }
  const bool message = kind == StepKind::kSend || kind == StepKind::kRecv;
  // A host copy or reduction holds the thread, so it waits until the ready messages are posted; in
  // a node op's wait, a device step waits too (the op's own work is on the compute queue).
  if (!message && (ctx.device == nullptr || inNodeOp)) {
    pendingLocal_.push_back(id);
    return Status::Ok();
  }
  return ctx.device != nullptr ? startDeviceStep(plan, id, bind, ctx) : startStep(plan, id, bind, ctx);
}

Status Executor::progressMessages() {
  const Plan& plan = *plan_;
  const Bindings& bind = *bind_;
  const ExecContext& ctx = *ctx_;
  bool moved = false;
  if (ctx.device != nullptr) STRATA_CHECK(pollDevice(plan, bind, ctx, &moved));
  if (requests_.empty()) {
    int flag = 0;  // nothing of this rank's in flight: drive MPI's progress for the peers all the same
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ctx.comm, &flag, MPI_STATUS_IGNORE);
  } else {
    STRATA_CHECK(testMessages(plan, bind, ctx, /*block=*/false, &moved));
  }
  // Messages that became ready are posted now, not after the op: a peer of another lane may need
  // one of them to reach its own node op, which this rank's team waits for.
  while (readyHead_ < ready_.size()) STRATA_CHECK(dispatchReady(plan, ready_[readyHead_++], bind, ctx, /*inNodeOp=*/true));
  return Status::Ok();
}

void Executor::progressDuringNodeOp(void* self) {
  auto* e = static_cast<Executor*>(self);
  if (!e->progressError_.ok()) return;
  e->progressError_ = e->progressMessages();
}

}  // namespace strata
