// strata-perf's device side: buffers on the GPU, the stream the calls are ordered on, the
// device-to-device copy bandwidth (the yardstick of the GPU benchmarks), and NCCL as a baseline.
// Every function exists in every build; without CUDA (or NCCL) they report why they cannot run.
#pragma once

#include <strata/strata.h>

#include <cstddef>
#include <string>

#include "perf/collective_descriptors.h"

namespace strata::perf {

// Picks local rank's device (round robin over the node's GPUs). "" on success, else why not.
std::string selectDevice(int localRank);
std::string deviceName();
void* deviceAlloc(size_t bytes);
void deviceFree(void* p);
void copyToDevice(void* dst, const void* src, size_t bytes);
void copyToHost(void* dst, const void* src, size_t bytes);
cudaStream_t perfStream();
void syncStream();
// Device-to-device cudaMemcpy of `bytes`: bytes moved per second (read + write), GB/s.
double deviceCopyBandwidth(size_t bytes);

// What the CUDA simulator counted for this process since the last reset, per memory class (a
// build for a real GPU has no counters: false).
struct DeviceCounts {
  double linkBytes = 0;   // in peer GPUs' memory (kernels) and copies between GPUs
  double localBytes = 0;  // in this GPU's memory (kernels; device-to-device copies read and write)
  double hostBytes = 0;   // host memory touched by kernels, and copies between host and device
  double launches = 0;
};
bool deviceCounts(DeviceCounts* out);
void resetDeviceCounts();

// NCCL with one communicator over MPI_COMM_WORLD. ncclStart returns "" or why NCCL cannot run
// (not built in, or the installed NCCL refuses the configuration, e.g. several ranks on one GPU).
std::string ncclStart();
void ncclStop();
bool ncclSupports(const CollectiveDescriptor& d, std::string* why);
// Runs one collective on `stream` and waits for it; 0 on success.
int runNccl(const CollectiveDescriptor& d, const CallShape& s, const CallArgs& a, const void* send, void* recv);
std::string ncclVersionText();

}  // namespace strata::perf
