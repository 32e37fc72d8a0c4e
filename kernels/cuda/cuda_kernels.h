// Host entry points of the device kernels (kernels/cuda/*.cu). Plain C++: callers need only
// cuda_runtime.h's stream type. Every launcher enqueues on `stream` and returns at once; a launch
// error comes back as strataUnhandledCudaError naming the kernel.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/common/datatype.h"
#include "kernels/common/status.h"

namespace strata::cuda {

// dst0[i] (and dst1[i] unless null: reduce-copy) = srcs[0][i] op ... op srcs[n-1][i] for
// i < count, 1 <= n <= 16; then / divisor when divisor > 0 (strataAvg fused into the last step).
// Any destination may be identical to an input; 16-bit floats accumulate in fp32 and round once.
// 16-byte loads and stores for every alignment of the inputs relative to dst0 (scalars only for
// the heads and tails); a dst1 at another offset from a 16-byte boundary than dst0 is written by a
// second, vectorised copy kernel.
Status launchReduce(void* dst0, void* dst1, const void* const* srcs, int n, size_t count, DataType type, RedOp op,
                    int divisor, cudaStream_t stream);

// dst = src (bytes; any alignment). The vectorised kernel: memcpy's twin for peer and IPC reads.
Status launchCopy(void* dst, const void* src, size_t bytes, cudaStream_t stream);

// data[i] /= divisor (strataAvg's final step): integers truncate, 16-bit types divide in fp32. The
// reduce kernel with one input and the divisor, so vectorised alike.
Status launchDivide(void* data, size_t count, DataType type, int divisor, cudaStream_t stream);

// Counts the elements of `actual` that differ from `expected` (floating types: by more than
// tolerance * max(1, |expected|); NaN equals NaN), adding the count to *mismatches (device
// memory). Block reductions (warp shuffles, then shared memory) sum each block's count.
Status launchCountMismatches(const void* actual, const void* expected, size_t count, DataType type, double tolerance,
                             unsigned long long* mismatches, cudaStream_t stream);

// Loads every kernel of the library on the current device: each reduce and peer kernel of the
// type x operator table, the check and the flag-wait kernels. Under lazy loading (CUDA's default
// since 12.2) a kernel is loaded at its first use, which may wait for the device to be idle (CUDA
// Programming Guide, "Lazy Loading"): a progress thread that launches a kernel for the first time
// while the caller's stream waits for that thread's ticket waits for itself. The device path calls
// this before it holds any stream.
Status preloadKernels();

// Holds `stream` until the 32-bit counter at `flag` (host memory mapped into the device, written by
// the host) reaches `value` (compared as a signed difference, so it wraps), or until
// `timeoutSeconds` pass: then it sets *timedOut (mapped too) and traps, so the stream never runs
// on as if the data were complete (the context reports the error). One thread that sleeps between
// polls; used where the driver's stream wait-value operation is unavailable.
Status launchWaitFlag(const uint32_t* flag, uint32_t value, double timeoutSeconds, uint32_t* timedOut,
                      cudaStream_t stream);

// The grid for `work` units of `threads` threads each: as many blocks as the device keeps resident
// for this compiled kernel (cudaOccupancyMaxActiveBlocksPerMultiprocessor: its registers and
// shared memory decide, times the multiprocessors), no more than the work needs. Persistent blocks
// in a grid stride. Cached per kernel and device.
unsigned gridFor(const void* kernel, size_t work, unsigned threads);
// The launch geometry of the kernels: blocks of kThreads, at least kMinBlocksPerSm of them resident
// per multiprocessor (__launch_bounds__ caps the registers at 65536 / (512 x 2) = 64 per thread;
// tests/compiler checks the compiled kernels meet it without spilling).
constexpr unsigned kThreads = 512;
constexpr unsigned kMinBlocksPerSm = 2;

}  // namespace strata::cuda
