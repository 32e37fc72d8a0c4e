// The CUDA simulator tested on its own: the rules it exists to enforce must catch what breaks them.
// Faults are sticky for the whole process, as on a GPU, so each is provoked in a child process
// (GoogleTest's death tests, "threadsafe" style: the child re-runs the binary from the start).
#include <cuda.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <cuda_sim/cuda_sim.h>
#include <cuda_sim/device.h>

namespace {

// ---- Test kernels (host-compiled device code, as Strata's own) ----------------------------------
void copyKernel(const uint4* src, uint4* dst, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) cuda_sim::store(dst + i, cuda_sim::load(src + i));
}

void delayedWriteKernel(int* p, int value, unsigned long long ns) {
  const unsigned long long start = cuda_sim::globalTimerNs();
  while (cuda_sim::globalTimerNs() - start < ns) __nanosleep(100000);
  cuda_sim::store(p, value);
}

// Sum of threadIdx.x + 1 over the block: warp shuffles, then __shared__ and __syncthreads.
void blockSumKernel(int* out) {
  __shared__ int partial[32];
  int v = static_cast<int>(threadIdx.x) + 1;
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    int sum = 0;
    for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w) sum += partial[w];
    cuda_sim::store(out + blockIdx.x, sum);
  }
}

// Half the warp waits for the whole warp, the other half for the whole block: a hang on a GPU.
void divergentBarrierKernel() {
  if (threadIdx.x < 16) {
    __syncwarp();
  } else {
    __syncthreads();
  }
}

void readKernel(const int* p, int* out) { cuda_sim::store(out, cuda_sim::load(p)); }
void read64Kernel(const long long* p, long long* out) { cuda_sim::store(out, cuda_sim::load(p)); }

template <typename... P, typename... A>
cudaError_t launch(void (*kernel)(P...), unsigned grid, unsigned block, cudaStream_t stream, A... args) {
  cuda_sim::LaunchSpec spec;
  spec.grid = dim3(grid);
  spec.block = dim3(block);
  spec.stream = stream;
  return cuda_sim::launch(spec, [=] { kernel(args...); });
}

void useThreadsafeDeathTests() { GTEST_FLAG_SET(death_test_style, "threadsafe"); }

// ---- Kernels ------------------------------------------------------------------------------------
TEST(CudaSim, KernelsCopyWithTheirGeometryAndAreCounted) {
  const size_t n = 100003;  // vectors: more than one grid-stride pass of 8 x 256 threads
  std::vector<uint4> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = uint4{static_cast<unsigned>(i), 1, 2, 3};
  uint4 *src = nullptr, *dst = nullptr;
  ASSERT_EQ(cudaMalloc(&src, n * sizeof(uint4)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dst, n * sizeof(uint4)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(src, host.data(), n * sizeof(uint4), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaSimResetCounters();
  ASSERT_EQ(launch(copyKernel, 8, 256, nullptr, static_cast<const uint4*>(src), dst, n), cudaSuccess);
  std::vector<uint4> back(n);
  ASSERT_EQ(cudaMemcpy(back.data(), dst, n * sizeof(uint4), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(std::memcmp(back.data(), host.data(), n * sizeof(uint4)), 0);
  cudaSimCounters c{};
  ASSERT_EQ(cudaSimGetProcessCounters(&c), cudaSuccess);
  EXPECT_EQ(c.kernelLaunches, 1u);
  EXPECT_EQ(c.kernelBytesRead, n * sizeof(uint4));
  EXPECT_EQ(c.kernelBytesWritten, n * sizeof(uint4));
  EXPECT_EQ(c.bytesDeviceToHost, n * sizeof(uint4));
  cudaFree(src);
  cudaFree(dst);
}

TEST(CudaSim, WarpShufflesSharedMemoryAndBarriers) {
  int* out = nullptr;
  ASSERT_EQ(cudaMalloc(&out, 3 * sizeof(int)), cudaSuccess);
  for (unsigned threads : {32u, 96u, 1024u}) {
    ASSERT_EQ(launch(blockSumKernel, 3, threads, nullptr, out), cudaSuccess);
    int got[3] = {0, 0, 0};
    ASSERT_EQ(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost), cudaSuccess);
    const int want = static_cast<int>(threads * (threads + 1) / 2);
    for (int b = 0; b < 3; ++b) EXPECT_EQ(got[b], want) << threads << " threads, block " << b;
  }
  cudaFree(out);
}

TEST(CudaSim, LaunchLimitsAreCudas) {
  EXPECT_EQ(launch(readKernel, 1, 1025, nullptr, static_cast<const int*>(nullptr), static_cast<int*>(nullptr)),
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "a launch error is not sticky";
}

// ---- Streams --------------------------------------------------------------------------------------
// The legacy default stream waits for a blocking stream's work; a non-blocking stream's it does not.
TEST(CudaSim, LegacyStreamSynchronisesWithBlockingStreamsOnly) {
  int* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(p, 0, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaStream_t blocking = nullptr, nonBlocking = nullptr;
  ASSERT_EQ(cudaStreamCreate(&blocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&nonBlocking, cudaStreamNonBlocking), cudaSuccess);
  int got = -1;
  ASSERT_EQ(launch(delayedWriteKernel, 1, 1, blocking, p, 7, 100000000ull), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&got, p, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);  // on stream 0
  EXPECT_EQ(got, 7) << "stream 0 must wait for the blocking stream's kernel";
  ASSERT_EQ(launch(delayedWriteKernel, 1, 1, nonBlocking, p, 9, 300000000ull), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&got, p, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got, 7) << "stream 0 must not wait for a non-blocking stream";
  ASSERT_EQ(cudaStreamSynchronize(nonBlocking), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&got, p, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got, 9);
  cudaStreamDestroy(blocking);
  cudaStreamDestroy(nonBlocking);
  cudaFree(p);
}

// A copy from pageable memory returns once the source is staged: changing it afterwards changes
// nothing on the device.
TEST(CudaSim, PageableSourceIsStagedAtTheCall) {
  int* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, sizeof(int)), cudaSuccess);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  int value = 5;
  ASSERT_EQ(launch(delayedWriteKernel, 1, 1, s, p, 1, 50000000ull), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(p, &value, sizeof(int), cudaMemcpyHostToDevice, s), cudaSuccess);
  value = 6;
  int got = 0;
  ASSERT_EQ(cudaMemcpyAsync(&got, p, sizeof(int), cudaMemcpyDeviceToHost, s), cudaSuccess);  // pageable: waits
  EXPECT_EQ(got, 5);
  cudaStreamDestroy(s);
  cudaFree(p);
}

TEST(CudaSim, EventsOrderStreams) {
  int* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, sizeof(int)), cudaSuccess);
  cudaStream_t a = nullptr, b = nullptr;
  cudaEvent_t e = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(launch(delayedWriteKernel, 1, 1, a, p, 3, 100000000ull), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(e, a), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(e), cudaErrorNotReady);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "not ready is not an error";
  ASSERT_EQ(cudaStreamWaitEvent(b, e, 0), cudaSuccess);
  int got = 0;
  ASSERT_EQ(cudaMemcpyAsync(&got, p, sizeof(int), cudaMemcpyDeviceToHost, b), cudaSuccess);
  EXPECT_EQ(got, 3);
  EXPECT_EQ(cudaEventQuery(e), cudaSuccess);
  cudaEventDestroy(e);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
  cudaFree(p);
}

TEST(CudaSim, WaitValueHoldsAStreamUntilWritten) {
  uint32_t* flag = nullptr;
  ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&flag), sizeof(uint32_t), cudaHostAllocMapped), cudaSuccess);
  *flag = 0;
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000, cudaEnableDefault, &q), cudaSuccess);
  auto wait = reinterpret_cast<CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned)>(fn);
  ASSERT_EQ(wait(s, reinterpret_cast<CUdeviceptr>(flag), 2, CU_STREAM_WAIT_VALUE_GEQ), CUDA_SUCCESS);
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorNotReady);
  __atomic_store_n(flag, 1u, __ATOMIC_RELEASE);
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorNotReady) << "1 is not >= 2";
  __atomic_store_n(flag, 2u, __ATOMIC_RELEASE);
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  cudaStreamDestroy(s);
}

TEST(CudaSim, CaptureRecordsInsteadOfRunning) {
  int* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(p, 0, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  ASSERT_EQ(cudaStreamIsCapturing(s, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  ASSERT_EQ(launch(delayedWriteKernel, 1, 1, s, p, 4, 0ull), cudaSuccess);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
  int got = -1;
  ASSERT_EQ(cudaMemcpy(&got, p, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got, 0) << "a captured kernel does not run";
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&got, p, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got, 4) << "the launched graph runs it";
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  cudaFree(p);
}

TEST(CudaSim, PointerAttributes) {
  void *d = nullptr, *h = nullptr;
  int pageable = 0;
  ASSERT_EQ(cudaMalloc(&d, 64), cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(&h, 64, cudaHostAllocDefault), cudaSuccess);
  cudaPointerAttributes a{};
  ASSERT_EQ(cudaPointerGetAttributes(&a, static_cast<char*>(d) + 8), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeDevice);
  ASSERT_EQ(cudaPointerGetAttributes(&a, h), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeHost);
  ASSERT_EQ(cudaPointerGetAttributes(&a, &pageable), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeUnregistered);
  cudaIpcMemHandle_t handle;
  EXPECT_EQ(cudaIpcGetMemHandle(&handle, static_cast<char*>(d) + 8), cudaErrorInvalidValue) << "base only";
  ASSERT_EQ(cudaIpcGetMemHandle(&handle, d), cudaSuccess);
  void* opened = nullptr;
  EXPECT_NE(cudaIpcOpenMemHandle(&opened, handle, cudaIpcMemLazyEnablePeerAccess), cudaSuccess)
      << "a handle opens in other processes only";
  cudaGetLastError();
  cudaFreeHost(h);
  cudaFree(d);
}

// Managed memory: host code writes it, kernels read and write it, copies of any direction name it,
// its attributes say managed, it cannot be exported through CUDA IPC, and cudaFree frees it.
TEST(CudaSim, ManagedMemoryIsReachedFromHostKernelsAndCopies) {
  const size_t n = 4099;
  int* m = nullptr;
  ASSERT_EQ(cudaMallocManaged(&m, n * sizeof(int), cudaMemAttachGlobal), cudaSuccess);
  for (size_t i = 0; i < n; ++i) m[i] = static_cast<int>(i);
  cudaPointerAttributes a{};
  ASSERT_EQ(cudaPointerGetAttributes(&a, m + 5), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeManaged);
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, n * sizeof(int)), cudaSuccess);
  // Device-to-device and host-to-host kinds both name it (the driver resolves where its pages are).
  ASSERT_EQ(cudaMemcpy(d, m, n * sizeof(int), cudaMemcpyDeviceToDevice), cudaSuccess);
  ASSERT_EQ(launch(readKernel, 1, 1, nullptr, static_cast<const int*>(d + 7), m), cudaSuccess);  // a kernel writes it
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(m[0], 7);
  int host[4] = {0, 0, 0, 0};
  ASSERT_EQ(cudaMemcpy(host, m + 1, sizeof host, cudaMemcpyHostToHost), cudaSuccess);
  EXPECT_EQ(host[3], 4);
  cudaIpcMemHandle_t handle;
  EXPECT_EQ(cudaIpcGetMemHandle(&handle, m), cudaErrorInvalidValue) << "managed memory has no IPC handle";
  cudaGetLastError();
  EXPECT_EQ(cudaFreeHost(m), cudaErrorInvalidValue) << "not pinned host memory";
  cudaGetLastError();
  EXPECT_EQ(cudaFree(m), cudaSuccess);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

// ---- Faults and broken rules (each in a child: they are sticky) -------------------------------------
TEST(CudaSimDeathTest, OutOfBoundsReadIsAStickyIllegalAddress) {
  useThreadsafeDeathTests();
  EXPECT_EXIT(
      {
        char* p = nullptr;
        long long* out = nullptr;
        cudaMalloc(&p, 20);
        cudaMalloc(&out, sizeof(long long));
        launch(read64Kernel, 1, 1, nullptr, reinterpret_cast<const long long*>(p + 16), out);  // bytes 16..23 of 20
        const bool sticky = cudaDeviceSynchronize() == cudaErrorIllegalAddress &&
                            cudaMalloc(&p, 4) == cudaErrorIllegalAddress;
        std::exit(sticky ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "runs 4 bytes past the end");
}

TEST(CudaSimDeathTest, MisalignedVectorLoadFaults) {
  useThreadsafeDeathTests();
  EXPECT_EXIT(
      {
        uint4* p = nullptr;
        uint4* q = nullptr;
        cudaMalloc(&p, 64);
        cudaMalloc(&q, 64);
        const uint4* skewed = reinterpret_cast<const uint4*>(reinterpret_cast<char*>(p) + 4);
        launch(copyKernel, 1, 1, nullptr, skewed, q, size_t{1});
        std::exit(cudaDeviceSynchronize() == cudaErrorMisalignedAddress ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "not aligned to 16 bytes");
}

TEST(CudaSimDeathTest, KernelReadingPageableMemoryFaults) {
  useThreadsafeDeathTests();
  EXPECT_EXIT(
      {
        static int pageable = 1;
        int* out = nullptr;
        cudaMalloc(&out, sizeof(int));
        launch(readKernel, 1, 1, nullptr, static_cast<const int*>(&pageable), out);
        std::exit(cudaDeviceSynchronize() == cudaErrorIllegalAddress ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "no device-accessible allocation");
}

TEST(CudaSimDeathTest, HostCodeDereferencingDevicePointerCrashes) {
  useThreadsafeDeathTests();
  EXPECT_EXIT(
      {
        int* p = nullptr;
        cudaMalloc(&p, sizeof(int));
        volatile int v = *p;
        (void)v;
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGSEGV), "");
}

TEST(CudaSimDeathTest, BarrierNotReachedByEveryThreadIsReported) {
  useThreadsafeDeathTests();
  EXPECT_EXIT(
      {
        launch(divergentBarrierKernel, 1, 32, nullptr);
        std::exit(cudaDeviceSynchronize() == cudaErrorLaunchFailure ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "never reach");
}

// cudaMalloc waits for the device; with a stream held by an unwritten wait-value that is the
// deadlock a GPU would have, reported instead of hung.
TEST(CudaSimDeathTest, AllocatingWhileAStreamWaitsForAValueIsADeadlock) {
  useThreadsafeDeathTests();
  EXPECT_EXIT(
      {
        uint32_t* flag = nullptr;
        cudaHostAlloc(reinterpret_cast<void**>(&flag), sizeof(uint32_t), cudaHostAllocMapped);
        *flag = 0;
        cudaStream_t s = nullptr;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        cuStreamWaitValue32(s, reinterpret_cast<CUdeviceptr>(flag), 1, CU_STREAM_WAIT_VALUE_GEQ);
        void* p = nullptr;
        const cudaError_t rc = cudaMalloc(&p, 64);
        *flag = 1;
        std::exit(rc == cudaErrorNotPermitted ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "would deadlock");
}

// The stream-ordered allocator waits for no work: beside the same held stream, cudaMallocAsync and
// cudaFreeAsync succeed, and the free runs on its stream after the work enqueued before it. Its
// memory is a pool's, which cudaIpcGetMemHandle does not export.
TEST(CudaSim, StreamOrderedAllocationWaitsForNoOtherStream) {
  int pools = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, 0), cudaSuccess);
  EXPECT_EQ(pools, 1);
  uint32_t* flag = nullptr;
  ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&flag), sizeof(uint32_t), cudaHostAllocMapped), cudaSuccess);
  *flag = 0;
  cudaStream_t held = nullptr, own = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&held, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cuStreamWaitValue32(held, reinterpret_cast<CUdeviceptr>(flag), 1, CU_STREAM_WAIT_VALUE_GEQ), CUDA_SUCCESS);
  void* p = nullptr;
  ASSERT_EQ(cudaMallocAsync(&p, 1 << 20, own), cudaSuccess);
  cudaIpcMemHandle_t handle;
  EXPECT_EQ(cudaIpcGetMemHandle(&handle, p), cudaErrorInvalidValue);  // a pool's memory: no CUDA IPC
  cudaGetLastError();
  ASSERT_EQ(cudaMemsetAsync(p, 0x5A, 1 << 20, own), cudaSuccess);
  unsigned char back = 0;
  ASSERT_EQ(cudaMemcpyAsync(&back, static_cast<char*>(p) + 12345, 1, cudaMemcpyDeviceToHost, own), cudaSuccess);
  ASSERT_EQ(cudaFreeAsync(p, own), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(own), cudaSuccess);
  EXPECT_EQ(back, 0x5A);  // the free ran after the copy before it
  cudaPointerAttributes attr{};
  ASSERT_EQ(cudaPointerGetAttributes(&attr, p), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeUnregistered);  // freed
  EXPECT_EQ(cudaFreeAsync(flag, own), cudaErrorInvalidValue);  // not device memory
  cudaGetLastError();
  *flag = 1;
  EXPECT_EQ(cudaStreamSynchronize(held), cudaSuccess);
  cudaStreamDestroy(held);
  cudaStreamDestroy(own);
  cudaFreeHost(flag);
}

// A GPU's memory runs out: cudaMalloc and cudaMallocAsync past what is free fail with
// cudaErrorMemoryAllocation, which is not sticky, and cudaMemGetInfo and the device's properties
// say the capacity (CUDA_SIM_DEVICE_MEMORY). Filling the device whole runs where the capacity is
// small enough to touch (ctest's cuda_sim_small_device: 64 MiB).
TEST(CudaSim, DeviceMemoryRunsOut) {
  size_t freeBytes = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&freeBytes, &total), cudaSuccess);
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  EXPECT_EQ(prop.totalGlobalMem, total);
  ASSERT_LE(freeBytes, total);
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, freeBytes + 1), cudaErrorMemoryAllocation);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // not sticky
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  EXPECT_EQ(cudaMallocAsync(&p, freeBytes + 1, s), cudaErrorMemoryAllocation);
  cudaGetLastError();
  ASSERT_EQ(cudaMalloc(&p, 4096), cudaSuccess);
  size_t after = 0;
  ASSERT_EQ(cudaMemGetInfo(&after, &total), cudaSuccess);
  EXPECT_EQ(after, freeBytes - 4096);
  ASSERT_EQ(cudaFree(p), cudaSuccess);
  ASSERT_EQ(cudaMemGetInfo(&after, &total), cudaSuccess);
  EXPECT_EQ(after, freeBytes);
  if (total <= (size_t{1} << 30)) {
    void* all = nullptr;
    ASSERT_EQ(cudaMalloc(&all, freeBytes), cudaSuccess);
    ASSERT_EQ(cudaMemGetInfo(&after, &total), cudaSuccess);
    EXPECT_EQ(after, 0u);
    EXPECT_EQ(cudaMallocAsync(&p, 1, s), cudaErrorMemoryAllocation);
    cudaGetLastError();
    ASSERT_EQ(cudaFreeAsync(all, s), cudaSuccess);  // released when it runs on its stream
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&p, freeBytes), cudaSuccess);
    ASSERT_EQ(cudaFree(p), cudaSuccess);
  }
  cudaStreamDestroy(s);
}

// Lazy loading: a kernel's first use loads it and may wait for the device, so a first launch while
// a stream is held by an unwritten wait-value is the same deadlock; a kernel loaded beforehand
// (cudaFuncGetAttributes, as the library's preloadKernels does) launches without waiting.
cudaError_t launchNamed(const char* name, void (*kernel)(int*), cudaStream_t stream, int* out) {
  cuda_sim::LaunchSpec spec;
  spec.grid = dim3(1);
  spec.block = dim3(1);
  spec.stream = stream;
  spec.name = name;
  spec.kernel = reinterpret_cast<const void*>(kernel);
  return cuda_sim::launch(spec, [=] { kernel(out); });
}
void lazyKernel(int* out) { cuda_sim::store(out, 7); }
void preloadedKernel(int* out) { cuda_sim::store(out, 8); }

TEST(CudaSimDeathTest, LoadingAKernelWhileAStreamWaitsForAValueIsADeadlock) {
  useThreadsafeDeathTests();
  EXPECT_EXIT(
      {
        uint32_t* flag = nullptr;
        cudaHostAlloc(reinterpret_cast<void**>(&flag), sizeof(uint32_t), cudaHostAllocMapped);
        int* out = nullptr;
        cudaMalloc(&out, sizeof(int));
        *flag = 0;
        cudaStream_t held = nullptr;
        cudaStream_t other = nullptr;
        cudaStreamCreateWithFlags(&held, cudaStreamNonBlocking);
        cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking);
        cudaFuncAttributes attributes{};
        const bool preloaded = cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(preloadedKernel)) == cudaSuccess;
        cuStreamWaitValue32(held, reinterpret_cast<CUdeviceptr>(flag), 1, CU_STREAM_WAIT_VALUE_GEQ);
        const bool loadedRuns = launchNamed("preloadedKernel", preloadedKernel, other, out) == cudaSuccess && cudaStreamSynchronize(other) == cudaSuccess;
        const cudaError_t rc = launchNamed("lazyKernel", lazyKernel, other, out);
        *flag = 1;
        std::exit(preloaded && loadedRuns && rc == cudaErrorNotPermitted ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "loading kernel lazyKernel at its first launch.*would deadlock");
}

// CUDA_DEVICE_MAX_CONNECTIONS=N: stream k of the device feeds hardware queue k mod N, so a kernel
// enqueued on another stream of the same queue after an unwritten wait-value does not start until
// the value is written (the stall that makes Strata's device path synchronous under N = 1). On a
// stream of another queue, or without the setting, the same kernel runs while the stream is held.
// `spacers`: streams created between the held one and the kernel's. Exit code: 0 stalled, 1 ran.
int heldStreamStallsALaterKernel(int spacers) {
  uint32_t* flag = nullptr;
  cudaHostAlloc(reinterpret_cast<void**>(&flag), sizeof(uint32_t), cudaHostAllocMapped);
  int* out = nullptr;
  cudaMalloc(&out, sizeof(int));
  *flag = 0;
  cudaStream_t held = nullptr, other = nullptr;
  cudaStreamCreateWithFlags(&held, cudaStreamNonBlocking);
  for (int i = 0; i < spacers; ++i) {
    cudaStream_t spacer = nullptr;
    cudaStreamCreateWithFlags(&spacer, cudaStreamNonBlocking);
  }
  cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking);
  cudaEvent_t done = nullptr;
  cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  cudaFuncAttributes attributes{};
  cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(preloadedKernel));
  cuStreamWaitValue32(held, reinterpret_cast<CUdeviceptr>(flag), 1, CU_STREAM_WAIT_VALUE_GEQ);
  launchNamed("preloadedKernel", preloadedKernel, other, out);
  cudaEventRecord(done, other);
  bool ranWhileHeld = false;
  // Up to 2 s: a kernel free to run does so long before, even on loaded cores (the loop ends then).
  for (int i = 0; i < 2000 && !ranWhileHeld; ++i) {
    ranWhileHeld = cudaEventQuery(done) == cudaSuccess;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  *flag = 1;
  int value = 0;
  const bool ran = cudaStreamSynchronize(other) == cudaSuccess &&
                   cudaMemcpy(&value, out, sizeof value, cudaMemcpyDeviceToHost) == cudaSuccess && value == 8;
  return !ran ? 2 : ranWhileHeld ? 1 : 0;
}

TEST(CudaSimDeathTest, OneHardwareQueueStallsStreamsBehindAHeldOne) {
  useThreadsafeDeathTests();
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 1);
  EXPECT_EXIT(std::exit(heldStreamStallsALaterKernel(0)), ::testing::ExitedWithCode(0), "");
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "2", 1);  // streams 0 and 2 share a queue, 0 and 1 do not
  EXPECT_EXIT(std::exit(heldStreamStallsALaterKernel(0)), ::testing::ExitedWithCode(1), "");
  EXPECT_EXIT(std::exit(heldStreamStallsALaterKernel(1)), ::testing::ExitedWithCode(0), "");
  unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
  EXPECT_EXIT(std::exit(heldStreamStallsALaterKernel(1)), ::testing::ExitedWithCode(1), "");
}

}  // namespace
