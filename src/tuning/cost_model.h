// Cost parameters of the machine's levels, from defaults or a calibration file (STRATA_TOPO_FILE,
// written by `strata-perf --calibrate`).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/status.h"
#include "kernels/plan/collective.h"
#include "kernels/plan/cost.h"

namespace strata {

// The MPI library's own collectives, as calibration measured them (the tuner's "native"
// candidate, src/core/native_runner.h): per collective, the median time at each measured size, on
// `ranks` ranks. A prediction interpolates linearly between the measured sizes (each stretch is
// the alpha + beta m of whatever protocol the library used there), holds the smallest size's time
// below it and extends the last stretch above it.
struct NativeTimes {
  int ranks = 0;  // 0: never measured
  std::map<Collective, std::vector<std::pair<double, double>>> points;  // (bytes, seconds), by bytes
  // The predicted seconds of `c` moving `bytes` (callBytes of the call) on `p` ranks, or -1 when the
  // calibration did not measure it on p ranks.
  double predict(Collective c, double bytes, int p) const;
};

struct CostParams : LevelCosts {
  std::string source = "defaults";
  NativeTimes native;
};

CostParams defaultCostParams();
// The levels as device buffers see them, from the host's: the node is one GPU's memory shared
// over CUDA IPC (rounds synchronised through the host), the lanes and the flat communicator are
// MPI plus the staging copies over PCIe. Defaults from an H100's published figures (HBM3 about
// 3 TB/s, PCIe 5 x16 about 50 GB/s each way) and the host handshakes, not yet calibrated.
LevelCosts deviceCostParams(const LevelCosts& host);
// Reads "key value" lines: flat.alpha, flat.beta, flat.gamma, flat.beta@W, flat.gamma@W,
// flat.alpha@W (at every point of the curve or at none),
// flat.alone_share, flat.alone_alpha, flat.alone_beta@W, flat.alone_gamma@W, flat.alone_alpha@W
// (the same rule), flat.alone_cores_shared (0 or 1; 1 where absent), node.*, lane.*
// (seconds, s/byte, shares and fractions; kernels/plan/cost.h),
// native.ranks and native.COLLECTIVE.BYTES (seconds). A level the file names keeps the defaults'
// alpha, beta and gamma where the file leaves them out, but not their curve.
Status loadCostParams(const std::string& path, CostParams* out);
Status saveCostParams(const std::string& path, const CostParams& params);

}  // namespace strata
