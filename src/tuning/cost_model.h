// Cost parameters of the machine's levels, from defaults or a calibration file (STRATA_TOPO_FILE,
// written by `strata-perf --calibrate`).
#pragma once

#include <string>

#include "kernels/common/status.h"
#include "kernels/plan/cost.h"

namespace strata {

struct CostParams : LevelCosts {
  std::string source = "defaults";
};

CostParams defaultCostParams();
// The levels as device buffers see them, from the host's: the node is one GPU's memory shared
// over CUDA IPC (rounds synchronised through the host), the lanes and the flat communicator are
// MPI plus the staging copies over PCIe. Defaults from an H100's published figures (HBM3 about
// 3 TB/s, PCIe 5 x16 about 50 GB/s each way) and the host handshakes, not yet calibrated.
LevelCosts deviceCostParams(const LevelCosts& host);
// The last-level cache of the first CPU in bytes (0 when unknown): the cost model's cache term.
double lastLevelCacheBytes();
// Reads "key value" lines: flat.alpha, flat.beta, flat.gamma, node.*, lane.* (seconds, s/byte).
Status loadCostParams(const std::string& path, CostParams* out);
Status saveCostParams(const std::string& path, const CostParams& params);

}  // namespace strata
