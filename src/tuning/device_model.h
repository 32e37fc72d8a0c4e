// The device node's cost model: what a GPU node's resources cost (HBM, NVLink per direction,
// PCIe per direction, a kernel launch, a cross-GPU flag), the traffic each peer algorithm puts on
// them per rank, the lower bound of that traffic, and the predicted time. It picks between the
// one-shot and two-shot allreduce (kernels/cuda/peer_collectives.h) and prices, from the bytes the
// CUDA simulator counts, what a call would take on a real node (`strata-perf --mem device`).
//
// Parameters from STRATA_DEVICE_PARAMS ("key value" lines, src/tuning/h100_sxm5_node.params is
// the built-in set written out), else an 8-GPU H100 SXM5 node (HGX, NVSwitch):
//   hbm_bytes_per_s     3.35e12  H100 SXM5 datasheet (HBM3)
//   link_bytes_per_s    450e9    NVLink 4: 900 GB/s per GPU, both directions together
//   link_efficiency     0.82     what NCCL's ring reaches of the line rate: ~370 of 450 GB/s bus
//                                bandwidth (NVIDIA/nccl-tests#212, NVIDIA/nccl#1455)
//   pcie_bytes_per_s    50e9     PCIe 5 x16 (64 GB/s raw per direction), as achieved
//   launch_s            4e-6     a kernel launch on a stream, issue to start
//   flag_s              1.5e-6   a flag written to a peer GPU and seen by its poller
// and, for comparison only, NCCL's published peak bus bandwidths on that node: ring allreduce
// about 370 GB/s, NVLink SHARP (NVLS) allreduce about 480 GB/s at 8 GPUs (same sources).
// The launch and flag latencies are estimates no measurement here can check (no GPU).
#pragma once

#include <string>

#include "kernels/common/status.h"
#include "kernels/plan/collective.h"
#include "kernels/plan/peer_algorithm.h"

namespace strata {

struct DeviceNodeParams {
  std::string source = "built-in (H100 SXM5 x8, NVSwitch)";
  double hbmBytesPerSecond = 3.35e12;
  double linkBytesPerSecond = 450e9;
  double linkEfficiency = 0.82;
  double pcieBytesPerSecond = 50e9;
  double launchSeconds = 4e-6;
  double flagSeconds = 1.5e-6;
  double ncclRingBusBytesPerSecond = 370e9;
  double ncclNvlsBusBytesPerSecond = 480e9;
};

// The built-in parameters, or those of `path` (every key optional; an unknown key is an error).
Status loadDeviceParams(const std::string& path, DeviceNodeParams* out);

// One call's work on one rank: bytes its kernels read or write in peer GPUs' memory (links), in
// its own GPU's memory (HBM), in host memory or across PCIe copies; kernel launches; barriers
// (flag round trips, one after another).
struct DeviceTraffic {
  double linkBytes = 0, localBytes = 0, hostBytes = 0;
  double launches = 0, barriers = 0;
};

// Launches and barriers one after another, the transfers overlapping: the busiest resource.
double predictSeconds(const DeviceTraffic& t, const DeviceNodeParams& p);

// The bytes each rank must receive from the others: nccl-tests' bus bytes (the collective table's
// bus factor times m, kernels/plan/collective.h): allreduce 2(n-1)/n m, reduce-scatter and
// allgather (n-1)/n m (m: the whole input, or output), broadcast m.
double linkLowerBound(Collective c, int ranks, double bytes);

// The traffic of a peer algorithm moving `bytes` (allreduce and broadcast: the message;
// reduce-scatter: the whole input; allgather: the whole output) on `ranks`, in `rounds` rounds.
DeviceTraffic peerTraffic(PeerAlgorithm a, int ranks, double bytes, double rounds);

// The cheaper allreduce of the two for `bytes` on `ranks` whose peer halves hold `halfBytes`.
PeerAlgorithm choosePeerAllReduce(int ranks, double bytes, double halfBytes, const DeviceNodeParams& p);

}  // namespace strata
