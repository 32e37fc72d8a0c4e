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

Status StreamGate::init(Mode mode) {
  mode_ = mode;
  useWaitValue_ = mode != Mode::kKernel;
  // Refused here, before any call is queued, rather than at a call's hold.
  STRATA_REQUIRE(mode != Mode::kWaitValue || waitValueFn() != nullptr, strataInvalidUsage,
                 "STRATA_STREAM_GATE=value: this driver has no stream wait-value operation");
  STRATA_CHECK(allocateWord(&counterHost_, &counterDevice_));
  return allocateWord(&timedOutHost_, &timedOutDevice_);
}

Status StreamGate::hold(cudaStream_t stream, uint32_t ticket, double boundSeconds) {
  if (useWaitValue_ && waitValueFn() != nullptr) {
    const CUresult r = waitValueFn()(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(counterDevice_),
                                     ticket, CU_STREAM_WAIT_VALUE_GEQ);
    if (r == CUDA_SUCCESS) return Status::Ok();
    STRATA_REQUIRE(mode_ != Mode::kWaitValue, strataSystemError,
                   "STRATA_STREAM_GATE=value: the driver's stream wait-value operation failed (CUresult %d)",
                   static_cast<int>(r));
    useWaitValue_ = false;  // not supported here: the bounded kernel from now on
  }
  return cuda::launchWaitFlag(counterDevice_, ticket, boundSeconds, timedOutDevice_, stream);
}

void StreamGate::release(uint32_t ticket) { __atomic_store_n(counterHost_, ticket, __ATOMIC_RELEASE); }

bool StreamGate::timedOut() const {
  return timedOutHost_ != nullptr && __atomic_load_n(timedOutHost_, __ATOMIC_ACQUIRE) != 0;
}

}  // namespace strata
