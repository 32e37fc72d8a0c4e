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
  if (ctx.phaseTimes != nullptr) stepStart_[id] = std::chrono::duration<double>(Clock::now() - runStart_).count();
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
      ExecContext local = ctx;
      local.compute = &dev.compute();
      local.device = nullptr;
      // The host path's compute cases, run against the device's backend; they complete the step.
      Status st = startStep(plan, id, bind, local);
      if (!st.ok()) return st;
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
      const int tag = foldTag(s.tag, ctx.tagUpperBound);
      // The copies wait for the step's inputs on their queue (a receive's slice may still be read
      // by earlier steps on other queues).
      STRATA_CHECK(waitForInputs(plan, id, isSend ? DeviceQueue::kToHost : DeviceQueue::kToDevice));
      if (isSend) {
        staging_.addSend(id, ptr, bytes, s.peer, tag);
      } else {
        staging_.addRecv(id, ptr, bytes, s.peer, tag);
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
  STRATA_CHECK(staging_.poll(progressed, &stagedDone_));
  for (const StagingPipeline::Completed& c : stagedDone_) {
    if (c.marker != kNoMarker) {  // a receive: its successors wait for the last copy to the device
      marker_[c.step] = c.marker;
      markerQueue_[c.step] = static_cast<int8_t>(DeviceQueue::kToDevice);
    }
    complete(plan, c.step);
  }
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
          return done || !polled.ok();
        },
        [&] { return strformat("the device's %s queue", deviceQueueName(static_cast<DeviceQueue>(l))); }));
    STRATA_CHECK(polled);
  }
  return Status::Ok();
}

}  // namespace strata
