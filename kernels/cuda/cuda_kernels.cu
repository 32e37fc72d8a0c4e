// Kernel launchers shared by every type family: the dispatch of launchReduce, the copy kernel,
// the average's divide, the device-side result check, and the grid size.
#include <cmath>
#include <map>
#include <mutex>
#include <utility>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/reduce_kernels.cuh"

namespace strata::cuda {
namespace {

Status lastLaunchError(const char* kernel) {
  return cudaCheck(cudaGetLastError(), "cudaGetLastError", STRATA_WHERE).withContext(strformat("launching %s", kernel));
}

template <typename T>
__device__ __forceinline__ bool differs(T actual, T expected, double tolerance) {
  using Tr = DevTraits<T>;
  if constexpr (std::is_integral_v<T>) {
    return actual != expected;
  } else {
    const double a = static_cast<double>(Tr::load(actual));
    const double e = static_cast<double>(Tr::load(expected));
    if (std::isnan(a) || std::isnan(e)) return !(std::isnan(a) && std::isnan(e));
    if (std::isinf(a) || std::isinf(e)) return a != e;
    return std::fabs(a - e) > tolerance * std::fmax(1.0, std::fabs(e));
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) countMismatchesKernel(const T* actual, const T* expected, size_t count,
                                                                  double tolerance, unsigned long long* out) {
  unsigned long long mine = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    mine += differs(loadGlobal(actual + i), loadGlobal(expected + i), tolerance) ? 1 : 0;
  }
  const unsigned long long block = blockReduce<unsigned long long, DevSum>(mine);
  if (threadIdx.x == 0 && block != 0) atomicAdd(out, block);
}

template <typename T>
void launchMismatchesTyped(const void* actual, const void* expected, size_t count, double tolerance,
                           unsigned long long* out, cudaStream_t stream) {
  launchKernel("countMismatchesKernel", countMismatchesKernel<T>,
               gridFor(reinterpret_cast<const void*>(countMismatchesKernel<T>), count, kThreads), kThreads, stream,
               static_cast<const T*>(actual), static_cast<const T*>(expected), count, tolerance, out);
}

__global__ void waitFlagKernel(const volatile uint32_t* flag, uint32_t value, unsigned long long timeoutNs,
                               volatile uint32_t* timedOut) {
  const unsigned long long start = deviceTimerNs();
  while (static_cast<int32_t>(loadVolatileGlobal(flag) - value) < 0) {
    if (deviceTimerNs() - start > timeoutNs) {
      // The stream must not go on as if the collective had completed: the work queued after it would
      // read a partial result as valid. Trapping ends the context with an error every later CUDA
      // call reports; *timedOut tells Strata why.
      storeGlobal(const_cast<uint32_t*>(timedOut), 1u);
      __threadfence_system();
      __trap();
    }
    __nanosleep(2000);
  }
}

// Calls f.template run<T>() with T the device storage type of `type`.
template <typename F>
bool withDeviceType(DataType type, F&& f) {
  switch (type) {
    case strataInt8: f.template run<int8_t>(); return true;
    case strataUint8: f.template run<uint8_t>(); return true;
    case strataInt32: f.template run<int32_t>(); return true;
    case strataUint32: f.template run<uint32_t>(); return true;
    case strataInt64: f.template run<int64_t>(); return true;
    case strataUint64: f.template run<uint64_t>(); return true;
    case strataFloat16: f.template run<__half>(); return true;
    case strataFloat32: f.template run<float>(); return true;
    case strataFloat64: f.template run<double>(); return true;
    case strataBfloat16: f.template run<__nv_bfloat16>(); return true;
    default: return false;
  }
}

}  // namespace

unsigned gridFor(const void* kernel, size_t work, unsigned threads) {
  // Resident blocks per multiprocessor for this kernel, times the multiprocessors: asked once per
  // kernel and device (the answer depends on the compiled kernel's registers and shared memory).
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, size_t> resident;
  int device = 0;
  cudaGetDevice(&device);
  size_t maxBlocks = 0;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = resident.find({kernel, device});
    if (it != resident.end()) maxBlocks = it->second;
  }
  if (maxBlocks == 0) {
    // Asked outside the lock: the driver may take its time (or load the kernel), and another
    // thread's launch of a loaded kernel must not wait for it.
    int sms = 0, perSm = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) sms = 1;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, static_cast<int>(threads), 0) != cudaSuccess ||
        perSm <= 0) {
      perSm = 1;
    }
    cudaGetLastError();  // a failed query leaves nothing for the launch's own check to find
    maxBlocks = static_cast<size_t>(sms) * static_cast<size_t>(perSm);
    std::lock_guard<std::mutex> lock(mutex);
    resident[{kernel, device}] = maxBlocks;
  }
  const size_t needed = (work + threads - 1) / threads;
  const size_t blocks = needed < maxBlocks ? needed : maxBlocks;
  return static_cast<unsigned>(blocks == 0 ? 1 : blocks);
}

Status launchReduce(void* dst0, void* dst1, const void* const* srcs, int n, size_t count, DataType type, RedOp op,
                    int divisor, cudaStream_t stream) {
  STRATA_REQUIRE(n >= 1 && n <= kMaxReduceInputs, strataInternalError, "device reduce: %d inputs (expected 1..%d)", n,
                 kMaxReduceInputs);
  STRATA_REQUIRE(isValidRedOp(op), strataInternalError, "device reduce: invalid op %d", static_cast<int>(op));
  if (count == 0) return Status::Ok();
  ReduceArgs a;
  for (int k = 0; k < n; ++k) a.srcs[k] = srcs[k];
  a.dst0 = dst0;
  // A second output at another offset from a 16-byte boundary than the first cannot share its
  // vector stores: it gets a vectorised copy of the first once the reduction is done.
  const bool copyAfter = !sharesVectorAlignment(dst0, dst1);
  a.dst1 = copyAfter ? nullptr : dst1;
  a.n = n;
  a.divisor = divisor;
  a.count = count;
  TypedLaunch launch;
  launch.reduce = &a;
  launch.op = op;
  launch.stream = stream;
  if (!launchAnyType(launch, type)) {
    return makeStatus(strataInternalError, "device reduce: invalid datatype %d", static_cast<int>(type));
  }
  STRATA_CHECK(lastLaunchError("the reduce kernel"));
  return copyAfter ? launchCopy(dst1, dst0, count * dataTypeSize(type), stream) : Status::Ok();
}

Status launchCopy(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  if (bytes == 0 || dst == src) return Status::Ok();
  const void* srcs[1] = {src};
  // A copy is a one-input reduce of bytes: same vector path, same heads and tails.
  return launchReduce(dst, nullptr, srcs, 1, bytes, strataUint8, strataSum, 0, stream);
}

struct MismatchLauncher {
  const void* actual;
  const void* expected;
  size_t count;
  double tolerance;
  unsigned long long* out;
  cudaStream_t stream;
  template <typename T>
  void run() const { launchMismatchesTyped<T>(actual, expected, count, tolerance, out, stream); }
};

Status launchDivide(void* data, size_t count, DataType type, int divisor, cudaStream_t stream) {
  STRATA_REQUIRE(divisor > 0, strataInternalError, "device divide: divisor %d", divisor);
  const void* srcs[1] = {data};
  return launchReduce(data, nullptr, srcs, 1, count, type, strataSum, divisor, stream);
}

Status launchCountMismatches(const void* actual, const void* expected, size_t count, DataType type, double tolerance,
                             unsigned long long* mismatches, cudaStream_t stream) {
  if (count == 0) return Status::Ok();
  const bool ok = withDeviceType(type, MismatchLauncher{actual, expected, count, tolerance, mismatches, stream});
  STRATA_REQUIRE(ok, strataInternalError, "device check: invalid datatype %d", static_cast<int>(type));
  return lastLaunchError("the check kernel");
}

struct MismatchLoader {
  cudaError_t* loaded;
  template <typename T>
  void run() const { loadKernel(reinterpret_cast<const void*>(countMismatchesKernel<T>), loaded); }
};

Status preloadKernels() {
  cudaError_t loaded = cudaSuccess;
  for (int t = 0; t < kNumDataTypes; ++t) {
    const DataType type = static_cast<DataType>(t);
    for (int op = 0; op < kNumRedOps; ++op) {  // strataAvg runs the sum kernel: loaded twice, harmless
      TypedLaunch l;
      l.op = static_cast<RedOp>(op);
      l.loaded = &loaded;
      STRATA_REQUIRE(launchAnyType(l, type), strataInternalError, "preloading kernels: datatype %d", t);
    }
    withDeviceType(type, MismatchLoader{&loaded});
  }
  loadKernel(reinterpret_cast<const void*>(waitFlagKernel), &loaded);
  loadKernel(peerStopKernelAddress(), &loaded);
  cudaGetLastError();  // the failure is reported here, not left for the next launch's check
  return cudaCheck(loaded, "cudaFuncGetAttributes (loading the library's kernels)", STRATA_WHERE);
}

Status launchWaitFlag(const uint32_t* flag, uint32_t value, double timeoutSeconds, uint32_t* timedOut,
                      cudaStream_t stream) {
  const unsigned long long ns = static_cast<unsigned long long>(timeoutSeconds * 1e9);
  launchKernel("waitFlagKernel", waitFlagKernel, 1, 1, stream, static_cast<const volatile uint32_t*>(flag), value, ns,
               static_cast<volatile uint32_t*>(timedOut));
  return lastLaunchError("the flag-wait kernel");
}

}  // namespace strata::cuda
