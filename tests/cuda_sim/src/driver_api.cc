// CUDA driver entry points that Strata reaches through cudaGetDriverEntryPointByVersion: the
// stream memory operations (wait for and write a 32- or 64-bit value in memory the device can
// reach). CUDA_SIM_STREAM_MEM_OPS=0 makes them unsupported, as on systems without them.
#include <cstring>

#include "sim.h"

using namespace cuda_sim;

#define CUDA_SIM_EXPORT __attribute__((visibility("default")))

namespace {

CUresult waitValue(CUstream stream, CUdeviceptr addr, uint64_t value, unsigned flags, bool is64) {
  if (sticky() != cudaSuccess) return CUDA_ERROR_ILLEGAL_ADDRESS;
  if (!options().streamMemOps) return CUDA_ERROR_NOT_SUPPORTED;
  const void* p = reinterpret_cast<const void*>(addr);
  Allocation a;
  const unsigned compare = flags & 0xf;
  if (!findAllocation(p, &a) || (addr % (is64 ? 8 : 4)) != 0 || addr + (is64 ? 8 : 4) > a.base + a.size ||
      (compare != CU_STREAM_WAIT_VALUE_GEQ && compare != CU_STREAM_WAIT_VALUE_EQ && compare != CU_STREAM_WAIT_VALUE_AND &&
       compare != CU_STREAM_WAIT_VALUE_NOR)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUstream_st* s = resolveStream(stream);
  if (s == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  auto op = std::make_shared<Op>();
  op->kind = Op::kWaitValue;
  char what[128];
  std::snprintf(what, sizeof what, "cuStreamWaitValue%d(%p, %llu, flags %u)", is64 ? 64 : 32, p,
                static_cast<unsigned long long>(value), flags);
  op->what = what;
  op->waitAddress = p;
  op->waitValue = value;
  op->waitFlags = flags;
  op->wait64 = is64;
  return enqueue(s, op, nullptr, false) == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult writeValue(CUstream stream, CUdeviceptr addr, uint64_t value, unsigned flags, bool is64) {
  if (sticky() != cudaSuccess) return CUDA_ERROR_ILLEGAL_ADDRESS;
  if (!options().streamMemOps) return CUDA_ERROR_NOT_SUPPORTED;
  const void* p = reinterpret_cast<const void*>(addr);
  bool isDevice = false;
  Allocation a;
  if (!findAllocation(p, &a) || (addr % (is64 ? 8 : 4)) != 0 || addr + (is64 ? 8 : 4) > a.base + a.size) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  char* q = backingOf(p, is64 ? 8 : 4, &isDevice);
  CUstream_st* s = resolveStream(stream);
  if (s == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  auto op = std::make_shared<Op>();
  op->kind = Op::kWriteValue;
  op->what = is64 ? "cuStreamWriteValue64" : "cuStreamWriteValue32";
  op->waitAddress = p;  // the address it writes, for the deadlock check
  op->run = [q, value, is64] {
    if (is64) {
      __atomic_store_n(reinterpret_cast<uint64_t*>(q), value, __ATOMIC_RELEASE);
    } else {
      __atomic_store_n(reinterpret_cast<uint32_t*>(q), static_cast<uint32_t>(value), __ATOMIC_RELEASE);
    }
  };
  return enqueue(s, op, nullptr, false) == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

}  // namespace

extern "C" {

CUDA_SIM_EXPORT CUresult cuStreamWaitValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags) {
  return waitValue(stream, addr, value, flags, false);
}
CUDA_SIM_EXPORT CUresult cuStreamWaitValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags) {
  return waitValue(stream, addr, value, flags, true);
}
CUDA_SIM_EXPORT CUresult cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags) {
  return writeValue(stream, addr, value, flags, false);
}
CUDA_SIM_EXPORT CUresult cuStreamWriteValue64(CUstream stream, CUdeviceptr addr, cuuint64_t value, unsigned int flags) {
  return writeValue(stream, addr, value, flags, true);
}

CUDA_SIM_EXPORT CUresult cuGetErrorString(CUresult error, const char** str) {
  *str = error == CUDA_SUCCESS ? "no error" : error == CUDA_ERROR_NOT_SUPPORTED ? "operation not supported" : "error";
  return CUDA_SUCCESS;
}

CUDA_SIM_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** fn, unsigned int version,
                                                             unsigned long long flags,
                                                             cudaDriverEntryPointQueryResult* status) {
  struct Entry {
    const char* name;
    void* fn;
  };
  static const Entry entries[] = {
      {"cuStreamWaitValue32", reinterpret_cast<void*>(&cuStreamWaitValue32)},
      {"cuStreamWaitValue64", reinterpret_cast<void*>(&cuStreamWaitValue64)},
      {"cuStreamWriteValue32", reinterpret_cast<void*>(&cuStreamWriteValue32)},
      {"cuStreamWriteValue64", reinterpret_cast<void*>(&cuStreamWriteValue64)},
      {"cuGetErrorString", reinterpret_cast<void*>(&cuGetErrorString)},
  };
  if (symbol == nullptr || fn == nullptr) return fail(cudaErrorInvalidValue, "cudaGetDriverEntryPointByVersion: null");
  *fn = nullptr;
  for (const Entry& e : entries) {
    if (std::strcmp(e.name, symbol) == 0) {
      *fn = e.fn;
      if (status != nullptr) *status = cudaDriverEntryPointSuccess;
      return cudaSuccess;
    }
  }
  if (status != nullptr) *status = cudaDriverEntryPointSymbolNotFound;
  return fail(cudaErrorSymbolNotFound, "cudaGetDriverEntryPointByVersion: the simulator has no %s", symbol);
}

}  // extern "C"
