#include "src/core/stream_gate.h"

#include <cuda.h>  // driver types only: cuStreamWaitValue32 is fetched at run time, libcuda is not linked

#include <cstring>
#include <mutex>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"

namespace strata {
namespace {

// One word of pinned, mapped host memory, from pages that are never freed.
Status allocateWord(uint32_t** host, uint32_t** device) {
  static std::mutex mutex;
  static uint32_t* page = nullptr;
  static size_t used = 0;
  constexpr size_t kWords = 1024;
  std::lock_guard<std::mutex> lock(mutex);
  if (page == nullptr || used == kWords) {
    void* p = nullptr;
    STRATA_CHECK_CUDA(cudaHostAlloc(&p, kWords * sizeof(uint32_t), cudaHostAllocMapped | cudaHostAllocPortable));
    std::memset(p, 0, kWords * sizeof(uint32_t));
    page = static_cast<uint32_t*>(p);
    used = 0;
  }
  *host = page + used++;
  void* d = nullptr;
  STRATA_CHECK_CUDA(cudaHostGetDevicePointer(&d, *host, 0));
  *device = static_cast<uint32_t*>(d);
  return Status::Ok();
}

using WaitValueFn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
WaitValueFn waitValueFn() {
  static const WaitValueFn fn = []() -> WaitValueFn {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &p, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess) {
      return reinterpret_cast<WaitValueFn>(p);
    }
    cudaGetLastError();
    return nullptr;
  }();
  return fn;
}

}  // namespace

Status StreamGate::init(StreamGateMode mode) {
  mode_ = mode;
  STRATA_CHECK(allocateWord(&counterHost_, &counterDevice_));
  STRATA_CHECK(allocateWord(&timedOutHost_, &timedOutDevice_));
  useWaitValue_ = false;
  if (mode == StreamGateMode::kKernel) return Status::Ok();
  // Whether the driver runs the wait-value operation, asked once here with a wait that is already
  // satisfied (the counter is at or past 0), before any call is queued: a driver that has the
  // entry point may still refuse the operation (CUDA_ERROR_NOT_SUPPORTED).
  CUresult probe = CUDA_ERROR_NOT_SUPPORTED;
  if (waitValueFn() != nullptr) {
    cudaStream_t s = nullptr;
    STRATA_CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    probe = waitValueFn()(reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(counterDevice_), 0,
                          CU_STREAM_WAIT_VALUE_GEQ);
    const cudaError_t synced = cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
    STRATA_CHECK_CUDA(synced);
  }
  STRATA_REQUIRE(mode != StreamGateMode::kWaitValue || probe == CUDA_SUCCESS, strataInvalidUsage,
                 "STRATA_STREAM_GATE=value: this driver does not run the stream wait-value operation (CUresult %d)",
                 static_cast<int>(probe));
  useWaitValue_ = probe == CUDA_SUCCESS;
  return Status::Ok();
}

Status StreamGate::hold(cudaStream_t stream, uint32_t ticket, double boundSeconds) {
  if (useWaitValue_) {
    const CUresult r = waitValueFn()(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(counterDevice_),
                                     ticket, CU_STREAM_WAIT_VALUE_GEQ);
    if (r == CUDA_SUCCESS) return Status::Ok();
    STRATA_REQUIRE(mode_ != StreamGateMode::kWaitValue, strataSystemError,
                   "STRATA_STREAM_GATE=value: the driver's stream wait-value operation failed (CUresult %d)",
                   static_cast<int>(r));
    useWaitValue_ = false;  // refused after all: the bounded kernel from now on
  }
  return cuda::launchWaitFlag(counterDevice_, ticket, boundSeconds, timedOutDevice_, stream);
}

void StreamGate::release(uint32_t ticket) { __atomic_store_n(counterHost_, ticket, __ATOMIC_RELEASE); }

bool StreamGate::timedOut() const {
  return timedOutHost_ != nullptr && __atomic_load_n(timedOutHost_, __ATOMIC_ACQUIRE) != 0;
}

}  // namespace strata
