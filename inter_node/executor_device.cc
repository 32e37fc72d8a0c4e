// The executor's device mode (inter_node/executor.h). Local steps are enqueued on the device's
// queues and count as done once enqueued: a successor on another queue waits for the step's marker
// on the device, a successor on the host (a message) waits until the marker has completed. Messages
// either pass device pointers to a device-aware MPI once their inputs are complete, or are staged:
// a send's chunks are copied to pinned memory on the to-host queue and each is sent as soon as its
// copy completes, a receive's chunks are each copied to the device on the to-device queue as soon
// as they arrive. Chunks of consecutive messages overlap (inter_node/staging_pipeline.h).
#include <algorithm>
#include <chrono>

#include "inter_node/executor.h"
#include "inter_node/mpi_check.h"

namespace strata {

using Clock = std::chrono::steady_clock;

Status Executor::waitForInputs(const Plan& plan, StepId id, DeviceQueue queue) {
  const Step& s = plan.steps[id];
  for (uint32_t k = 0; k < s.depCount; ++k) {
    const StepId p = plan.deps[s.depBegin + k];
    if (marker_[p] == kNoMarker || markerQueue_[p] == static_cast<int8_t>(queue)) continue;  // queues are in order
    STRATA_CHECK(ctx_->device->waitOn(queue, marker_[p]));
  }
  return Status::Ok();
}

Status Executor::inputsDone(const Plan& plan, StepId id, bool* done) {
  const Step& s = plan.steps[id];
  *done = true;
  for (uint32_t k = 0; k < s.depCount; ++k) {
    const StepId p = plan.deps[s.depBegin + k];
    if (marker_[p] == kNoMarker) continue;
    bool finished = false;
    STRATA_CHECK(ctx_->device->query(marker_[p], &finished));
    if (!finished) {
      *done = false;
      return Status::Ok();
    }
    marker_[p] = kNoMarker;  // completed for good: nobody needs to wait for it again
  }
  return Status::Ok();
}

Status Executor::startDeviceStep(const Plan& plan, StepId id, const Bindings& bind, const ExecContext& ctx) {
  const Step& s = plan.steps[id];
  // A reduction that took its receive's chunks as they landed started with the first of them.
  if (ctx.phaseTimes != nullptr && chunkSource_[id] == kNoStep) {
    stepStart_[id] = std::chrono::duration<double>(Clock::now() - runStart_).count();
  }
  const size_t elem = dataTypeSize(bind.type);
  DeviceRuntime& dev = *ctx.device;
  auto recordOn = [&](DeviceQueue queue) -> Status {
    STRATA_CHECK(dev.record(queue, &marker_[id]));
    markerQueue_[id] = static_cast<int8_t>(queue);
    return Status::Ok();
  };
  switch (s.kind) {
    case StepKind::kReduce:
    case StepKind::kCopy:
    case StepKind::kDivide: {
      STRATA_CHECK(waitForInputs(plan, id, DeviceQueue::kCompute));
      if (s.kind == StepKind::kReduce && chunkSource_[id] != kNoStep) {
        // Its receive's chunks were reduced as they landed: only the ones not yet taken are left.
        for (size_t u = 0; u < unreduced_.size(); ++u) {
          if (unreduced_[u].step == chunkSource_[id]) STRATA_CHECK(reduceChunk(plan, id, unreduced_[u], bind));
        }
        unreduced_.erase(std::remove_if(unreduced_.begin(), unreduced_.end(),
                                        [&](const StagingPipeline::Landed& c) { return c.step == chunkSource_[id]; }),
                         unreduced_.end());
        STRATA_CHECK(recordOn(DeviceQueue::kCompute));
        complete(plan, id);
        return Status::Ok();
      }
      DeviceMarker begin = kNoMarker;
      if (s.kind == StepKind::kReduce) STRATA_CHECK(markReduceStart(&begin));
      ExecContext local = ctx;
      local.compute = &dev.compute();
      local.device = nullptr;
      // The host path's compute cases, run against the device's backend; they complete the step.
      Status st = startStep(plan, id, bind, local);
      if (!st.ok()) return st;
      if (begin != kNoMarker) STRATA_CHECK(timeReduce(begin, s.dst.count * elem));
      return recordOn(DeviceQueue::kCompute).withContext(plan.describe(id, bind.type));
    }
    case StepKind::kSend:
    case StepKind::kRecv: {
      const bool isSend = s.kind == StepKind::kSend;
      char* ptr = static_cast<char*>(bind.at(isSend ? s.src : s.dst));
      if (ctx.deviceAwareMpi) {
        bool ready = false;
        STRATA_CHECK(inputsDone(plan, id, &ready));
        if (!ready) {
          gated_.push_back(id);
          return Status::Ok();
        }
        return postMessage(plan, id, bind, ctx, ptr);
      }
      const size_t bytes = (isSend ? s.src.count : s.dst.count) * elem;
      const int tag = callTag(s.tag, ctx.seq, ctx.tagUpperBound);
      // The copies wait for the step's inputs on their queue (a receive's slice may still be read
      // by earlier steps on other queues).
      STRATA_CHECK(waitForInputs(plan, id, isSend ? DeviceQueue::kToHost : DeviceQueue::kToDevice));
      if (isSend) {
        staging_.addSend(id, ptr, bytes, s.peer, tag, s.tag);
      } else {
        staging_.addRecv(id, ptr, bytes, s.peer, tag, s.tag);
        chunkReducer_[id] = chunkReducerOf(plan, id, staging_.chunkBytes(bytes), elem);
      }
      return Status::Ok();
    }
    case StepKind::kNodeOp: return runNodeOp(plan, id, bind, ctx);
  }
  return makeStatus(strataInternalError, "step %u has an unknown kind", id);
}

Status Executor::pollDevice(const Plan& plan, const Bindings& bind, const ExecContext& ctx, bool* progressed) {
  *progressed = false;
  stagedDone_.clear();
  landed_.clear();
  STRATA_CHECK(staging_.poll(progressed, &landed_, &stagedDone_));
  for (const StagingPipeline::Landed& c : landed_) {
    if (chunkReducer_[c.step] != kNoStep) unreduced_.push_back(c);
  }
  if (!unreduced_.empty()) STRATA_CHECK(reduceLandedChunks(plan, bind));
  for (const StagingPipeline::Completed& c : stagedDone_) {
    if (c.marker != kNoMarker) {  // a receive: its successors wait for the last copy to the device
      marker_[c.step] = c.marker;
      markerQueue_[c.step] = static_cast<int8_t>(DeviceQueue::kToDevice);
      // Chunks its reduction did not begin to take wait for the whole reduction.
      const StepId x = chunkReducer_[c.step];
      if (x != kNoStep && chunkSource_[x] != c.step) {
        unreduced_.erase(std::remove_if(unreduced_.begin(), unreduced_.end(),
                                        [&](const StagingPipeline::Landed& u) { return u.step == c.step; }),
                         unreduced_.end());
      }
    }
    complete(plan, c.step);
  }
  if (timeline_ != nullptr) STRATA_CHECK(pollReduceTimes(false));
  // Device-aware messages whose inputs are now complete on the device.
  for (size_t g = 0; g < gated_.size();) {
    bool ready = false;
    STRATA_CHECK(inputsDone(plan, gated_[g], &ready));
    if (!ready) {
      ++g;
      continue;
    }
    const StepId id = gated_[g];
    gated_.erase(gated_.begin() + static_cast<std::ptrdiff_t>(g));
    const Step& s = plan.steps[id];
    STRATA_CHECK(postMessage(plan, id, bind, ctx, static_cast<char*>(bind.at(s.kind == StepKind::kSend ? s.src : s.dst))));
    *progressed = true;
  }
  return Status::Ok();
}

Status Executor::finishDevice(const Plan& plan, const ExecContext& ctx) {
  (void)plan;
  DeviceMarker last[kNumDeviceQueues];
  for (int l = 0; l < kNumDeviceQueues; ++l) STRATA_CHECK(ctx.device->record(static_cast<DeviceQueue>(l), &last[l]));
  // Not abortable: work already enqueued reads and writes the buffers, the staging and the node's
  // slots, so it must finish before any of them is released or reused (after a failure too).
  WaitPolicy drain = ctx.wait;
  drain.abortFlag = nullptr;
  for (int l = 0; l < kNumDeviceQueues; ++l) {
    Status polled;
    STRATA_CHECK(waitUntil(
        drain,
        [&] {
          bool done = false;
          polled = ctx.device->query(last[l], &done);
          // With a timeline, the stages' ends are seen as they come, not all at the drain's end.
          if (polled.ok() && timeline_ != nullptr) polled = staging_.drained();
          if (polled.ok() && timeline_ != nullptr) polled = pollReduceTimes(false);
          return done || !polled.ok();
        },
        [&] {
          return strformat("the device's %s queue%s", deviceQueueName(static_cast<DeviceQueue>(l)),
                           ctx.deviceStallNote != nullptr ? ctx.deviceStallNote : "");
        }));
    STRATA_CHECK(polled);
  }
  if (timeline_ != nullptr) {
    STRATA_CHECK(staging_.drained());
    STRATA_CHECK(pollReduceTimes(true));
  }
  return Status::Ok();
}

// ---- Reductions chunk by chunk -------------------------------------------------------------------
// A staged receive whose successor reduces what it received need not wait for its last chunk:
// each chunk's share of the reduction runs on the compute queue behind that chunk's copy to the
// device, so the copy to the host of chunk k+1, the transfer of chunk k and the reduction of chunk
// k-1 overlap (002, "Pipelining"). The share of a chunk reads only the chunk's elements of every
// input and writes only the same elements of the output; it is enqueued once every other input of
// the reduction is complete (the receive is its last unfinished predecessor).

StepId Executor::chunkReducerOf(const Plan& plan, StepId recv, size_t chunkBytes, size_t elem) const {
  const Slice& got = plan.steps[recv].dst;
  if (chunkBytes == 0 || chunkBytes % elem != 0 || got.count * elem <= chunkBytes) return kNoStep;
  // Each slice is the received one or apart from it, and the output is each input or apart from it.
  auto apart = [](const Slice& a, const Slice& b) { return a == b || !a.overlaps(b); };
  for (uint32_t k = plan.succBegin[recv]; k < plan.succBegin[recv + 1]; ++k) {
    const StepId x = plan.succ[k];
    const Step& s = plan.steps[x];
    if (s.kind != StepKind::kReduce || s.dst.count != got.count || s.inputCount == 0 ||
        s.inputCount > static_cast<uint32_t>(kMaxReduceInputs)) {
      continue;
    }
    const Slice* in = plan.reduceInputs(s);
    bool reads = false, clean = apart(s.dst, got);
    for (uint32_t j = 0; j < s.inputCount; ++j) {
      reads = reads || in[j] == got;
      clean = clean && apart(in[j], got) && apart(s.dst, in[j]) && in[j].count == got.count;
    }
    if (reads && clean) return x;
  }
  return kNoStep;
}

Status Executor::reduceLandedChunks(const Plan& plan, const Bindings& bind) {
  size_t w = 0;
  for (size_t u = 0; u < unreduced_.size(); ++u) {
    const StagingPipeline::Landed& c = unreduced_[u];
    const StepId x = chunkReducer_[c.step];
    if (chunkSource_[x] == kNoStep && remaining_[x] == 1) {
      // The receive is the reduction's last unfinished input: the others are complete or ordered
      // before the compute queue from here on.
      STRATA_CHECK(waitForInputs(plan, x, DeviceQueue::kCompute));
      chunkSource_[x] = c.step;
      if (timeline_ != nullptr) stepStart_[x] = std::chrono::duration<double>(Clock::now() - runStart_).count();
    }
    if (chunkSource_[x] == c.step) {
      STRATA_CHECK(reduceChunk(plan, x, c, bind));
      continue;
    }
    unreduced_[w++] = c;
  }
  unreduced_.resize(w);
  return Status::Ok();
}

Status Executor::reduceChunk(const Plan& plan, StepId id, const StagingPipeline::Landed& chunk, const Bindings& bind) {
  const Step& s = plan.steps[id];
  const size_t elem = dataTypeSize(bind.type);
  const size_t first = chunk.offset / elem, count = chunk.bytes / elem;
  DeviceRuntime& dev = *ctx_->device;
  STRATA_CHECK(dev.waitOn(DeviceQueue::kCompute, chunk.marker));
  DeviceMarker begin = kNoMarker;
  STRATA_CHECK(markReduceStart(&begin));
  if (timeline_ != nullptr) ++timeline_->chunkReductions;
  const void* inputs[kMaxReduceInputs];
  const Slice* in = plan.reduceInputs(s);
  for (uint32_t k = 0; k < s.inputCount; ++k) inputs[k] = bind.at(in[k].sub(first, count));
  Status st = dev.compute().reduce(bind.at(s.dst.sub(first, count)), inputs, static_cast<int>(s.inputCount), count,
                                   bind.type, bind.op);
  if (!st.ok()) return st.withContext(strformat("%s, elements %zu..%zu", plan.describe(id, bind.type).c_str(), first,
                                                first + count));
  return begin == kNoMarker ? Status::Ok() : timeReduce(begin, chunk.bytes);
}

// ---- The reduce stage's timeline -----------------------------------------------------------------
// A reduction's interval runs from the compute queue reaching it (a marker recorded just before
// it) to its end (one just after), both as the host sees them.

Status Executor::markReduceStart(DeviceMarker* begin) {
  *begin = kNoMarker;
  if (timeline_ == nullptr) return Status::Ok();
  return ctx_->device->record(DeviceQueue::kCompute, begin);
}

Status Executor::timeReduce(DeviceMarker begin, size_t bytes) {
  DeviceMarker end = kNoMarker;
  STRATA_CHECK(ctx_->device->record(DeviceQueue::kCompute, &end));
  reduceTimes_.push_back({begin, end, -1.0, bytes});
  return Status::Ok();
}

Status Executor::pollReduceTimes(bool flush) {
  while (!reduceTimes_.empty()) {
    TimedReduce& t = reduceTimes_.front();
    const double now = std::chrono::duration<double>(Clock::now() - runStart_).count();
    bool done = flush;
    if (t.started < 0) {
      if (!done) STRATA_CHECK(ctx_->device->query(t.begin, &done));
      if (!done) return Status::Ok();
      t.started = now;
    }
    done = flush;
    if (!done) STRATA_CHECK(ctx_->device->query(t.end, &done));
    if (!done) return Status::Ok();
    timeline_->intervals[StageTimeline::kReduce].push_back({t.started, now, t.bytes});
    reduceTimes_.pop_front();
  }
  return Status::Ok();
}

}  // namespace strata
