// Streams: each a FIFO run by its own worker thread, with CUDA's ordering rules.
//
// - An operation starts after the one before it on its stream completed and after every
//   dependency it carries (event waits; the legacy default stream's implicit synchronisation:
//   work on stream 0 waits for all earlier work on the device's blocking streams, and work on a
//   blocking stream waits for earlier work on stream 0; cudaStreamNonBlocking streams take part
//   in neither).
// - Each operation starts after a random delay (CUDA_SIM_JITTER_US), so streams that CUDA does not
//   order complete in varying order and a missing dependency shows up as a wrong value.
// - Under CUDA_DEVICE_MAX_CONNECTIONS=N the streams of a device share N hardware queues (stream k,
//   in creation order, feeds queue k mod N; N = 1: one queue for all): an operation starts only
//   after every operation enqueued before it into its queue, from any stream, has started, and one
//   that cannot start (behind its own stream's work, an event, or a value not yet written) holds
//   back everything after it. Started operations still run concurrently.
// - Host waits are bounded (CUDA_SIM_SYNC_TIMEOUT); when one expires the simulator says what every
//   stream is stuck on.
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstring>
#include <random>
#include <map>
#include <set>

#include "sim.h"

namespace cuda_sim {
namespace {

struct Registry {
  std::mutex mutex;
  std::set<CUstream_st*> streams;
  std::set<cudaEvent_t> events;
  std::vector<CUstream_st*> legacy;  // per device, created on first use
  // CUDA_DEVICE_MAX_CONNECTIONS, per (device, hardware queue): operations enqueued, and started
  // (under doneMutex); streams created, per device (under mutex).
  std::map<std::pair<int, int>, uint64_t> queueIssued, queueStarted;
  std::map<int, int> streamsCreated;
  // Every completion notifies here: workers waiting on other streams, and host waits.
  std::mutex doneMutex;
  std::condition_variable doneCv;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: workers outlive static destruction
  return *r;
}

thread_local std::vector<CUstream_st*> tPerThread;  // per device

bool completedUpTo(const Dep& d) { return d.stream->completed.load(std::memory_order_acquire) >= d.seq; }

void notifyDone() {
  std::lock_guard<std::mutex> lock(registry().doneMutex);
  registry().doneCv.notify_all();
}

// What is holding `s` now, for diagnoses ("" when it is idle).
std::string blockedOn(CUstream_st* s) {
  std::lock_guard<std::mutex> lock(s->mutex);
  if (s->running == nullptr && s->queue.empty()) return "";
  const Op* op = s->running != nullptr ? s->running.get() : s->queue.front().get();
  std::string r = s->name + " at " + op->what;
  for (const Dep& d : op->deps) {
    if (!completedUpTo(d)) r += " (waiting for " + d.stream->name + " to reach operation " + std::to_string(d.seq) + ")";
  }
  if (op->issued != 0 && !op->queueTurn.value.load(std::memory_order_acquire)) {
    r += " (operation " + std::to_string(op->issued) + " of hardware queue " + std::to_string(s->connection) +
         ", CUDA_DEVICE_MAX_CONNECTIONS: waiting for the operations enqueued before it from other streams to start)";
  }
  return r;
}

void workerLoop(CUstream_st* s) {
  std::mt19937 rng(static_cast<unsigned>(getpid()) * 7919u + static_cast<unsigned>(reinterpret_cast<uintptr_t>(s) >> 4));
  for (;;) {
    std::shared_ptr<Op> op;
    {
      std::unique_lock<std::mutex> lock(s->mutex);
      s->cv.wait(lock, [&] { return !s->queue.empty() || s->destroying; });
      if (s->queue.empty()) break;
      op = s->queue.front();
      s->running = op;
    }
    // Its hardware queue: everything enqueued into it before this operation has started.
    if (op->issued != 0) {
      std::unique_lock<std::mutex> lock(registry().doneMutex);
      registry().doneCv.wait(lock, [&] { return registry().queueStarted[{s->device, s->connection}] + 1 == op->issued; });
      op->queueTurn.value.store(true, std::memory_order_release);
    }
    // Dependencies on other streams.
    for (const Dep& d : op->deps) {
      std::unique_lock<std::mutex> lock(registry().doneMutex);
      registry().doneCv.wait(lock, [&] { return completedUpTo(d); });
    }
    if (options().jitterMicros > 0) {
      const unsigned us = rng() % (options().jitterMicros + 1);
      if (us > 0) preciseSleep(us);
    }
    // After a sticky error the device runs nothing more; waits still complete, so no host hangs.
    if (op->kind == Op::kWaitValue) {
      while (!op->waitSatisfied() && sticky() == cudaSuccess) std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    if (op->issued != 0) {  // started: the queue moves on
      {
        std::lock_guard<std::mutex> lock(registry().doneMutex);
        registry().queueStarted[{s->device, s->connection}] = op->issued;
      }
      notifyDone();
    }
    if ((sticky() == cudaSuccess || op->kind == Op::kMarker || op->kind == Op::kWaitEvent) && op->kind != Op::kWaitValue &&
        op->run) {
      op->run();
    }
    {
      std::lock_guard<std::mutex> lock(s->mutex);
      s->queue.pop_front();
      s->running = nullptr;
      s->completed.fetch_add(1, std::memory_order_acq_rel);
    }
    notifyDone();
  }
  // Destroyed and drained: no synchronisation needs it any more. Its memory is kept: an event or a
  // dependency may still name it.
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().streams.erase(s);
}

}  // namespace

bool Op::waitSatisfied() const {
  uint64_t v = 0;
  bool isDevice = false;
  const char* q = backingOf(waitAddress, wait64 ? 8 : 4, &isDevice);
  if (q == nullptr) return true;
  if (wait64) {
    v = __atomic_load_n(reinterpret_cast<const uint64_t*>(q), __ATOMIC_ACQUIRE);
  } else {
    v = __atomic_load_n(reinterpret_cast<const uint32_t*>(q), __ATOMIC_ACQUIRE);
  }
  const uint64_t want = waitValue;
  switch (waitFlags & 0xf) {
    case CU_STREAM_WAIT_VALUE_GEQ:
      return wait64 ? static_cast<int64_t>(v - want) >= 0 : static_cast<int32_t>(static_cast<uint32_t>(v) - static_cast<uint32_t>(want)) >= 0;
    case CU_STREAM_WAIT_VALUE_EQ: return v == want;
    case CU_STREAM_WAIT_VALUE_AND: return (v & want) != 0;
    case CU_STREAM_WAIT_VALUE_NOR: return ~(v | want) != 0 && (wait64 || (~(v | want) & 0xffffffffu) != 0);
    default: return true;  // rejected when enqueued
  }
}

CUstream_st* createStream(int device, unsigned flags, bool legacy) {
  auto* s = new CUstream_st;
  s->device = device;
  s->flags = flags;
  s->legacy = legacy;
  char name[96];
  if (legacy) {
    std::snprintf(name, sizeof name, "the legacy default stream of device %d", device);
  } else {
    std::snprintf(name, sizeof name, "stream %p (device %d, %s)", static_cast<void*>(s), device,
                  (flags & cudaStreamNonBlocking) ? "non-blocking" : "blocking");
  }
  s->name = name;
  {
    std::lock_guard<std::mutex> lock(registry().mutex);
    const int k = registry().streamsCreated[device]++;
    s->connection = options().connections > 0 ? k % options().connections : 0;
  }
  s->worker = std::thread(workerLoop, s);
  s->worker.detach();
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().streams.insert(s);
  return s;
}

cudaError_t destroyStream(CUstream_st* s) {
  // CUDA: cudaStreamDestroy returns at once; the stream's work still completes, and until it has
  // the stream takes part in device synchronisation (its worker leaves the registry when drained).
  std::lock_guard<std::mutex> lock(s->mutex);
  s->destroying = true;
  s->cv.notify_all();
  return cudaSuccess;
}

CUstream_st* resolveStream(cudaStream_t handle) {
  const int device = currentDevice();
  Registry& r = registry();
  if (handle == nullptr || handle == cudaStreamLegacy) {
    static std::mutex creating;
    std::lock_guard<std::mutex> once(creating);
    CUstream_st* s = nullptr;
    {
      std::lock_guard<std::mutex> lock(r.mutex);
      if (r.legacy.size() <= static_cast<size_t>(device)) r.legacy.resize(static_cast<size_t>(device) + 1, nullptr);
      s = r.legacy[static_cast<size_t>(device)];
    }
    if (s == nullptr) {
      s = createStream(device, 0, true);
      std::lock_guard<std::mutex> lock(r.mutex);
      r.streams.erase(s);  // the legacy stream is found through `legacy`, and is never destroyed
      r.legacy[static_cast<size_t>(device)] = s;
    }
    return s;
  }
  if (handle == cudaStreamPerThread) {
    if (tPerThread.size() <= static_cast<size_t>(device)) tPerThread.resize(static_cast<size_t>(device) + 1, nullptr);
    if (tPerThread[static_cast<size_t>(device)] == nullptr) tPerThread[static_cast<size_t>(device)] = createStream(device, 0, false);
    return tPerThread[static_cast<size_t>(device)];
  }
  std::lock_guard<std::mutex> lock(r.mutex);
  bool destroyed = r.streams.count(handle) == 0;
  if (!destroyed) {
    std::lock_guard<std::mutex> streamLock(handle->mutex);
    destroyed = handle->destroying;
  }
  if (destroyed) {
    fail(cudaErrorInvalidResourceHandle, "stream %p: not a live stream of this process", static_cast<void*>(handle));
    return nullptr;
  }
  return handle;
}

void registerEvent(cudaEvent_t e, bool live) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  if (live) {
    registry().events.insert(e);
  } else {
    registry().events.erase(e);
  }
}

bool liveEvent(cudaEvent_t e) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  return registry().events.count(e) != 0;
}

cudaError_t enqueue(CUstream_st* s, std::shared_ptr<Op> op, uint64_t* seq, bool launchBlocking) {
  if (seq != nullptr) *seq = 0;
  if (s->capture == cudaStreamCaptureStatusActive) {
    s->captured.push_back(std::move(op));
    return cudaSuccess;
  }
  if (s->capture == cudaStreamCaptureStatusInvalidated) {
    return fail(cudaErrorStreamCaptureInvalidated, "%s: its capture was invalidated", s->name.c_str());
  }
  // The legacy default stream's implicit synchronisation with the device's blocking streams. The
  // snapshot of the others and the push are one step, so two threads enqueueing on stream 0 and on
  // a blocking stream at once are ordered one way or the other, as on a GPU.
  static std::mutex implicitOrder;
  std::unique_lock<std::mutex> ordering(implicitOrder, std::defer_lock);
  if (s->legacy || !(s->flags & cudaStreamNonBlocking)) {
    ordering.lock();
    std::vector<CUstream_st*> others;
    {
      std::lock_guard<std::mutex> lock(registry().mutex);
      if (s->legacy) {
        for (CUstream_st* o : registry().streams) {
          if (o != s && o->device == s->device && !o->legacy && !(o->flags & cudaStreamNonBlocking)) others.push_back(o);
        }
      } else if (registry().legacy.size() > static_cast<size_t>(s->device) && registry().legacy[static_cast<size_t>(s->device)] != nullptr) {
        others.push_back(registry().legacy[static_cast<size_t>(s->device)]);
      }
    }
    for (CUstream_st* o : others) {
      std::lock_guard<std::mutex> lock(o->mutex);
      if (o->enqueued > o->completed.load()) op->deps.push_back(Dep{o, o->enqueued});
    }
  }
  // The stream's hardware queue: a place taken and the push made as one step, so the queue's order
  // is the order operations reach their streams.
  static std::mutex queueOrder;
  std::unique_lock<std::mutex> queueing(queueOrder, std::defer_lock);
  if (options().connections > 0) {
    queueing.lock();
    std::lock_guard<std::mutex> lock(registry().doneMutex);
    op->issued = ++registry().queueIssued[{s->device, s->connection}];
  }
  uint64_t mine = 0;
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    s->queue.push_back(op);
    mine = ++s->enqueued;
    s->cv.notify_all();
  }
  if (queueing.owns_lock()) queueing.unlock();
  if (ordering.owns_lock()) ordering.unlock();
  if (seq != nullptr) *seq = mine;
  if (launchBlocking && options().launchBlocking) return waitStream(s, mine, "CUDA_LAUNCH_BLOCKING");
  return cudaSuccess;
}

double hostWaitBound() { return options().syncTimeout; }

cudaError_t waitStream(CUstream_st* s, uint64_t seq, const char* caller) {
  Registry& r = registry();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(hostWaitBound());
  std::unique_lock<std::mutex> lock(r.doneMutex);
  const Dep d{s, seq};
  if (!r.doneCv.wait_until(lock, deadline, [&] { return completedUpTo(d); })) {
    lock.unlock();
    setSticky(cudaErrorLaunchTimeout, "%s waited %.0f s (CUDA_SIM_SYNC_TIMEOUT) for %s; it is at %s", caller,
              hostWaitBound(), s->name.c_str(), blockedOn(s).c_str());
    return sticky();
  }
  return sticky();
}

cudaError_t synchronizeStream(CUstream_st* s, const char* caller) {
  uint64_t seq = 0;
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    seq = s->enqueued;
  }
  return waitStream(s, seq, caller);
}

// Whether queued device work (a cuStreamWriteValue) will write `address`: a wait for it is then
// released without the host.
bool pendingWriteTo(const void* address) {
  std::vector<CUstream_st*> all;
  {
    std::lock_guard<std::mutex> lock(registry().mutex);
    all.assign(registry().streams.begin(), registry().streams.end());
    for (CUstream_st* l : registry().legacy) {
      if (l != nullptr) all.push_back(l);
    }
  }
  for (CUstream_st* s : all) {  // the caller holds no stream's lock
    std::lock_guard<std::mutex> lock(s->mutex);
    for (const auto& op : s->queue) {
      if (op->kind == Op::kWriteValue && op->waitAddress == address) return true;
    }
  }
  return false;
}

cudaError_t loadKernel(const void* kernel, int device, const char* name, const char* what) {
  if (kernel == nullptr || !options().lazyLoading) return cudaSuccess;
  static std::mutex mutex;
  static std::set<std::pair<const void*, int>>* loaded = new std::set<std::pair<const void*, int>>;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!loaded->insert({kernel, device}).second) return cudaSuccess;
  }
  char caller[200];
  std::snprintf(caller, sizeof caller, "loading kernel %s at %s (lazy loading: CUDA_MODULE_LOADING=EAGER loads every kernel at start)",
                name, what);
  return synchronizeDevice(device, caller, true);
}

cudaError_t synchronizeDevice(int device, const char* caller, bool implicit) {
  std::vector<std::pair<CUstream_st*, uint64_t>> targets;
  {
    std::lock_guard<std::mutex> lock(registry().mutex);
    for (CUstream_st* s : registry().streams) {
      if (s->device == device) targets.push_back({s, 0});
    }
    if (registry().legacy.size() > static_cast<size_t>(device) && registry().legacy[static_cast<size_t>(device)] != nullptr) {
      targets.push_back({registry().legacy[static_cast<size_t>(device)], 0});
    }
  }
  for (auto& [s, seq] : targets) {
    std::vector<std::shared_ptr<Op>> waits;  // taken under the stream's lock, judged after it
    {
      std::lock_guard<std::mutex> lock(s->mutex);
      seq = s->enqueued;
      if (!implicit) continue;
      for (const auto& op : s->queue) {
        if (op->kind == Op::kWaitValue) waits.push_back(op);
      }
    }
    // A GPU would wait for this stream's wait-value operation, which no one can release while
    // the thread that would write the value is the one waiting here.
    for (const auto& op : waits) {
      if (!op->waitSatisfied() && !pendingWriteTo(op->waitAddress)) {
        setSticky(cudaErrorNotPermitted,
                  "%s on device %d must wait for the device to be idle (CUDA synchronises it implicitly), but %s is "
                  "held by %s until a value is written: on a GPU this call would deadlock if the writer is waiting "
                  "for it",
                  caller, device, s->name.c_str(), op->what.c_str());
        return sticky();
      }
    }
  }
  for (auto& [s, seq] : targets) {
    if (const cudaError_t rc = waitStream(s, seq, caller); rc != cudaSuccess) return rc;
  }
  return sticky();
}

}  // namespace cuda_sim

extern "C" __attribute__((visibility("default"))) void cudaSimResetCounters(void) {
  cuda_sim::processCounters().reset();
  auto& r = cuda_sim::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (CUstream_st* s : r.streams) s->counters.reset();
  for (CUstream_st* s : r.legacy) {
    if (s != nullptr) s->counters.reset();
  }
}
