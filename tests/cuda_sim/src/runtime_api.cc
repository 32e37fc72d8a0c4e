// CUDA runtime entry points, with CUDA's signatures (from cuda_runtime_api.h) and the semantics
// its documentation states. Device properties are those of an H100 SXM5 80 GB.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "sim.h"

using namespace cuda_sim;

#define CUDA_SIM_EXPORT __attribute__((visibility("default")))

namespace {

constexpr int kSms = 132;

cudaError_t checkDevice(int device) {
  if (device < 0 || device >= options().devices) {
    return fail(cudaErrorInvalidDevice, "device %d: the simulator has %d device(s) (CUDA_SIM_DEVICES)", device,
                options().devices);
  }
  return cudaSuccess;
}

bool isDeviceKind(AllocKind k) { return k == AllocKind::kDevice || k == AllocKind::kIpcImport; }

// One side of a copy: where its bytes live, and what kind of memory it is.
struct Side {
  char* backing = nullptr;
  bool device = false;   // device memory, or managed memory (counted as on the device)
  bool managed = false;  // managed memory: a copy of any direction may name it
  bool pinned = false;  // page-locked host memory (cudaHostAlloc, cudaHostRegister)
  int home = -1;        // device memory: the GPU it lives on
};

cudaError_t side(const void* p, size_t bytes, const char* which, const char* call, Side* out) {
  Allocation a;
  if (findAllocation(p, &a)) {
    out->managed = a.kind == AllocKind::kManaged;
    out->device = isDeviceKind(a.kind) || out->managed;
    out->pinned = !out->device;
    out->home = a.home;
    if (reinterpret_cast<uintptr_t>(p) + bytes > a.base + a.size) {
      return fail(cudaErrorInvalidValue, "%s: the %s range [%p, +%zu) runs past the end of its %zu-byte allocation",
                  call, which, p, bytes, a.size);
    }
    out->backing = reinterpret_cast<char*>(reinterpret_cast<intptr_t>(p) + a.delta);
    return cudaSuccess;
  }
  out->backing = static_cast<char*>(const_cast<void*>(p));
  return cudaSuccess;
}

void countCopy(Counters& c, bool dstDevice, bool srcDevice, size_t bytes, bool betweenGpus) {
  c.copies += 1;
  if (betweenGpus) c.p2p += bytes;
  if (dstDevice && srcDevice) {
    c.d2d += bytes;
  } else if (dstDevice) {
    c.h2d += bytes;
  } else if (srcDevice) {
    c.d2h += bytes;
  } else {
    c.h2h += bytes;
  }
}

// cudaMemcpy and cudaMemcpyAsync: validated, enqueued, and as synchronous with the host as CUDA
// documents ("API synchronization behavior"): a copy to pageable host memory returns when done;
// one from pageable host memory returns once the source has been staged (the device may be written
// later); everything else is asynchronous for the Async form; the plain form also waits for
// host-to-device copies from pinned memory and host-to-host copies, but not device-to-device ones.
cudaError_t copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream, bool async) {
  CUDA_SIM_ENTRY();
  const char* call = async ? "cudaMemcpyAsync" : "cudaMemcpy";
  if (bytes == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) return fail(cudaErrorInvalidValue, "%s: null pointer", call);
  Side d, s;
  if (cudaError_t rc = side(dst, bytes, "destination", call, &d); rc != cudaSuccess) return rc;
  if (cudaError_t rc = side(src, bytes, "source", call, &s); rc != cudaSuccess) return rc;
  const bool wantDstDevice = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool wantSrcDevice = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (kind != cudaMemcpyDefault) {
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return fail(cudaErrorInvalidMemcpyDirection, "%s: kind %d", call, kind);
    if ((wantDstDevice != d.device && !d.managed) || (wantSrcDevice != s.device && !s.managed)) {
      return fail(cudaErrorInvalidValue, "%s: kind %d does not match the pointers (destination %s, source %s)", call,
                  kind, d.device ? "device" : "host", s.device ? "device" : "host");
    }
  }
  CUstream_st* st = resolveStream(stream);
  if (st == nullptr) return lastErrorPeek();
  auto op = std::make_shared<Op>();
  op->kind = Op::kCopy;
  char what[128];
  std::snprintf(what, sizeof what, "%s of %zu bytes %s to %s", call, bytes, s.device ? "device" : "host",
                d.device ? "device" : "host");
  op->what = what;
  const bool pageableSrc = !s.device && !s.pinned, pageableDst = !d.device && !d.pinned;
  std::shared_ptr<std::vector<char>> staged;
  if (!async && pageableSrc && d.device && st->capture == cudaStreamCaptureStatusNone) {
    // "For transfers from pageable host memory to device memory, a stream sync is performed
    // before the copy is initiated."
    if (cudaError_t rc = synchronizeStream(st, call); rc != cudaSuccess) return rc;
  }
  if (pageableSrc && d.device) {
    staged = std::make_shared<std::vector<char>>(s.backing, s.backing + bytes);  // staged now, written later
  }
  const bool dd = d.device, sd = s.device, p2p = d.device && s.device && d.home != s.home;
  char* to = d.backing;
  const char* from = staged ? staged->data() : s.backing;
  // Between host and device, at most CUDA_SIM_HOST_COPY_GBPS (a PCIe link's pace) when set.
  const double gbps = dd != sd ? options().hostCopyGBps : 0.0;
  op->run = [to, from, bytes, staged, st, dd, sd, p2p, gbps] {
    const auto start = std::chrono::steady_clock::now();
    std::memmove(to, from, bytes);
    countCopy(st->counters, dd, sd, bytes, p2p);
    countCopy(processCounters(), dd, sd, bytes, p2p);
    if (gbps > 0) {
      std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                std::chrono::duration<double>(static_cast<double>(bytes) / (gbps * 1e9))));
    }
  };
  uint64_t seq = 0;
  if (cudaError_t rc = enqueue(st, op, &seq, true); rc != cudaSuccess) return rc;
  bool wait = false;
  if (pageableDst && (s.device || !async)) wait = true;         // to pageable memory: returns when done
  if (!async && !d.device) wait = true;                         // cudaMemcpy to any host memory
  if (!async && d.device && !s.device && !pageableSrc) wait = true;  // cudaMemcpy from pinned memory
  if (!d.device && !s.device) wait = true;                      // host to host
  if (wait && seq != 0) return waitStream(st, seq, call);
  return cudaSuccess;
}

cudaError_t memset(void* p, int value, size_t bytes, cudaStream_t stream, const char* call) {
  CUDA_SIM_ENTRY();
  if (bytes == 0) return cudaSuccess;
  Side d;
  if (cudaError_t rc = side(p, bytes, "destination", call, &d); rc != cudaSuccess) return rc;
  if (!d.device && !d.pinned) return fail(cudaErrorInvalidValue, "%s(%p): not device or pinned memory", call, p);
  CUstream_st* st = resolveStream(stream);
  if (st == nullptr) return lastErrorPeek();
  auto op = std::make_shared<Op>();
  op->kind = Op::kMemset;
  op->what = std::string(call) + " of " + std::to_string(bytes) + " bytes";
  char* to = d.backing;
  op->run = [to, value, bytes, st] {
    std::memset(to, value, bytes);
    for (Counters* c : {&st->counters, &processCounters()}) {
      c->copies += 1;
      c->d2d += bytes;
    }
  };
  uint64_t seq = 0;
  if (cudaError_t rc = enqueue(st, op, &seq, true); rc != cudaSuccess) return rc;
  // "Fully synchronous" when the target is pinned host memory (API synchronization behavior).
  if (d.pinned && seq != 0) return waitStream(st, seq, call);
  return cudaSuccess;
}

cudaError_t recordEvent(cudaEvent_t e, cudaStream_t stream) {
  CUDA_SIM_ENTRY();
  if (!liveEvent(e)) return fail(cudaErrorInvalidResourceHandle, "cudaEventRecord: event %p is not live", static_cast<void*>(e));
  CUstream_st* st = resolveStream(stream);
  if (st == nullptr) return lastErrorPeek();
  auto op = std::make_shared<Op>();
  op->kind = Op::kMarker;
  op->what = "event record";
  uint64_t record = 0;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    record = ++e->record;
    e->completedAt = -1;  // before the marker can run and set it
  }
  if (!(e->flags & cudaEventDisableTiming)) {
    op->run = [e, record] {
      std::lock_guard<std::mutex> lock(e->mutex);
      if (e->record == record) e->completedAt = secondsSinceStart();
    };
  }
  uint64_t seq = 0;
  if (cudaError_t rc = enqueue(st, op, &seq, false); rc != cudaSuccess) return rc;
  std::lock_guard<std::mutex> lock(e->mutex);
  e->stream = seq == 0 ? nullptr : st;  // recorded into a capture: not an event of the stream
  e->seq = seq;
  return cudaSuccess;
}

bool eventDone(cudaEvent_t e) {
  std::lock_guard<std::mutex> lock(e->mutex);
  return e->stream == nullptr || e->stream->completed.load() >= e->seq;
}

}  // namespace

extern "C" {

// ---- Errors --------------------------------------------------------------------------------------
CUDA_SIM_EXPORT cudaError_t cudaGetLastError(void) { return lastErrorTake(); }
CUDA_SIM_EXPORT cudaError_t cudaPeekAtLastError(void) { return lastErrorPeek(); }

CUDA_SIM_EXPORT const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
#define NAME(x) case x: return #x;
    NAME(cudaSuccess) NAME(cudaErrorInvalidValue) NAME(cudaErrorMemoryAllocation) NAME(cudaErrorInitializationError)
    NAME(cudaErrorInvalidConfiguration) NAME(cudaErrorInvalidDevice) NAME(cudaErrorInvalidMemcpyDirection)
    NAME(cudaErrorNoDevice) NAME(cudaErrorInvalidResourceHandle) NAME(cudaErrorNotReady) NAME(cudaErrorIllegalAddress)
    NAME(cudaErrorMisalignedAddress) NAME(cudaErrorLaunchFailure) NAME(cudaErrorLaunchTimeout)
    NAME(cudaErrorNotPermitted) NAME(cudaErrorNotSupported) NAME(cudaErrorDeviceUninitialized)
    NAME(cudaErrorStreamCaptureUnsupported) NAME(cudaErrorStreamCaptureInvalidated) NAME(cudaErrorIllegalState)
    NAME(cudaErrorHostMemoryAlreadyRegistered) NAME(cudaErrorHostMemoryNotRegistered) NAME(cudaErrorSymbolNotFound)
    NAME(cudaErrorInvalidDeviceFunction) NAME(cudaErrorPeerAccessAlreadyEnabled) NAME(cudaErrorUnknown)
#undef NAME
    default: return "cudaErrorUnknown";
  }
}

CUDA_SIM_EXPORT const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorMisalignedAddress: return "misaligned address";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorLaunchTimeout: return "the launch timed out and was terminated";
    case cudaErrorNotPermitted: return "operation not permitted";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorDeviceUninitialized: return "invalid device context";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
    case cudaErrorHostMemoryAlreadyRegistered: return "part or all of the requested memory range is already mapped";
    case cudaErrorHostMemoryNotRegistered: return "pointer does not correspond to a registered memory region";
    default: return "unknown error";
  }
}

// ---- Devices -------------------------------------------------------------------------------------
CUDA_SIM_EXPORT cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return fail(cudaErrorInvalidValue, "cudaGetDeviceCount: null");
  *count = options().devices;
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaSetDevice(int device) {
  CUDA_SIM_ENTRY();
  if (cudaError_t rc = checkDevice(device); rc != cudaSuccess) return rc;
  setCurrentDevice(device);
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return fail(cudaErrorInvalidValue, "cudaGetDevice: null");
  *device = currentDevice();
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int) { return cudaSuccess; }
CUDA_SIM_EXPORT cudaError_t cudaDriverGetVersion(int* v) { *v = CUDART_VERSION; return cudaSuccess; }
CUDA_SIM_EXPORT cudaError_t cudaRuntimeGetVersion(int* v) { *v = CUDART_VERSION; return cudaSuccess; }

CUDA_SIM_EXPORT cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
  if (p == nullptr) return fail(cudaErrorInvalidValue, "cudaGetDeviceProperties: null");
  if (cudaError_t rc = checkDevice(device); rc != cudaSuccess) return rc;
  std::memset(p, 0, sizeof *p);
  std::snprintf(p->name, sizeof p->name, "Strata CUDA simulator (NVIDIA H100 80GB HBM3 model)");
  p->totalGlobalMem = options().deviceMemory;
  p->sharedMemPerBlock = 48 * 1024;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024;
  p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 0x7fffffff;
  p->maxGridSize[1] = 65535;
  p->maxGridSize[2] = 65535;
  p->totalConstMem = 65536;
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = kSms;
  p->l2CacheSize = 50 * 1024 * 1024;
  p->maxThreadsPerMultiProcessor = 2048;
  p->memoryBusWidth = 5120;
  p->canMapHostMemory = 1;
  p->unifiedAddressing = 1;
  p->concurrentKernels = 1;
  p->sharedMemPerMultiprocessor = 233472;
  p->regsPerMultiprocessor = 65536;
  p->maxBlocksPerMultiProcessor = 32;
  p->pciBusID = 0x18 + device;
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (value == nullptr) return fail(cudaErrorInvalidValue, "cudaDeviceGetAttribute: null");
  if (cudaError_t rc = checkDevice(device); rc != cudaSuccess) return rc;
  switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = kSms; break;
    case cudaDevAttrMaxThreadsPerBlock: *value = 1024; break;
    case cudaDevAttrWarpSize: *value = 32; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = 48 * 1024; break;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = 2048; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = 32; break;
    case cudaDevAttrCanMapHostMemory: case cudaDevAttrUnifiedAddressing: case cudaDevAttrConcurrentKernels:
    case cudaDevAttrMemoryPoolsSupported: *value = 1; break;
    case cudaDevAttrL2CacheSize: *value = 50 * 1024 * 1024; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = 5120; break;
    case cudaDevAttrMaxRegistersPerBlock: case cudaDevAttrMaxRegistersPerMultiprocessor: *value = 65536; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = 233472; break;
    case cudaDevAttrPciBusId: *value = 0x18 + device; break;
    default: *value = 0; break;
  }
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer) {
  if (cudaError_t rc = checkDevice(device); rc != cudaSuccess) return rc;
  if (cudaError_t rc = checkDevice(peer); rc != cudaSuccess) return rc;
  *can = device != peer ? 1 : 0;
  return cudaSuccess;
}
CUDA_SIM_EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int) { return checkDevice(peer); }

CUDA_SIM_EXPORT cudaError_t cudaDeviceSynchronize(void) {
  CUDA_SIM_ENTRY();
  return synchronizeDevice(currentDevice(), "cudaDeviceSynchronize", false);
}

CUDA_SIM_EXPORT cudaError_t cudaMemGetInfo(size_t* freeBytes, size_t* total) {
  CUDA_SIM_ENTRY();
  if (freeBytes == nullptr || total == nullptr) return fail(cudaErrorInvalidValue, "cudaMemGetInfo: null");
  *total = options().deviceMemory;
  *freeBytes = deviceMemoryFree(currentDevice());
  return cudaSuccess;
}

// ---- Memory --------------------------------------------------------------------------------------
CUDA_SIM_EXPORT cudaError_t cudaMalloc(void** p, size_t bytes) {
  CUDA_SIM_ENTRY();
  if (p == nullptr) return fail(cudaErrorInvalidValue, "cudaMalloc: null");
  return allocateDevice(p, bytes);
}
CUDA_SIM_EXPORT cudaError_t cudaFree(void* p) {
  CUDA_SIM_ENTRY();
  return freeDevice(p);
}
// Stream-ordered allocation: the memory is taken at once and waits for no work of the device (what
// the stream-ordered allocator is for); the free is an operation on the stream, run when the work
// enqueued before it has finished.
CUDA_SIM_EXPORT cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t stream) {
  CUDA_SIM_ENTRY();
  if (p == nullptr) return fail(cudaErrorInvalidValue, "cudaMallocAsync: null");
  if (resolveStream(stream) == nullptr) return lastErrorPeek();
  return allocateDevice(p, bytes, false);
}
CUDA_SIM_EXPORT cudaError_t cudaFreeAsync(void* p, cudaStream_t stream) {
  CUDA_SIM_ENTRY();
  CUstream_st* s = resolveStream(stream);
  if (s == nullptr) return lastErrorPeek();
  if (p == nullptr) return cudaSuccess;
  Allocation a;
  if (!findAllocation(p, &a) || a.kind != AllocKind::kDevice || a.base != reinterpret_cast<uintptr_t>(p)) {
    return fail(cudaErrorInvalidValue, "cudaFreeAsync(%p): not the base of a device allocation of this process", p);
  }
  auto op = std::make_shared<Op>();
  op->kind = Op::kHostFn;
  op->what = "cudaFreeAsync";
  op->run = [p] { freeDevice(p, false); };
  return enqueue(s, op, nullptr, false);
}
CUDA_SIM_EXPORT cudaError_t cudaMallocManaged(void** p, size_t bytes, unsigned int flags) {
  CUDA_SIM_ENTRY();
  if (p == nullptr) return fail(cudaErrorInvalidValue, "cudaMallocManaged: null");
  return allocateManaged(p, bytes, flags);
}
CUDA_SIM_EXPORT cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned int flags) {
  CUDA_SIM_ENTRY();
  if (p == nullptr) return fail(cudaErrorInvalidValue, "cudaHostAlloc: null");
  return allocatePinned(p, bytes, flags);
}
CUDA_SIM_EXPORT cudaError_t cudaMallocHost(void** p, size_t bytes) { return cudaHostAlloc(p, bytes, cudaHostAllocDefault); }
CUDA_SIM_EXPORT cudaError_t cudaFreeHost(void* p) {
  CUDA_SIM_ENTRY();
  return freePinned(p);
}
CUDA_SIM_EXPORT cudaError_t cudaHostRegister(void* p, size_t bytes, unsigned int flags) {
  CUDA_SIM_ENTRY();
  return registerHost(p, bytes, flags);
}
CUDA_SIM_EXPORT cudaError_t cudaHostUnregister(void* p) {
  CUDA_SIM_ENTRY();
  return unregisterHost(p);
}

CUDA_SIM_EXPORT cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned int flags) {
  CUDA_SIM_ENTRY();
  Allocation a;
  if (device == nullptr || flags != 0) return fail(cudaErrorInvalidValue, "cudaHostGetDevicePointer: null or flags != 0");
  if (!findAllocation(host, &a) || isDeviceKind(a.kind) || a.kind == AllocKind::kManaged) {
    return fail(cudaErrorInvalidValue, "cudaHostGetDevicePointer(%p): not pinned or registered host memory", host);
  }
  *device = host;  // unified addressing: the device sees pinned memory at its host address
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaHostGetFlags(unsigned int* flags, void* host) {
  Allocation a;
  if (!findAllocation(host, &a) || isDeviceKind(a.kind) || a.kind == AllocKind::kManaged) {
    return fail(cudaErrorInvalidValue, "cudaHostGetFlags: not pinned");
  }
  *flags = a.flags;
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attr, const void* p) {
  CUDA_SIM_ENTRY();
  if (attr == nullptr) return fail(cudaErrorInvalidValue, "cudaPointerGetAttributes: null");
  std::memset(attr, 0, sizeof *attr);
  Allocation a;
  if (!findAllocation(p, &a)) {
    attr->type = cudaMemoryTypeUnregistered;
    attr->device = -2;  // CUDA's value for unregistered memory
    return cudaSuccess;
  }
  attr->device = a.device;
  if (isDeviceKind(a.kind)) {
    attr->type = cudaMemoryTypeDevice;
    attr->devicePointer = const_cast<void*>(p);
  } else if (a.kind == AllocKind::kManaged) {
    attr->type = cudaMemoryTypeManaged;
    attr->devicePointer = const_cast<void*>(p);
    attr->hostPointer = const_cast<void*>(p);
  } else {
    attr->type = cudaMemoryTypeHost;
    attr->devicePointer = const_cast<void*>(p);
    attr->hostPointer = const_cast<void*>(p);
  }
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  return copy(dst, src, bytes, kind, nullptr, false);
}
CUDA_SIM_EXPORT cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
  return copy(dst, src, bytes, kind, stream, true);
}
CUDA_SIM_EXPORT cudaError_t cudaMemset(void* p, int value, size_t bytes) { return memset(p, value, bytes, nullptr, "cudaMemset"); }
CUDA_SIM_EXPORT cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t stream) {
  return memset(p, value, bytes, stream, "cudaMemsetAsync");
}

// ---- CUDA IPC ------------------------------------------------------------------------------------
CUDA_SIM_EXPORT cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* p) {
  CUDA_SIM_ENTRY();
  if (handle == nullptr) return fail(cudaErrorInvalidValue, "cudaIpcGetMemHandle: null");
  return ipcExport(handle, p);
}
CUDA_SIM_EXPORT cudaError_t cudaIpcOpenMemHandle(void** p, cudaIpcMemHandle_t handle, unsigned int flags) {
  CUDA_SIM_ENTRY();
  if (p == nullptr || (flags & ~1u) != 0) return fail(cudaErrorInvalidValue, "cudaIpcOpenMemHandle: null or bad flags");
  return ipcOpen(p, handle);
}
CUDA_SIM_EXPORT cudaError_t cudaIpcCloseMemHandle(void* p) {
  CUDA_SIM_ENTRY();
  return ipcClose(p);
}

// ---- Streams -------------------------------------------------------------------------------------
CUDA_SIM_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  CUDA_SIM_ENTRY();
  if (stream == nullptr || (flags & ~1u) != 0) return fail(cudaErrorInvalidValue, "cudaStreamCreateWithFlags: null or bad flags");
  *stream = createStream(currentDevice(), flags, false);
  return cudaSuccess;
}
CUDA_SIM_EXPORT cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithFlags(stream, cudaStreamDefault); }
CUDA_SIM_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int) {
  return cudaStreamCreateWithFlags(stream, flags);
}

CUDA_SIM_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
    return fail(cudaErrorInvalidResourceHandle, "cudaStreamDestroy: the default streams cannot be destroyed");
  }
  CUstream_st* s = resolveStream(stream);
  if (s == nullptr) return lastErrorPeek();
  return destroyStream(s);
}

CUDA_SIM_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  CUDA_SIM_ENTRY();
  CUstream_st* s = resolveStream(stream);
  if (s == nullptr) return lastErrorPeek();
  if (s->capture != cudaStreamCaptureStatusNone) {
    s->capture = cudaStreamCaptureStatusInvalidated;
    return fail(cudaErrorStreamCaptureUnsupported, "cudaStreamSynchronize on %s while it captures", s->name.c_str());
  }
  return synchronizeStream(s, "cudaStreamSynchronize");
}

CUDA_SIM_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream) {
  CUDA_SIM_ENTRY();
  CUstream_st* s = resolveStream(stream);
  if (s == nullptr) return lastErrorPeek();
  std::lock_guard<std::mutex> lock(s->mutex);
  return s->completed.load() >= s->enqueued ? cudaSuccess : cudaErrorNotReady;
}

CUDA_SIM_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int* flags) {
  CUstream_st* s = resolveStream(stream);
  if (s == nullptr) return lastErrorPeek();
  *flags = s->flags;
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t e, unsigned int flags) {
  CUDA_SIM_ENTRY();
  if (!liveEvent(e)) return fail(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent: event %p is not live", static_cast<void*>(e));
  CUstream_st* s = resolveStream(stream);
  if (s == nullptr) return lastErrorPeek();
  auto op = std::make_shared<Op>();
  op->kind = Op::kWaitEvent;
  op->what = "cudaStreamWaitEvent";
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    if (e->stream != nullptr) op->deps.push_back(Dep{e->stream, e->seq});
  }
  return enqueue(s, op, nullptr, false);
}

CUDA_SIM_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* data) {
  CUDA_SIM_ENTRY();
  CUstream_st* s = resolveStream(stream);
  if (s == nullptr) return lastErrorPeek();
  auto op = std::make_shared<Op>();
  op->kind = Op::kHostFn;
  op->what = "host function";
  op->run = [fn, data] { fn(data); };
  return enqueue(s, op, nullptr, false);
}

// ---- Stream capture ------------------------------------------------------------------------------
CUDA_SIM_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  CUDA_SIM_ENTRY();
  CUstream_st* s = resolveStream(stream);
  if (s == nullptr) return lastErrorPeek();
  if (s->legacy) return fail(cudaErrorStreamCaptureUnsupported, "cudaStreamBeginCapture: the legacy default stream cannot capture");
  if (s->capture != cudaStreamCaptureStatusNone) return fail(cudaErrorIllegalState, "cudaStreamBeginCapture: already capturing");
  static std::atomic<unsigned long long> ids{1};
  s->capture = cudaStreamCaptureStatusActive;
  s->captureId = ids.fetch_add(1);
  s->captured.clear();
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  CUDA_SIM_ENTRY();
  CUstream_st* s = resolveStream(stream);
  if (s == nullptr) return lastErrorPeek();
  *status = s->capture;
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                                     unsigned long long* id, cudaGraph_t* graph,
                                                     const cudaGraphNode_t** deps, const cudaGraphEdgeData** edges,
                                                     size_t* numDeps) {
  CUDA_SIM_ENTRY();
  CUstream_st* s = resolveStream(stream);
  if (s == nullptr) return lastErrorPeek();
  *status = s->capture;
  if (id != nullptr) *id = s->captureId;
  if (graph != nullptr) *graph = nullptr;
  if (deps != nullptr) *deps = nullptr;
  if (edges != nullptr) *edges = nullptr;
  if (numDeps != nullptr) *numDeps = 0;
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  CUDA_SIM_ENTRY();
  CUstream_st* s = resolveStream(stream);
  if (s == nullptr) return lastErrorPeek();
  if (s->capture == cudaStreamCaptureStatusNone) return fail(cudaErrorIllegalState, "cudaStreamEndCapture: not capturing");
  const bool invalid = s->capture == cudaStreamCaptureStatusInvalidated;
  s->capture = cudaStreamCaptureStatusNone;
  if (invalid) {
    *graph = nullptr;
    return fail(cudaErrorStreamCaptureInvalidated, "cudaStreamEndCapture: the capture was invalidated");
  }
  auto* g = new CUgraph_st;
  g->ops = std::move(s->captured);
  s->captured.clear();
  *graph = g;
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}
CUDA_SIM_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  CUDA_SIM_ENTRY();
  auto* e = new CUgraphExec_st;
  e->ops = graph->ops;
  *exec = e;
  return cudaSuccess;
}
CUDA_SIM_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}
CUDA_SIM_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  CUDA_SIM_ENTRY();
  CUstream_st* s = resolveStream(stream);
  if (s == nullptr) return lastErrorPeek();
  // The captured operations in capture order (a linear graph: one stream was captured).
  for (const auto& captured : exec->ops) {
    auto op = std::make_shared<Op>(*captured);
    op->deps.clear();
    if (cudaError_t rc = enqueue(s, op, nullptr, false); rc != cudaSuccess) return rc;
  }
  return cudaSuccess;
}

// ---- Events --------------------------------------------------------------------------------------
CUDA_SIM_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int flags) {
  CUDA_SIM_ENTRY();
  if (e == nullptr) return fail(cudaErrorInvalidValue, "cudaEventCreate: null");
  *e = new CUevent_st;
  (*e)->flags = flags;
  registerEvent(*e, true);
  return cudaSuccess;
}
CUDA_SIM_EXPORT cudaError_t cudaEventCreate(cudaEvent_t* e) { return cudaEventCreateWithFlags(e, cudaEventDefault); }

CUDA_SIM_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e) {
  if (!liveEvent(e)) return fail(cudaErrorInvalidResourceHandle, "cudaEventDestroy: event %p is not live", static_cast<void*>(e));
  registerEvent(e, false);  // its memory is kept: a queued record may still refer to it
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t stream) { return recordEvent(e, stream); }
CUDA_SIM_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t stream, unsigned int) {
  return recordEvent(e, stream);
}

CUDA_SIM_EXPORT cudaError_t cudaEventQuery(cudaEvent_t e) {
  CUDA_SIM_ENTRY();
  if (!liveEvent(e)) return fail(cudaErrorInvalidResourceHandle, "cudaEventQuery: event %p is not live", static_cast<void*>(e));
  return eventDone(e) ? cudaSuccess : cudaErrorNotReady;
}

CUDA_SIM_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  CUDA_SIM_ENTRY();
  if (!liveEvent(e)) return fail(cudaErrorInvalidResourceHandle, "cudaEventSynchronize: event %p is not live", static_cast<void*>(e));
  CUstream_st* s = nullptr;
  uint64_t seq = 0;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    s = e->stream;
    seq = e->seq;
  }
  return s == nullptr ? cudaSuccess : waitStream(s, seq, "cudaEventSynchronize");
}

CUDA_SIM_EXPORT cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  CUDA_SIM_ENTRY();
  if (ms == nullptr || !liveEvent(start) || !liveEvent(end)) return fail(cudaErrorInvalidValue, "cudaEventElapsedTime: bad argument");
  if ((start->flags | end->flags) & cudaEventDisableTiming) {
    return fail(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime: an event was created with cudaEventDisableTiming");
  }
  if (!eventDone(start) || !eventDone(end)) return cudaErrorNotReady;
  std::scoped_lock lock(start->mutex, end->mutex);
  if (start->completedAt < 0 || end->completedAt < 0) return fail(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime: not recorded");
  *ms = static_cast<float>((end->completedAt - start->completedAt) * 1e3);
  return cudaSuccess;
}

// ---- Kernels -------------------------------------------------------------------------------------
CUDA_SIM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func, int blockSize, size_t) {
  CUDA_SIM_ENTRY();
  if (blocks == nullptr || blockSize <= 0) return fail(cudaErrorInvalidValue, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (func == nullptr) return fail(cudaErrorInvalidDeviceFunction, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (const cudaError_t rc = loadKernel(func, currentDevice(), "(by address)", "an occupancy query"); rc != cudaSuccess) return rc;
  // The simulator does not know a kernel's registers: the thread limit of the multiprocessor alone.
  *blocks = std::min(32, 2048 / blockSize);
  return cudaSuccess;
}

// What the simulator knows of a kernel: nothing of its registers or local memory; the block limit.
// Referencing the kernel loads it (lazy loading), as on a GPU.
CUDA_SIM_EXPORT cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  CUDA_SIM_ENTRY();
  if (attr == nullptr || func == nullptr) return fail(cudaErrorInvalidDeviceFunction, "cudaFuncGetAttributes");
  if (const cudaError_t rc = loadKernel(func, currentDevice(), "(by address)", "cudaFuncGetAttributes"); rc != cudaSuccess) return rc;
  *attr = cudaFuncAttributes{};
  attr->maxThreadsPerBlock = 1024;
  attr->binaryVersion = attr->ptxVersion = 90;
  return cudaSuccess;
}

CUDA_SIM_EXPORT cudaError_t cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, cudaStream_t) {
  return fail(cudaErrorNotSupported,
              "cudaLaunchKernel: the simulator launches kernels through cuda_sim::launch (the launch helper); a raw "
              "argument array carries no types to call the kernel with");
}

}  // extern "C"
