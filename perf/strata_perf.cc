// strata-perf: collective benchmarks in nccl-tests' language (flags, columns, bandwidth formulas,
// correctness check), with the MPI library's own collectives (and NCCL, where built) measured in
// the same run as baselines.
//
// Time is the slowest rank's, each iteration after a barrier, median over the timed iterations.
// Every size is checked against the reference oracle before it is timed; the exit status is
// non-zero if any value was wrong.
#include <mpi.h>
#include <strata/strata.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "perf/calibrate.h"
#include "perf/device_support.h"
#include "perf/option_values.h"
#include "perf/options.h"
#include "perf/report.h"
#include "perf/runner.h"
#include "src/tuning/tuner.h"

namespace strata::perf {
namespace {

double gCopyBandwidth = 0;  // --mem device: the GPU's device-to-device copy bandwidth, GB/s moved

int mainImpl(int argc, char** argv) {
  const Options o = parseOptions(argc, argv);
  if (o.listAlgorithms) {
    listAlgorithms();
    return 0;
  }
  // An algorithm named for several collectives runs where it exists (--op allreduce,reducescatter
  // --algo ring,recursive_halving); one that none of them has is a mistake, said before anything runs.
  auto knows = [](Collective c, const std::string& algo) {
    const std::vector<std::string> names = algorithmNames(c);
    return algo == "auto" || algo == "all" || algo == kNativeAlgorithm ||
           std::find(names.begin(), names.end(), algo) != names.end();
  };
  for (const std::string& algo : splitList(o.algo)) {
    const bool anywhere = std::any_of(o.ops.begin(), o.ops.end(),
                                      [&](const std::string& op) { return knows(findDescriptor(op)->coll, algo); });
    if (!anywhere) {
      if (gRank == 0) {
        std::string known;
        for (const std::string& op : o.ops) {
          known += "; " + op + ":";
          for (const std::string& name : algorithmNames(findDescriptor(op)->coll)) known += " " + name;
        }
        std::fprintf(stderr, "strata-perf: --algo %s: no such algorithm of the collectives asked for (auto, all, %s%s)\n",
                     algo.c_str(), kNativeAlgorithm, known.c_str());
      }
      return 2;
    }
  }
  {
    strataComm_t probe = nullptr;
    if (strataCommInitMpi(&probe, MPI_COMM_WORLD, nullptr) != strataSuccess) {
      if (gRank == 0) std::fprintf(stderr, "strata-perf: %s\n", strataGetLastError(nullptr));
      return 1;
    }
    printMachine(o, probe);
    strataCommDestroy(probe);
  }
  if (!o.calibrateFile.empty()) {
    if (calibrate(o.calibrateFile, std::max(o.iters, 10), std::max(o.warmup, 2)) != 0) return 1;
    // Communicators created from here on (the benchmark's) read the new parameters.
    setenv("STRATA_TOPO_FILE", o.calibrateFile.c_str(), 1);
    if (o.maxBytes == 0) return 0;
  }
  Runner runner{o, "", {}, 0};
  if (o.mem == "device") {
    MPI_Comm local = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    int localRank = 0;
    MPI_Comm_rank(local, &localRank);
    MPI_Comm_free(&local);
    const std::string why = selectDevice(localRank);
    int ok = why.empty() ? 1 : 0, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
      if (gRank == 0) std::fprintf(stderr, "strata-perf: --mem device: %s\n", why.empty() ? "a rank has no device" : why.c_str());
      return 2;
    }
    gCopyBandwidth = deviceCopyBandwidth(std::min<size_t>(std::max<size_t>(o.maxBytes, 1 << 20), size_t{256} << 20));
    if (gRank == 0) {
      std::printf("# device: %s; device-to-device cudaMemcpy moves %.1f GB/s (read + write)\n", deviceName().c_str(),
                  gCopyBandwidth);
    }
    if (std::find(o.impls.begin(), o.impls.end(), "nccl") != o.impls.end()) {
      runner.ncclWhy = ncclStart();
      if (gRank == 0) std::printf("# %s: %s\n", ncclVersionText().c_str(), runner.ncclWhy.empty() ? "running" : runner.ncclWhy.c_str());
    }
  }
  for (int pass = 1; pass <= o.passes; ++pass) {
    if (o.passes > 1 && gRank == 0) std::printf("#\n# pass %d of %d\n", pass, o.passes);
    for (const std::string& opName : o.ops) {
      const CollectiveDescriptor& d = *findDescriptor(opName);
      std::vector<std::pair<std::string, std::string>> variants;
      for (const std::string& impl : o.impls) {
        std::vector<std::string> algos;  // as listed, "all" expanded, each once
        auto add = [&](const std::string& name) {
          if (std::find(algos.begin(), algos.end(), name) == algos.end()) algos.push_back(name);
        };
        for (const std::string& algo : splitList(o.algo)) {
          if (algo == "all") {
            for (const std::string& name : algorithmNames(d.coll)) add(name);
          } else if (knows(d.coll, algo)) {
            add(algo);
          } else if (gRank == 0 && impl == o.impls.front() && pass == 1) {
            std::printf("# %s has no algorithm '%s': skipped for it\n", d.name, algo.c_str());
          }
        }
        if (isMpiImpl(impl)) algos = {"-"};
        for (const std::string& algo : algos) variants.push_back({impl, algo});
      }
      runner.run(variants, d);
    }
  }
  runner.rows = medianOfPasses(runner.rows, o.passes);
  ncclStop();
  {
    strataComm_t any = nullptr;
    if (strataCommInitMpi(&any, MPI_COMM_WORLD, nullptr) == strataSuccess) {
      printDeviceModel(o, runner.rows, any);
      strataCommDestroy(any);
    }
  }
  writeCsv(o, runner.rows);
  writePlot(o, runner.rows);
  printComparison(o, runner.rows);
  printModelErrors(o, runner.rows);
  if (gRank == 0 && o.mem == "device" && gCopyBandwidth > 0) {
    // Ranks sharing one GPU: an allreduce's kernels must at least read p inputs and write p
    // outputs of m bytes: 2*p*m bytes through the one GPU's memory.
    std::printf("#\n# device bound: allreduce lower bound 2*p*m / copy bandwidth (%.1f GB/s), p = %d\n", gCopyBandwidth, gSize);
    for (const Row& r : runner.rows) {
      if (r.impl != o.impls[0] || r.op != "allreduce" || !r.supported) continue;
      const double boundUs = 2.0 * gSize * static_cast<double>(r.bytes) / (gCopyBandwidth * 1e9) * 1e6;
      std::printf("#  bound %12zu B  %10.2f us  measured %10.2f us  (%.0f%% of the bound's speed)\n", r.bytes, boundUs,
                  r.time[0], 100.0 * boundUs / r.time[0]);
    }
  }
  if (gRank == 0) {
    double sum = 0;
    int n = 0;
    for (const Row& r : runner.rows) {
      if (r.impl != o.impls[0] || !r.supported) continue;
      sum += r.busbw[0] + r.busbw[1];
      n += 2;
    }
    std::printf("# Out of bounds values : %lld %s\n", runner.totalWrong, runner.totalWrong == 0 ? "OK" : "FAILED");
    std::printf("# Avg bus bandwidth    : %g \n#\n", n ? sum / n : 0.0);
    if (!o.csv.empty()) std::printf("# CSV written to %s\n", o.csv.c_str());
  }
  return runner.totalWrong == 0 ? 0 : 1;
}

}  // namespace
}  // namespace strata::perf

int main(int argc, char** argv) {
  // Device buffers run through the library's progress thread, which needs MPI_THREAD_MULTIPLE.
  bool device = false;
  for (int i = 1; i + 1 < argc; ++i) device |= std::string(argv[i]) == "--mem" && std::string(argv[i + 1]) == "device";
  int provided = 0;
  if (device) MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  else MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &strata::perf::gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &strata::perf::gSize);
  const int rc = strata::perf::mainImpl(argc, argv);
  MPI_Finalize();
  return rc;
}
