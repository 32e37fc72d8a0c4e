// The kernel engine: runs a launch's blocks with CUDA's geometry.
//
// A block runs on one OS thread, its threads as fibers (fiber.h) that switch only at barriers,
// warp intrinsics and __nanosleep; __shared__ variables are that OS thread's thread_local
// storage, so the block's fibers share them and other blocks (on other OS threads) do not. The
// blocks of a grid are claimed one at a time by the stream's worker and, for as long as there are
// blocks left, by up to CUDA_SIM_BLOCK_THREADS - 1 helper threads: blocks run concurrently and in
// no fixed order, as on a GPU.
//
// Thread contract of the barriers: __syncthreads waits for every thread of the block that has not
// exited; warp intrinsics wait for every lane of the warp that has not exited. A barrier that some
// live thread never reaches is the hang of a GPU: here a sticky cudaErrorLaunchFailure naming it.
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "fiber.h"
#include "sim.h"

namespace cuda_sim {

thread_local KernelTls tls __attribute__((tls_model("initial-exec")));

namespace {

constexpr size_t kStackBytes = 64 * 1024;
constexpr unsigned kMaxThreads = 1024;

struct Launch {
  LaunchSpec spec;
  const std::function<void()>* body = nullptr;
  unsigned long long blocks = 0;
  std::atomic<unsigned long long> nextBlock{0};
  std::atomic<bool> aborted{false};
  int device = 0;  // the GPU of the launch's stream
  std::atomic<unsigned long long> bytesRead[kMemoryClasses] = {}, bytesWritten[kMemoryClasses] = {};
  // Helper threads that took this launch and have not finished with it.
  std::atomic<int> helpers{0};
};

struct Barrier {
  unsigned arrived = 0;
  unsigned expected = 0;
  uint64_t generation = 0;
};

struct SimThread {
  ThreadContext ctx;
  void* sp = nullptr;
  enum State { kReady, kWaiting, kDone } state = kReady;
  const Barrier* waitingOn = nullptr;
  uint64_t waitGeneration = 0;
  unsigned sleepNs = 0;  // in __nanosleep: how long it asked to sleep
};

struct BlockRun {
  Launch* launch = nullptr;
  SimThread threads[kMaxThreads];
  unsigned count = 0;
  unsigned live = 0;
  Barrier block;
  Barrier warps[kMaxThreads / 32];
  unsigned char exchange[kMaxThreads / 32][32][16];
  void* schedulerSp = nullptr;
  SimThread* current = nullptr;
  bool faulted = false;
};

// What one running block needs: its threads' fiber stacks and its state. Engines are pooled
// process-wide, so the memory follows the number of blocks running at once, not the number of
// streams that ever ran one.
struct Engine {
  char* stacks = nullptr;
  BlockRun* run = nullptr;
  Engine() {
    const size_t bytes = kStackBytes * kMaxThreads;
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    stacks = m == MAP_FAILED ? nullptr : static_cast<char*>(m);
    // A guard page at the bottom of every stack: an overflow faults instead of corrupting a neighbour.
    for (unsigned i = 0; stacks != nullptr && i < kMaxThreads; ++i) mprotect(stacks + i * kStackBytes, 4096, PROT_NONE);
    run = new BlockRun;
  }
};

struct EnginePool {
  std::mutex mutex;
  std::vector<Engine*> idle;
};
EnginePool& enginePool() {
  static auto* p = new EnginePool;
  return *p;
}
Engine* takeEngine() {
  {
    std::lock_guard<std::mutex> lock(enginePool().mutex);
    if (!enginePool().idle.empty()) {
      Engine* e = enginePool().idle.back();
      enginePool().idle.pop_back();
      return e;
    }
  }
  return new Engine;
}
void giveEngine(Engine* e) {
  std::lock_guard<std::mutex> lock(enginePool().mutex);
  enginePool().idle.push_back(e);
}

BlockRun& currentBlock() { return *static_cast<BlockRun*>(tls.thread->block); }

// Back to the block's scheduler; returns when the scheduler resumes this thread.
void suspend(BlockRun& b, SimThread& t) {
  cuda_sim_fiber_switch(&t.sp, b.schedulerSp);
  tls.thread = &t.ctx;
}

void release(Barrier& bar) {
  bar.arrived = 0;
  ++bar.generation;
}

void arrive(BlockRun& b, Barrier& bar) {
  SimThread& t = *b.current;
  if (++bar.arrived >= bar.expected) {
    release(bar);
    return;
  }
  t.state = SimThread::kWaiting;
  t.waitingOn = &bar;
  t.waitGeneration = bar.generation;
  suspend(b, t);
}

void fiberMain(void* arg) {
  auto& b = *static_cast<BlockRun*>(arg);
  SimThread& t = *b.current;
  (*b.launch->body)();
  // Exit: no barrier waits for this thread any more.
  t.state = SimThread::kDone;
  --b.live;
  Barrier& warp = b.warps[t.ctx.linear / 32];
  --warp.expected;
  if (warp.arrived > 0 && warp.arrived >= warp.expected) release(warp);
  --b.block.expected;
  if (b.block.arrived > 0 && b.block.arrived >= b.block.expected) release(b.block);
  void* dead = nullptr;
  cuda_sim_fiber_switch(&dead, b.schedulerSp);
  __builtin_unreachable();
}

std::string where(const ThreadContext& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "block (%u,%u,%u), thread (%u,%u,%u)", c.blockIndex.x, c.blockIndex.y,
                c.blockIndex.z, c.threadIndex.x, c.threadIndex.y, c.threadIndex.z);
  return buf;
}

// Ends the launch after a fault in the current thread: the thread never runs again.
[[noreturn]] void fault(cudaError_t code, const std::string& what) {
  BlockRun& b = currentBlock();
  setSticky(code, "kernel %s, %s: %s", b.launch->spec.name, where(*tls.thread).c_str(), what.c_str());
  b.launch->aborted = true;
  b.faulted = true;
  SimThread& t = *b.current;
  t.state = SimThread::kDone;
  void* dead = nullptr;
  cuda_sim_fiber_switch(&dead, b.schedulerSp);
  __builtin_unreachable();
}

void runBlock(Engine& e, Launch& l, unsigned long long linearBlock) {
  BlockRun& b = *e.run;
  const dim3 g = l.spec.grid, bd = l.spec.block;
  b.launch = &l;
  b.count = bd.x * bd.y * bd.z;
  b.live = b.count;
  b.block = Barrier{0, b.count, 0};
  b.faulted = false;
  for (unsigned w = 0; w * 32 < b.count; ++w) b.warps[w] = Barrier{0, std::min(32u, b.count - w * 32), 0};
  const uint3 blockIndex{static_cast<unsigned>(linearBlock % g.x), static_cast<unsigned>(linearBlock / g.x % g.y),
                         static_cast<unsigned>(linearBlock / g.x / g.y)};
  for (unsigned i = 0; i < b.count; ++i) {
    SimThread& t = b.threads[i];
    t.ctx.threadIndex = uint3{i % bd.x, i / bd.x % bd.y, i / bd.x / bd.y};
    t.ctx.blockIndex = blockIndex;
    t.ctx.blockSize = bd;
    t.ctx.gridSize = g;
    t.ctx.linear = i;
    t.ctx.block = &b;
    t.state = SimThread::kReady;
    t.sp = nullptr;  // started on first run
    t.sleepNs = 0;
  }
  while (b.live > 0 && !b.faulted && !l.aborted) {
    bool progressed = false;
    // When every thread that ran in a pass was in __nanosleep (a block polling a flag while its
    // other threads wait at a barrier), the OS thread sleeps as asked instead of spinning.
    bool onlySleepers = true;
    unsigned shortestSleep = 100000;
    for (unsigned i = 0; i < b.count && !b.faulted; ++i) {
      SimThread& t = b.threads[i];
      if (t.state == SimThread::kDone) continue;
      if (t.state == SimThread::kWaiting) {
        if (t.waitingOn->generation == t.waitGeneration) continue;
        t.state = SimThread::kReady;
      }
      if (t.sleepNs == 0) onlySleepers = false;
      if (t.sleepNs != 0 && t.sleepNs < shortestSleep) shortestSleep = t.sleepNs;
      if (t.sp == nullptr) t.sp = prepareFiber(e.stacks + i * kStackBytes, kStackBytes, fiberMain, &b);
      b.current = &t;
      tls.thread = &t.ctx;
      cuda_sim_fiber_switch(&b.schedulerSp, t.sp);
      tls.thread = nullptr;
      progressed = true;
    }
    if (progressed && onlySleepers) std::this_thread::sleep_for(std::chrono::nanoseconds(std::max(1000u, shortestSleep)));
    if (!progressed && b.live > 0 && !b.faulted) {
      unsigned waiting = 0, firstWaiting = 0;
      for (unsigned i = 0; i < b.count; ++i) {
        if (b.threads[i].state == SimThread::kWaiting && waiting++ == 0) firstWaiting = i;
      }
      setSticky(cudaErrorLaunchFailure,
                "kernel %s, block (%u,%u,%u): %u live threads wait at a barrier (thread %u among them) that the "
                "others never reach; on a GPU the kernel would hang",
                l.spec.name, blockIndex.x, blockIndex.y, blockIndex.z, waiting, firstWaiting);
      l.aborted = true;
    }
  }
  tls.thread = nullptr;
  for (unsigned c = 0; c < kMemoryClasses; ++c) {
    l.bytesRead[c] += tls.bytesRead[c];
    l.bytesWritten[c] += tls.bytesWritten[c];
    tls.bytesRead[c] = tls.bytesWritten[c] = 0;
  }
}

void runBlocks(Launch& l) {
  Engine* e = nullptr;
  tls.device = l.device;
  for (;;) {
    if (l.aborted) break;
    const unsigned long long i = l.nextBlock.fetch_add(1);
    if (i >= l.blocks) break;
    if (e == nullptr) e = takeEngine();
    runBlock(*e, l, i);
  }
  if (e != nullptr) giveEngine(e);
}

// Helper threads that join a launch's blocks while blocks are left.
struct HelperPool {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<Launch*> posted;
  bool started = false;

  void start(int n) {
    for (int i = 0; i < n; ++i) {
      std::thread([this] {
        for (;;) {
          Launch* l = nullptr;
          {
            std::unique_lock<std::mutex> lock(mutex);
            cv.wait(lock, [&] { return !posted.empty(); });
            l = posted.front();
            posted.pop_front();
            l->helpers.fetch_add(1);
          }
          runBlocks(*l);
          {
            std::lock_guard<std::mutex> lock(mutex);
            l->helpers.fetch_sub(1);
          }
          cv.notify_all();
        }
      }).detach();
    }
  }
  void post(Launch* l, int n) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!started) {
      start(options().blockThreads - 1);
      started = true;
    }
    for (int i = 0; i < n; ++i) posted.push_back(l);
    cv.notify_all();
  }
  // Withdraws what no helper took, then waits for the helpers still running `l`.
  void finish(Launch* l) {
    std::unique_lock<std::mutex> lock(mutex);
    for (auto it = posted.begin(); it != posted.end();) it = *it == l ? posted.erase(it) : it + 1;
    cv.wait(lock, [&] { return l->helpers.load() == 0; });
  }
};
HelperPool& helperPool() {
  static HelperPool* p = new HelperPool;
  return *p;
}

}  // namespace

char* translateSlow(const void* p, size_t bytes, size_t align, bool write) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  char what[200];
  if ((a & (align - 1)) != 0) {
    std::snprintf(what, sizeof what, "%zu-byte %s at %p is not aligned to %zu bytes", bytes, write ? "write" : "read",
                  p, align);
    fault(cudaErrorMisalignedAddress, what);
  }
  const uint64_t generation = allocationGeneration.load(std::memory_order_acquire);
  Allocation al;
  if (!findAllocation(p, &al)) {
    std::snprintf(what, sizeof what, "%zu-byte %s at %p: no device-accessible allocation there (pageable host memory, "
                  "freed memory or a stray pointer)", bytes, write ? "write" : "read", p);
    fault(cudaErrorIllegalAddress, what);
  }
  if (a + bytes > al.base + al.size) {
    std::snprintf(what, sizeof what, "%zu-byte %s at %p runs %zu bytes past the end of the %zu-byte allocation at %p",
                  bytes, write ? "write" : "read", p, static_cast<size_t>(a + bytes - (al.base + al.size)), al.size,
                  reinterpret_cast<void*>(al.base));
    fault(cudaErrorIllegalAddress, what);
  }
  KernelTls& t = tls;
  const unsigned where = al.kind == AllocKind::kPinnedHost || al.kind == AllocKind::kRegisteredHost ? kHostMemory
                         : al.home == t.device                                                       ? kLocalMemory
                                                                                                     : kPeerMemory;
  t.windows[t.nextWindow++ % 4] = AccessWindow{al.base, al.base + al.size, al.delta, generation, where};
  (write ? t.bytesWritten : t.bytesRead)[where] += bytes;
  return reinterpret_cast<char*>(static_cast<intptr_t>(a) + al.delta);
}

void syncThreads() {
  BlockRun& b = currentBlock();
  arrive(b, b.block);
}

void syncWarp(unsigned mask) {
  BlockRun& b = currentBlock();
  arrive(b, b.warps[b.current->ctx.linear / 32]);
}

void warpExchange(unsigned mask, const void* value, void* result, size_t bytes, int source) {
  BlockRun& b = currentBlock();
  const unsigned lane = b.current->ctx.linear % 32, warp = b.current->ctx.linear / 32;
  std::memcpy(b.exchange[warp][lane], value, bytes);
  arrive(b, b.warps[warp]);  // every live lane has published
  const unsigned src = source >= 0 && source < 32 && warp * 32 + static_cast<unsigned>(source) < b.count &&
                               b.threads[warp * 32 + static_cast<unsigned>(source)].state != SimThread::kDone
                           ? static_cast<unsigned>(source)
                           : lane;
  std::memcpy(result, b.exchange[warp][src], bytes);
  arrive(b, b.warps[warp]);  // every live lane has read before anyone publishes again
}

unsigned warpBallot(unsigned mask, bool predicate) {
  BlockRun& b = currentBlock();
  const unsigned warp = b.current->ctx.linear / 32;
  const unsigned char mine = predicate ? 1 : 0;
  unsigned char all[32];
  // Each lane reads every lane's predicate: 32 exchanges would be slow, so publish and read all.
  const unsigned lane = b.current->ctx.linear % 32;
  std::memcpy(b.exchange[warp][lane], &mine, 1);
  arrive(b, b.warps[warp]);
  unsigned bits = 0;
  for (unsigned l = 0; l < 32; ++l) {
    const unsigned t = warp * 32 + l;
    all[l] = t < b.count && b.threads[t].state != SimThread::kDone ? b.exchange[warp][l][0] : 0;
    if (all[l] != 0 && (mask >> l & 1u)) bits |= 1u << l;
  }
  arrive(b, b.warps[warp]);
  return bits;
}

void nanosleep(unsigned ns) {
  if (tls.thread != nullptr) {
    BlockRun& b = currentBlock();
    SimThread& t = *b.current;
    if (b.live > 1) {  // let the block's other threads run, then come back
      t.state = SimThread::kReady;
      t.sleepNs = ns == 0 ? 1 : ns;
      suspend(b, t);
      t.sleepNs = 0;
      return;
    }
  }
  std::this_thread::sleep_for(std::chrono::nanoseconds(ns < 1000 ? 1000 : ns));
}

void trap() { fault(cudaErrorLaunchFailure, "__trap()"); }

unsigned long long globalTimerNs() {
  return static_cast<unsigned long long>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

void runKernel(const LaunchSpec& spec, const std::function<void()>& body, CUstream_st* stream) {
  Launch l;
  l.spec = spec;
  l.body = &body;
  l.blocks = static_cast<unsigned long long>(spec.grid.x) * spec.grid.y * spec.grid.z;
  l.device = stream->device;
  const int helpers = static_cast<int>(std::min<unsigned long long>(l.blocks - 1, options().blockThreads - 1));
  if (helpers > 0) helperPool().post(&l, helpers);
  runBlocks(l);
  if (helpers > 0) helperPool().finish(&l);
  for (Counters* c : {&stream->counters, &processCounters()}) {
    c->launches += 1;
    for (unsigned k = 0; k < kMemoryClasses; ++k) {
      c->kernelRead += l.bytesRead[k].load();
      c->kernelWritten += l.bytesWritten[k].load();
    }
    c->kernelPeerRead += l.bytesRead[kPeerMemory].load();
    c->kernelPeerWritten += l.bytesWritten[kPeerMemory].load();
    c->kernelHostRead += l.bytesRead[kHostMemory].load();
    c->kernelHostWritten += l.bytesWritten[kHostMemory].load();
  }
}

cudaError_t launch(const LaunchSpec& spec, std::function<void()> body) {
  CUDA_SIM_ENTRY();
  const dim3 g = spec.grid, bd = spec.block;
  const unsigned long long threads = static_cast<unsigned long long>(bd.x) * bd.y * bd.z;
  if (threads == 0 || threads > kMaxThreads || bd.z > 64 || g.x == 0 || g.y == 0 || g.z == 0 || g.y > 65535 ||
      g.z > 65535 || g.x > 0x7fffffffu) {
    return fail(cudaErrorInvalidConfiguration, "kernel %s: launch of <<<(%u,%u,%u), (%u,%u,%u)>>> is outside CUDA's limits",
                spec.name, g.x, g.y, g.z, bd.x, bd.y, bd.z);
  }
  if (spec.sharedBytes > 48 * 1024) {
    return fail(cudaErrorInvalidValue, "kernel %s: %zu bytes of dynamic shared memory (48 KiB without opting in)",
                spec.name, spec.sharedBytes);
  }
  CUstream_st* s = resolveStream(spec.stream);
  if (s == nullptr) return lastErrorPeek();
  if (spec.kernel != nullptr) {
    if (const cudaError_t rc = loadKernel(spec.kernel, s->device, spec.name, "its first launch"); rc != cudaSuccess) return rc;
  }
  auto op = std::make_shared<Op>();
  op->kind = Op::kKernel;
  char what[160];
  std::snprintf(what, sizeof what, "kernel %s<<<(%u,%u,%u), (%u,%u,%u)>>>", spec.name, g.x, g.y, g.z, bd.x, bd.y, bd.z);
  op->what = what;
  op->run = [spec, body = std::move(body), s] { runKernel(spec, body, s); };
  return enqueue(s, std::move(op), nullptr, true);
}

}  // namespace cuda_sim
