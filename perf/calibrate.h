// strata-perf --calibrate: measures alpha, beta and gamma of the node, the lanes and the flat
// communicator, fits them to the tuner's cost formulas and writes the STRATA_TOPO_FILE.
#pragma once

#include <string>

namespace strata::perf {

// Which parameters of the cost model a measured algorithm's formula uses.
enum class Level { kFlat, kNode, kLane };

// Collective over MPI_COMM_WORLD. Returns 0 when the file was written.
int calibrate(const std::string& path, int iters, int warmup);

}  // namespace strata::perf
