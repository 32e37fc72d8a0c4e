/* The CUDA simulator's own interface, for tests and benchmarks: what it counted, and the last
 * diagnosis it made. Everything else it offers is CUDA's runtime and driver API, from CUDA's own
 * headers. C, so C applications can read the counters too. */
#ifndef CUDA_SIM_CUDA_SIM_H
#define CUDA_SIM_CUDA_SIM_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes and operations, per stream or per process. Kernel bytes are those the kernels' checked
 * global-memory accesses read and wrote, in all; of them, those in another GPU's memory (a peer's,
 * through CUDA IPC: what crosses NVLink) and those in pinned host memory (what crosses PCIe).
 * Copy bytes are by direction (cudaMemcpy*, cudaMemset); device-to-device copies between two GPUs
 * are also counted as peer-to-peer. */
typedef struct {
  unsigned long long kernelLaunches;
  unsigned long long kernelBytesRead;
  unsigned long long kernelBytesWritten;
  unsigned long long copies;
  unsigned long long bytesHostToDevice;
  unsigned long long bytesDeviceToHost;
  unsigned long long bytesDeviceToDevice;
  unsigned long long bytesHostToHost;
  unsigned long long kernelBytesReadPeer;
  unsigned long long kernelBytesWrittenPeer;
  unsigned long long kernelBytesReadHost;
  unsigned long long kernelBytesWrittenHost;
  unsigned long long bytesPeerToPeer;
} cudaSimCounters;

/* 1 in a process linked against the simulator (an application can tell it from a real GPU). */
int cudaSimIsSimulator(void);
/* The counters of `stream` (0: the legacy default stream of the current device). */
cudaError_t cudaSimGetStreamCounters(cudaStream_t stream, cudaSimCounters* out);
/* The counters of every stream of this process. */
cudaError_t cudaSimGetProcessCounters(cudaSimCounters* out);
void cudaSimResetCounters(void);
/* What the simulator last diagnosed (an illegal access, a deadlock, a broken rule), or "". */
const char* cudaSimLastDiagnosis(void);

#ifdef __cplusplus
}
#endif

#endif /* CUDA_SIM_CUDA_SIM_H */
