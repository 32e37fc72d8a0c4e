// Device memory, pinned host memory and CUDA IPC.
//
// Device memory is a shared-memory file (memfd) per allocation, so another process can map it
// through CUDA IPC and nothing else. The address cudaMalloc returns is a reservation without
// access rights: host code that dereferences a device pointer faults, as it would with a GPU
// (CUDA_SIM_HOST_ACCESS=1 maps it readable and writable instead: what a CUDA-aware MPI can do).
// Kernels and copies reach the memory through the allocation table, which checks every access
// against the allocation's bounds.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>

#include "sim.h"

namespace cuda_sim {

std::atomic<uint64_t> allocationGeneration{1};

namespace {

constexpr uint64_t kMagic = 0x4d49534144554353ull;  // "SCUDASIM"
constexpr size_t kPage = 4096;

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

struct Table {
  std::shared_mutex mutex;
  std::map<uintptr_t, Allocation> byBase;
  std::atomic<uint64_t> nextId{1};
};
Table& table() {
  static Table* t = new Table;  // never destroyed: stream workers may run past static destruction
  return *t;
}

// The handle's 64 bytes: who exported which allocation, and where its file is.
struct HandleBody {
  uint64_t magic;
  int32_t pid;
  int32_t fd;
  uint64_t id;
  uint64_t size;
};
static_assert(sizeof(HandleBody) <= sizeof(cudaIpcMemHandle_t));

void insert(const Allocation& a) {
  std::unique_lock<std::shared_mutex> lock(table().mutex);
  table().byBase[a.base] = a;
}

// Maps the data of a device file: the backing (readable and writable) and the address CUDA
// hands out. `fileBytes` includes the header page.
cudaError_t mapDeviceFile(int fd, size_t size, size_t fileBytes, Allocation* a) {
  void* backing = mmap(nullptr, fileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (backing == MAP_FAILED) return fail(cudaErrorMemoryAllocation, "mmap of %zu bytes: %s", fileBytes, std::strerror(errno));
  const size_t dataBytes = fileBytes - kPage;
  void* user = options().hostAccess
                   ? mmap(nullptr, dataBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, kPage)
                   : mmap(nullptr, dataBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (user == MAP_FAILED) {
    munmap(backing, fileBytes);
    return fail(cudaErrorMemoryAllocation, "mmap of %zu bytes: %s", dataBytes, std::strerror(errno));
  }
  a->base = reinterpret_cast<uintptr_t>(user);
  a->size = size;
  a->mappedBytes = fileBytes;
  a->backing = static_cast<char*>(backing) + kPage;
  a->header = static_cast<IpcHeader*>(backing);
  a->delta = reinterpret_cast<intptr_t>(a->backing) - reinterpret_cast<intptr_t>(user);
  a->fd = fd;
  return cudaSuccess;
}

void unmapDeviceFile(const Allocation& a) {
  munmap(reinterpret_cast<void*>(a.base), a.mappedBytes - kPage);
  munmap(a.header, a.mappedBytes);
}

// Removes the allocation whose base is exactly `p` and of kind `kind`.
bool take(const void* p, AllocKind kind, Allocation* out) {
  std::unique_lock<std::shared_mutex> lock(table().mutex);
  auto it = table().byBase.find(reinterpret_cast<uintptr_t>(p));
  if (it == table().byBase.end() || it->second.kind != kind) return false;
  *out = it->second;
  table().byBase.erase(it);
  allocationGeneration.fetch_add(1);
  return true;
}

const char* kindName(AllocKind k) {
  switch (k) {
    case AllocKind::kDevice: return "device memory";
    case AllocKind::kIpcImport: return "device memory opened through CUDA IPC";
    case AllocKind::kPinnedHost: return "pinned host memory";
    case AllocKind::kRegisteredHost: return "registered host memory";
    case AllocKind::kManaged: return "managed memory";
  }
  return "?";
}

}  // namespace

bool findAllocation(const void* p, Allocation* out) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::shared_lock<std::shared_mutex> lock(table().mutex);
  auto it = table().byBase.upper_bound(a);
  if (it == table().byBase.begin()) return false;
  --it;
  const Allocation& al = it->second;
  // A zero-byte registration still owns its base address.
  if (a >= al.base + (al.size == 0 ? 1 : al.size)) return false;
  *out = al;
  return true;
}

namespace {

// Per device, the bytes this process's device allocations hold.
std::mutex gUsedMutex;
std::vector<size_t> gUsed;

size_t freeBeside(size_t used) { return options().deviceMemory - std::min(used, options().deviceMemory); }

// Takes `bytes` of `device`'s memory; false where they would exceed its capacity.
bool reserveDeviceMemory(int device, size_t bytes) {
  std::lock_guard<std::mutex> lock(gUsedMutex);
  if (gUsed.size() <= static_cast<size_t>(device)) gUsed.resize(static_cast<size_t>(device) + 1, 0);
  size_t& used = gUsed[static_cast<size_t>(device)];
  if (bytes > freeBeside(used)) return false;
  used += bytes;
  return true;
}

void releaseDeviceMemory(int device, size_t bytes) {
  std::lock_guard<std::mutex> lock(gUsedMutex);
  if (gUsed.size() > static_cast<size_t>(device)) gUsed[static_cast<size_t>(device)] -= bytes;
}

}  // namespace

size_t deviceMemoryFree(int device) {
  std::lock_guard<std::mutex> lock(gUsedMutex);
  return freeBeside(gUsed.size() > static_cast<size_t>(device) ? gUsed[static_cast<size_t>(device)] : 0);
}

cudaError_t allocateDevice(void** p, size_t bytes, bool implicitSync) {
  // The stream-ordered calls (no implicit synchronisation) allocate from the device's memory pool.
  const bool streamOrdered = !implicitSync;
  const char* call = streamOrdered ? "cudaMallocAsync" : "cudaMalloc";
  *p = nullptr;
  if (bytes == 0) return cudaSuccess;
  if (implicitSync) {
    if (const cudaError_t rc = synchronizeDevice(currentDevice(), call, true); rc != cudaSuccess) return rc;
  }
  const int device = currentDevice();
  if (!reserveDeviceMemory(device, bytes)) {
    return fail(cudaErrorMemoryAllocation, "%s of %zu bytes: device %d has %zu of its %zu bytes free (CUDA_SIM_DEVICE_MEMORY)",
                call, bytes, device, deviceMemoryFree(device), options().deviceMemory);
  }
  // Gives the reservation back on every failure below.
  struct Reservation {
    int device;
    size_t bytes;
    bool kept = false;
    ~Reservation() {
      if (!kept) releaseDeviceMemory(device, bytes);
    }
  } reservation{device, bytes};
  const int fd = memfd_create("strata-cuda-sim", MFD_CLOEXEC);
  if (fd < 0) return fail(cudaErrorMemoryAllocation, "memfd_create: %s", std::strerror(errno));
  const size_t fileBytes = kPage + roundUp(bytes, kPage);
  if (ftruncate(fd, static_cast<off_t>(fileBytes)) != 0) {
    close(fd);
    return fail(cudaErrorMemoryAllocation, "cudaMalloc of %zu bytes: %s", bytes, std::strerror(errno));
  }
  Allocation a;
  if (const cudaError_t rc = mapDeviceFile(fd, bytes, fileBytes, &a); rc != cudaSuccess) {
    close(fd);
    return rc;
  }
  a.kind = AllocKind::kDevice;
  a.streamOrdered = streamOrdered;
  a.device = currentDevice();
  a.home = a.device;
  a.id = table().nextId.fetch_add(1) | (static_cast<uint64_t>(getpid()) << 32);
  a.header->magic = kMagic;
  a.header->id = a.id;
  a.header->device = a.device;
  new (&a.header->opens) std::atomic<int>(0);
  // Fresh device memory holds garbage on a GPU, not zeros: make reading it before writing visible.
  std::memset(a.backing, 0xA5, bytes);
  insert(a);
  reservation.kept = true;
  *p = reinterpret_cast<void*>(a.base);
  return cudaSuccess;
}

cudaError_t freeDevice(void* p, bool implicitSync) {
  if (p == nullptr) return cudaSuccess;
  Allocation a;
  if (findAllocation(p, &a) && a.kind == AllocKind::kManaged && a.base == reinterpret_cast<uintptr_t>(p)) {
    // cudaFree frees managed memory too, once the device's work that may use it is done.
    if (const cudaError_t rc = synchronizeDevice(a.device, "cudaFree", true); rc != cudaSuccess) return rc;
    if (!take(p, AllocKind::kManaged, &a)) return fail(cudaErrorInvalidValue, "cudaFree(%p): freed twice", p);
    munmap(p, a.mappedBytes);
    return cudaSuccess;
  }
  if (!findAllocation(p, &a) || a.kind != AllocKind::kDevice || a.base != reinterpret_cast<uintptr_t>(p)) {
    return fail(cudaErrorInvalidValue, "cudaFree(%p): not the base of a cudaMalloc allocation of this process", p);
  }
  if (implicitSync) {
    if (const cudaError_t rc = synchronizeDevice(a.device, "cudaFree", true); rc != cudaSuccess) return rc;
  }
  if (a.exported) {
    const int opens = a.header->opens.load();
    if (opens > 0) {
      violation("cudaFree(%p): the allocation was exported with cudaIpcGetMemHandle and %d other process(es) still "
                "have it open (cudaIpcCloseMemHandle first; their reads would see freed memory)",
                p, opens);
    }
  }
  if (!take(p, AllocKind::kDevice, &a)) return fail(cudaErrorInvalidValue, "cudaFree(%p): freed twice", p);
  releaseDeviceMemory(a.home, a.size);
  unmapDeviceFile(a);
  close(a.fd);
  return cudaSuccess;
}

namespace {

// Host-mapped memory of `kind` (pinned or managed), after the device's work is done (CUDA's
// allocations synchronise): `call` names the caller in errors.
cudaError_t allocateMapped(void** p, size_t bytes, unsigned flags, AllocKind kind, const char* call) {
  *p = nullptr;
  if (const cudaError_t rc = synchronizeDevice(currentDevice(), call, true); rc != cudaSuccess) return rc;
  const size_t mapped = roundUp(bytes == 0 ? 1 : bytes, kPage);
  void* m = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return fail(cudaErrorMemoryAllocation, "%s of %zu bytes: %s", call, bytes, std::strerror(errno));
  Allocation a;
  a.base = reinterpret_cast<uintptr_t>(m);
  a.size = bytes;
  a.mappedBytes = mapped;
  a.kind = kind;
  a.device = currentDevice();
  // Managed memory: kernels that use it find it on their GPU (the driver migrated it there).
  a.home = kind == AllocKind::kManaged ? a.device : -1;
  a.flags = flags;
  a.backing = static_cast<char*>(m);
  insert(a);
  *p = m;
  return cudaSuccess;
}

}  // namespace

cudaError_t allocatePinned(void** p, size_t bytes, unsigned flags) {
  return allocateMapped(p, bytes, flags, AllocKind::kPinnedHost, "cudaHostAlloc");
}

cudaError_t allocateManaged(void** p, size_t bytes, unsigned flags) {
  *p = nullptr;
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost) {
    return fail(cudaErrorInvalidValue, "cudaMallocManaged: flags %u (cudaMemAttachGlobal or cudaMemAttachHost)", flags);
  }
  if (bytes == 0) return fail(cudaErrorInvalidValue, "cudaMallocManaged of 0 bytes");
  return allocateMapped(p, bytes, flags, AllocKind::kManaged, "cudaMallocManaged");
}

cudaError_t freePinned(void* p) {
  if (p == nullptr) return cudaSuccess;
  if (const cudaError_t rc = synchronizeDevice(currentDevice(), "cudaFreeHost", true); rc != cudaSuccess) return rc;
  Allocation a;
  if (!take(p, AllocKind::kPinnedHost, &a)) {
    return fail(cudaErrorInvalidValue, "cudaFreeHost(%p): not the base of a cudaHostAlloc/cudaMallocHost allocation", p);
  }
  munmap(p, a.mappedBytes);
  return cudaSuccess;
}

cudaError_t registerHost(void* p, size_t bytes, unsigned flags) {
  if (p == nullptr || bytes == 0) return fail(cudaErrorInvalidValue, "cudaHostRegister: null pointer or zero bytes");
  Allocation existing;
  if (findAllocation(p, &existing) || findAllocation(static_cast<char*>(p) + bytes - 1, &existing)) {
    return fail(cudaErrorHostMemoryAlreadyRegistered, "cudaHostRegister(%p, %zu): overlaps %s", p, bytes,
                kindName(existing.kind));
  }
  Allocation a;
  a.base = reinterpret_cast<uintptr_t>(p);
  a.size = bytes;
  a.kind = AllocKind::kRegisteredHost;
  a.device = currentDevice();
  a.flags = flags;
  a.backing = static_cast<char*>(p);
  insert(a);
  return cudaSuccess;
}

cudaError_t unregisterHost(void* p) {
  Allocation a;
  if (!take(p, AllocKind::kRegisteredHost, &a)) {
    return fail(cudaErrorHostMemoryNotRegistered, "cudaHostUnregister(%p): not registered", p);
  }
  return cudaSuccess;
}

cudaError_t ipcExport(cudaIpcMemHandle_t* handle, void* p) {
  Allocation a;
  if (!findAllocation(p, &a) || a.kind != AllocKind::kDevice) {
    return fail(cudaErrorInvalidValue, "cudaIpcGetMemHandle(%p): not device memory allocated by this process", p);
  }
  if (a.base != reinterpret_cast<uintptr_t>(p)) {
    return fail(cudaErrorInvalidValue,
                "cudaIpcGetMemHandle(%p): not the base of its allocation (%p); CUDA exports whole allocations", p,
                reinterpret_cast<void*>(a.base));
  }
  if (a.streamOrdered) {
    // A pool's memory is shared through the pool's own export (cudaMemPoolExportPointer), not this
    // call: what a CUDA-aware MPI that maps device buffers over CUDA IPC trips on.
    return fail(cudaErrorInvalidValue, "cudaIpcGetMemHandle(%p): memory from cudaMallocAsync (a memory pool's)", p);
  }
  {
    std::unique_lock<std::shared_mutex> lock(table().mutex);
    table().byBase[a.base].exported = true;
  }
  std::memset(handle, 0, sizeof(*handle));
  HandleBody body{kMagic, static_cast<int32_t>(getpid()), a.fd, a.id, a.size};
  std::memcpy(handle->reserved, &body, sizeof body);
  return cudaSuccess;
}

cudaError_t ipcOpen(void** p, cudaIpcMemHandle_t handle) {
  *p = nullptr;
  HandleBody body;
  std::memcpy(&body, handle.reserved, sizeof body);
  if (body.magic != kMagic) return fail(cudaErrorInvalidValue, "cudaIpcOpenMemHandle: not a handle from cudaIpcGetMemHandle");
  if (body.pid == static_cast<int32_t>(getpid())) {
    return fail(cudaErrorDeviceUninitialized,
                "cudaIpcOpenMemHandle: the handle was exported by this process; CUDA IPC handles open in other "
                "processes only");
  }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", body.pid, body.fd);
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    return fail(cudaErrorInvalidResourceHandle, "cudaIpcOpenMemHandle: the exporting process %d no longer has the "
                "allocation (%s)", body.pid, std::strerror(errno));
  }
  struct stat st{};
  fstat(fd, &st);
  Allocation a;
  if (const cudaError_t rc = mapDeviceFile(fd, body.size, static_cast<size_t>(st.st_size), &a); rc != cudaSuccess) {
    close(fd);
    return rc;
  }
  if (a.header->magic != kMagic || a.header->id != body.id) {
    unmapDeviceFile(a);
    close(fd);
    return fail(cudaErrorInvalidResourceHandle, "cudaIpcOpenMemHandle: the exported allocation was freed");
  }
  a.kind = AllocKind::kIpcImport;
  a.device = currentDevice();
  a.home = a.header->device;
  a.id = body.id;
  a.header->opens.fetch_add(1);
  insert(a);
  *p = reinterpret_cast<void*>(a.base);
  return cudaSuccess;
}

cudaError_t ipcClose(void* p) {
  Allocation a;
  if (!take(p, AllocKind::kIpcImport, &a)) {
    return fail(cudaErrorInvalidValue, "cudaIpcCloseMemHandle(%p): not a pointer from cudaIpcOpenMemHandle", p);
  }
  a.header->opens.fetch_sub(1);
  unmapDeviceFile(a);
  close(a.fd);
  return cudaSuccess;
}

char* backingOf(const void* p, size_t bytes, bool* isDevice) {
  Allocation a;
  *isDevice = false;
  if (!findAllocation(p, &a)) return static_cast<char*>(const_cast<void*>(p));  // pageable host memory
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  const bool device = a.kind == AllocKind::kDevice || a.kind == AllocKind::kIpcImport;
  if (device && addr + bytes > a.base + a.size) return nullptr;
  *isDevice = device;
  return reinterpret_cast<char*>(static_cast<intptr_t>(addr) + a.delta);
}

// Called by kernels (device.h) when no recent window covers an access.
char* translateSlow(const void* p, size_t bytes, size_t align, bool write);

}  // namespace cuda_sim
