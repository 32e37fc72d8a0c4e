// The simulator's inner state: options, errors, the allocation table, streams and their
// operations. The entry points (runtime_api.cc, driver_api.cc) are thin: they validate arguments
// as CUDA documents, then act on these.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda_sim/cuda_sim.h"
#include "cuda_sim/device.h"

// The simulator's own sources name CUDA's structures' fields, not the kernels' built-ins.
#undef threadIdx
#undef blockIdx
#undef blockDim
#undef gridDim
#undef warpSize

namespace cuda_sim {

// ---- Options, from the environment (read once) -----------------------------------------------
struct Options {
  int devices = 1;               // CUDA_SIM_DEVICES: simulated GPUs on this machine
  unsigned jitterMicros = 20;    // CUDA_SIM_JITTER_US: up to this random delay before each operation
  bool launchBlocking = false;   // CUDA_LAUNCH_BLOCKING=1: every launch and copy completes before returning
  bool hostAccess = false;       // CUDA_SIM_HOST_ACCESS=1: host code may read device memory (a CUDA-aware MPI)
  bool streamMemOps = true;      // CUDA_SIM_STREAM_MEM_OPS=0: no cuStreamWaitValue/WriteValue (the fallback path)
  int blockThreads = 2;          // CUDA_SIM_BLOCK_THREADS: OS threads that run a kernel's blocks
  double syncTimeout = 300;      // CUDA_SIM_SYNC_TIMEOUT: bound on a host wait, then a diagnosis
  bool warnOnViolation = false;  // CUDA_SIM_VIOLATIONS=warn: a broken CUDA rule is reported, not fatal
  double hostCopyGBps = 0;       // CUDA_SIM_HOST_COPY_GBPS: host<->device copies take at least bytes / this
  bool lazyLoading = true;       // CUDA_MODULE_LOADING (CUDA's own; LAZY, its default since 12.2, unless EAGER)
  // CUDA_DEVICE_MAX_CONNECTIONS=N, set: a device's streams share N hardware queues, stream k of the
  // device (in creation order) feeding queue k mod N. Unset (0): streams independent (the driver's
  // mapping at its default of 8 is not specified).
  int connections = 0;
  // CUDA_SIM_DEVICE_MEMORY: bytes of memory per GPU (an H100's 80 GiB). cudaMalloc and
  // cudaMallocAsync fail with cudaErrorMemoryAllocation past it; each process counts only its own
  // allocations (a GPU's memory is shared by every process using it: not modelled).
  size_t deviceMemory = size_t{80} << 30;
};
const Options& options();

// Lazy loading: the first use of `kernel` on `device` in this process (a launch, an occupancy or
// attribute query) loads it, which may synchronise the device as cudaMalloc does (CUDA Programming
// Guide, "Lazy Loading", potential hazards). Later uses, and every use under CUDA_MODULE_LOADING=
// EAGER, cost nothing. `what` names the use.
cudaError_t loadKernel(const void* kernel, int device, const char* name, const char* what);

// Sleeps `us` microseconds with a timer slack of 1 us (a stream's start jitter), where Linux's
// default of 50 us would stretch each such sleep to some 60 us. The thread's slack is restored
// after: the simulator's polling sleeps (a block in __nanosleep, a wait-value) keep the default,
// which spares the cores the simulated ranks share with them.
void preciseSleep(unsigned us);

// ---- Errors ------------------------------------------------------------------------------------
// Sets the calling thread's last error (cudaGetLastError) and returns `code`.
cudaError_t fail(cudaError_t code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// A sticky error: every later call of the process fails with it, as after a fault on a GPU.
void setSticky(cudaError_t code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
cudaError_t sticky();
// A broken CUDA rule the GPU would not report (undefined behaviour there): message, then abort.
void violation(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void diagnose(const std::string& message);  // cudaSimLastDiagnosis, and stderr
cudaError_t lastErrorPeek();
cudaError_t lastErrorTake();

#define CUDA_SIM_ENTRY()                                              \
  do {                                                                \
    if (const cudaError_t sticky_ = ::cuda_sim::sticky(); sticky_ != cudaSuccess) return sticky_; \
  } while (0)

// ---- Devices -----------------------------------------------------------------------------------
int currentDevice();
void setCurrentDevice(int device);

// ---- Memory ------------------------------------------------------------------------------------
// kManaged: cudaMallocManaged memory, which host code, kernels and copies of any direction all reach
// (the driver migrates its pages on demand; the simulator has one memory, so it simply is there).
enum class AllocKind { kDevice, kIpcImport, kPinnedHost, kRegisteredHost, kManaged };

// The first page of every device allocation's shared-memory file: what peers that open it share.
struct IpcHeader {
  uint64_t magic;
  uint64_t id;
  std::atomic<int> opens;  // processes that have it open through CUDA IPC now
  int32_t device;          // the GPU whose memory it is
};

struct Allocation {
  uintptr_t base = 0;   // the address CUDA returned
  size_t size = 0;      // bytes requested
  intptr_t delta = 0;   // backing address - device address
  AllocKind kind = AllocKind::kDevice;
  int device = 0;       // the device current when it was allocated or opened
  int home = -1;        // device memory: the GPU it lives on (an IPC import: the exporter's); host: -1
  unsigned flags = 0;   // cudaHostAlloc flags
  int fd = -1;          // the shared-memory file (device memory)
  size_t mappedBytes = 0;
  char* backing = nullptr;  // the memory itself (the file's mapping, data after the header page)
  IpcHeader* header = nullptr;
  uint64_t id = 0;
  bool exported = false;
  bool streamOrdered = false;  // from cudaMallocAsync: a memory pool's, which CUDA IPC cannot export
};

// Returns false when `p` is in no allocation of this process.
bool findAllocation(const void* p, Allocation* out);
// Device memory. `implicitSync`: cudaMalloc and cudaFree wait for the device to be idle first; the
// stream-ordered calls (cudaMallocAsync, cudaFreeAsync's operation on its stream) wait for nothing.
cudaError_t allocateDevice(void** p, size_t bytes, bool implicitSync = true);
cudaError_t freeDevice(void* p, bool implicitSync = true);
// The bytes of `device`'s memory (options().deviceMemory) this process's allocations (cudaMalloc,
// cudaMallocAsync) leave free.
size_t deviceMemoryFree(int device);
cudaError_t allocatePinned(void** p, size_t bytes, unsigned flags);
cudaError_t allocateManaged(void** p, size_t bytes, unsigned flags);
cudaError_t freePinned(void* p);
cudaError_t registerHost(void* p, size_t bytes, unsigned flags);
cudaError_t unregisterHost(void* p);
cudaError_t ipcExport(cudaIpcMemHandle_t* handle, void* p);
cudaError_t ipcOpen(void** p, cudaIpcMemHandle_t handle);
cudaError_t ipcClose(void* p);
// Where the bytes at device-or-host address `p` live for the simulator (host code's access).
char* backingOf(const void* p, size_t bytes, bool* isDevice);

// ---- Streams -----------------------------------------------------------------------------------
struct Counters {
  std::atomic<unsigned long long> launches{0}, kernelRead{0}, kernelWritten{0}, copies{0}, h2d{0}, d2h{0}, d2d{0}, h2h{0};
  std::atomic<unsigned long long> kernelPeerRead{0}, kernelPeerWritten{0}, kernelHostRead{0}, kernelHostWritten{0}, p2p{0};
  void add(const Counters& o);
  void reset();
  void to(cudaSimCounters* out) const;
};
Counters& processCounters();

struct Dep {
  CUstream_st* stream;
  uint64_t seq;
};

struct Op {
  enum Kind { kKernel, kCopy, kMemset, kMarker, kWaitEvent, kWaitValue, kWriteValue, kHostFn } kind = kMarker;
  std::vector<Dep> deps;
  std::function<void()> run;   // the work, on the stream's worker
  std::string what;            // for diagnoses: "kernel reduceKernel", "cudaMemcpyAsync 4096 B"
  // kWaitValue: the condition the stream waits for (checked by the worker, and by implicit syncs).
  const void* waitAddress = nullptr;
  uint64_t waitValue = 0;
  unsigned waitFlags = 0;
  bool wait64 = false;
  bool waitSatisfied() const;
  cudaEvent_t timedEvent = nullptr;  // kMarker of a timing event: completion time goes there
  uint64_t issued = 0;  // under CUDA_DEVICE_MAX_CONNECTIONS: its place in its stream's hardware queue (1, 2, ...)
  // Everything before it in that queue has started (a copy, as a graph launch makes, starts unset).
  struct TurnFlag {
    std::atomic<bool> value{false};
    TurnFlag() = default;
    TurnFlag(const TurnFlag&) {}
    TurnFlag& operator=(const TurnFlag&) { return *this; }
  } queueTurn;
  uint64_t eventRecord = 0;
};

}  // namespace cuda_sim

// CUDA's opaque handles, defined by the simulator.
struct CUstream_st {
  int device = 0;
  unsigned flags = 0;  // cudaStreamNonBlocking
  bool legacy = false;
  int connection = 0;  // its hardware queue under CUDA_DEVICE_MAX_CONNECTIONS
  std::string name;
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::shared_ptr<cuda_sim::Op>> queue;
  uint64_t enqueued = 0;                  // under mutex
  std::atomic<uint64_t> completed{0};
  std::shared_ptr<cuda_sim::Op> running;  // under mutex
  bool destroying = false;
  std::thread worker;
  cuda_sim::Counters counters;
  // Stream capture: operations are recorded into `captured`, not run.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  std::vector<std::shared_ptr<cuda_sim::Op>> captured;
  unsigned long long captureId = 0;
};

struct CUevent_st {
  unsigned flags = 0;
  std::mutex mutex;
  CUstream_st* stream = nullptr;  // where it was last recorded (null: never)
  uint64_t seq = 0;
  uint64_t record = 0;  // how many times it was recorded
  double completedAt = -1;  // seconds since the simulator started, for timing events
};

struct CUgraph_st {
  std::vector<std::shared_ptr<cuda_sim::Op>> ops;
};
struct CUgraphExec_st {
  std::vector<std::shared_ptr<cuda_sim::Op>> ops;
};

namespace cuda_sim {

// The stream a handle names (0 and cudaStreamLegacy: the current device's legacy default stream;
// cudaStreamPerThread: the calling thread's). Null and a last error for an unknown handle.
CUstream_st* resolveStream(cudaStream_t handle);
bool liveEvent(cudaEvent_t e);
CUstream_st* createStream(int device, unsigned flags, bool legacy);
cudaError_t destroyStream(CUstream_st* s);
void registerEvent(cudaEvent_t e, bool live);
// Enqueues `op` on `s` (adding the legacy default stream's implicit dependencies, recording it
// instead when the stream captures, and completing it before returning under CUDA_LAUNCH_BLOCKING
// when `blockingCheck`). Returns the operation's sequence number on the stream (0 when captured).
cudaError_t enqueue(CUstream_st* s, std::shared_ptr<Op> op, uint64_t* seq = nullptr, bool launchBlocking = false);
// Waits, bounded, until `s` has completed operation `seq`.
cudaError_t waitStream(CUstream_st* s, uint64_t seq, const char* caller);
cudaError_t synchronizeStream(CUstream_st* s, const char* caller);
// Everything enqueued on `device` so far completes. With `implicit` (cudaMalloc, cudaFree, ...):
// a stream held by a wait-value operation that nothing running can release is the deadlock a GPU
// would have; the call reports it instead of hanging.
cudaError_t synchronizeDevice(int device, const char* caller, bool implicit);
double secondsSinceStart();

// The kernel engine (kernel_engine.cc): runs one launch's blocks.
void runKernel(const LaunchSpec& spec, const std::function<void()>& body, CUstream_st* stream);

}  // namespace cuda_sim
