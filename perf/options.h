// strata-perf's command line: nccl-tests' flags (-b -e -f -i -n -w -c -d -o -r -z) and Strata's
// own (--op, --impl, --algo, --mem, --csv, --plot, --phases, --calibrate, --algorithms).
#pragma once

#include <strata/strata.h>

#include <cstddef>
#include <string>
#include <vector>

namespace strata::perf {

struct Options {
  size_t minBytes = 8;
  size_t maxBytes = size_t{64} << 20;
  size_t stepBytes = 0;
  double stepFactor = 2;
  int iters = 20;
  int warmup = 5;
  bool sequential = false;  // variants one after another, not interleaved iteration by iteration
  int passes = 1;           // the whole sweep this many times; each row the median of its passes
  int check = 1;
  strataDataType_t type = strataFloat32;
  strataRedOp_t op = strataSum;
  int root = 0;
  std::vector<std::string> ops = {"allreduce"};
  std::vector<std::string> impls = {"strata"};
  std::string algo = "auto";
  std::string mem = "host";
  std::string csv;
  std::string plot;
  int shift = 1;
  bool phases = false;
  std::string calibrateFile;  // --calibrate: measure and write the cost parameters first
  bool listAlgorithms = false;  // --algorithms: print every algorithm and its cost formula
};

// This process in MPI_COMM_WORLD (set once, in main).
extern int gRank, gSize;

// The MPI library's collectives as a baseline: through their ordinary names, or the profiling ones.
bool isMpiImpl(const std::string& impl);
// The command line; a bad one prints the usage and exits.
Options parseOptions(int argc, char** argv);
// The sizes of the sweep, -b to -e by -f (or -i).
std::vector<size_t> sweep(const Options& o);

}  // namespace strata::perf
