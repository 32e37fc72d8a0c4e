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

#include "kernels/common/datatype.h"
#include "perf/calibrate.h"
#include "perf/device_support.h"
#include "src/core/device_path.h"
#include "perf/collective_descriptors.h"
#include "perf/png_plot.h"
#include "perf/reference.h"
#include "src/core/collective_runner.h"
#include "hierarchy/composition.h"
#include "inter_node/algorithms/algorithm.h"
#include "src/tuning/tuner.h"

namespace strata::perf {
namespace {

struct Options {
  size_t minBytes = 8;
  size_t maxBytes = size_t{64} << 20;
  size_t stepBytes = 0;
  double stepFactor = 2;
  int iters = 20;
  int warmup = 5;
  int check = 1;
  strataDataType_t type = strataFloat32;
  strataRedOp_t op = strataSum;
  int root = 0;
  int blocking = 0;
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

int gRank = 0, gSize = 1;
// The MPI library's collectives as a baseline: through their ordinary names, or the profiling ones.
bool isMpiImpl(const std::string& impl) { return impl == "mpi" || impl == "pmpi"; }
std::string gNcclWhy;      // why NCCL cannot run here ("" when it can)
double gCopyBandwidth = 0;  // --mem device: the GPU's device-to-device copy bandwidth, GB/s moved

[[noreturn]] void usageAndExit(int code) {
  if (gRank == 0) {
    std::printf(
        "usage: strata-perf [options]\n"
        "  -b, --minbytes N     smallest size (default 8; K, M, G suffixes)\n"
        "  -e, --maxbytes N     largest size (default 64M)\n"
        "  -i, --stepbytes N    add N between sizes (default: multiply by -f)\n"
        "  -f, --stepfactor F   multiply the size by F between sizes (default 2)\n"
        "  -n, --iters N        timed iterations per size (default 20)\n"
        "  -w, --warmup_iters N untimed iterations first (default 5)\n"
        "  -c, --check 0|1      check every size against the reference (default 1)\n"
        "  -d, --datatype T     int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 (default float)\n"
        "  -o, --op OP          sum prod max min avg (default sum)\n"
        "  -r, --root R         root of rooted collectives (default 0)\n"
        "  -z, --blocking 0|1   wait for completion after each call (host calls always complete)\n"
        "  --op NAME[,NAME]     allreduce broadcast reduce allgather reducescatter gather scatter alltoall\n"
        "                       scan exscan shift barrier, or all\n"
        "  --impl I[,I]         strata, mpi (MPI_Allreduce etc.: the MPI library's own collective, or the\n"
        "                       MPI face's under LD_PRELOAD=libstrata_mpi.so), pmpi (PMPI_Allreduce etc.:\n"
        "                       always the MPI library's), nccl (--mem device); the first is the subject\n"
        "  --algo A[,A]|all     algorithm(s) of strata's collective (auto: the tuner's choice); all: every one\n"
        "  --mem host|device    memory space of the buffers (device: calls ordered on a CUDA stream,\n"
        "                       timed to the stream's completion; mpi then stages whole buffers\n"
        "                       through the host unless MPI is CUDA-aware)\n"
        "  --csv FILE           also write every row as CSV\n"
        "  --plot FILE.png      time against size, one line per implementation and algorithm\n"
        "  --shift S            strataShift's shift (default 1)\n"
        "  --phases             per-phase medians of strata's plans (node steps, lane steps, ...)\n"
        "  --algorithms         list every algorithm (flat and hierarchical) with its cost formula\n"
        "  --calibrate FILE     measure alpha/beta/gamma of the node, the lanes and the flat level, write\n"
        "                       FILE (read by the library through STRATA_TOPO_FILE), then run the\n"
        "                       benchmark with it; -b/-e of 0 0 skip the benchmark\n"
        "Environment: STRATA_RANKS_PER_NODE (virtual nodes), STRATA_DEBUG, STRATA_TOPO_FILE.\n");
  }
  MPI_Finalize();
  std::exit(code);
}

size_t parseBytes(const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  double mult = 1;
  if (*end == 'K' || *end == 'k') mult = 1024.0;
  if (*end == 'M' || *end == 'm') mult = 1024.0 * 1024;
  if (*end == 'G' || *end == 'g') mult = 1024.0 * 1024 * 1024;
  if (end == text || v < 0) {
    if (gRank == 0) std::fprintf(stderr, "strata-perf: bad size '%s'\n", text);
    usageAndExit(2);
  }
  return static_cast<size_t>(v * mult);
}

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t pos = s.find(',', start);
    out.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return out;
}

Options parseOptions(int argc, char** argv) {
  Options o;
  bool opIsCollective = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        if (gRank == 0) std::fprintf(stderr, "strata-perf: %s needs a value\n", a.c_str());
        usageAndExit(2);
      }
      return argv[++i];
    };
    if (a == "-h" || a == "--help") usageAndExit(0);
    else if (a == "-b" || a == "--minbytes") o.minBytes = parseBytes(value());
    else if (a == "-e" || a == "--maxbytes") o.maxBytes = parseBytes(value());
    else if (a == "-i" || a == "--stepbytes") o.stepBytes = parseBytes(value());
    else if (a == "-f" || a == "--stepfactor") o.stepFactor = std::atof(value());
    else if (a == "-n" || a == "--iters") o.iters = std::atoi(value());
    else if (a == "-w" || a == "--warmup_iters") o.warmup = std::atoi(value());
    else if (a == "-c" || a == "--check") o.check = std::atoi(value());
    else if (a == "-r" || a == "--root") o.root = std::atoi(value());
    else if (a == "-z" || a == "--blocking") o.blocking = std::atoi(value());
    else if (a == "-d" || a == "--datatype") {
      if (!parseDataType(value(), &o.type)) usageAndExit(2);
    } else if (a == "-o" || a == "--op") {
      // nccl-tests' -o is the reduction op; --op names the collective(s) when given a collective name.
      const char* v = value();
      RedOp r;
      if (a == "-o" || (parseRedOp(v, &r) && !findDescriptor(v))) {
        if (!parseRedOp(v, &o.op)) usageAndExit(2);
      } else {
        opIsCollective = true;
        o.ops.clear();
        for (const std::string& name : splitList(v)) {
          if (name == "all") {
            for (const CollectiveDescriptor& d : collectiveDescriptors()) o.ops.push_back(d.name);
          } else if (findDescriptor(name)) {
            o.ops.push_back(findDescriptor(name)->name);
          } else {
            if (gRank == 0) std::fprintf(stderr, "strata-perf: unknown collective '%s'\n", name.c_str());
            usageAndExit(2);
          }
        }
      }
    } else if (a == "--impl") o.impls = splitList(value());
    else if (a == "--algo") o.algo = value();
    else if (a == "--mem") o.mem = value();
    else if (a == "--csv") o.csv = value();
    else if (a == "--plot") o.plot = value();
    else if (a == "--shift") o.shift = std::atoi(value());
    else if (a == "--phases") o.phases = true;
    else if (a == "--calibrate") o.calibrateFile = value();
    else if (a == "--algorithms") o.listAlgorithms = true;
    else {
      if (gRank == 0) std::fprintf(stderr, "strata-perf: unknown option '%s'\n", a.c_str());
      usageAndExit(2);
    }
  }
  (void)opIsCollective;
  for (const std::string& impl : o.impls) {
    if (impl != "strata" && !isMpiImpl(impl) && impl != "nccl") {
      if (gRank == 0) std::fprintf(stderr, "strata-perf: --impl %s is not available in this build\n", impl.c_str());
      usageAndExit(2);
    }
  }
  if (o.mem != "host" && o.mem != "device") {
    if (gRank == 0) std::fprintf(stderr, "strata-perf: --mem %s: expected host or device\n", o.mem.c_str());
    usageAndExit(2);
  }
  for (const std::string& impl : o.impls) {
    if (impl == "nccl" && o.mem != "device") {
      if (gRank == 0) std::fprintf(stderr, "strata-perf: --impl nccl needs --mem device\n");
      usageAndExit(2);
    }
  }
  if (o.iters < 1 || o.warmup < 0 || o.minBytes > o.maxBytes || (o.stepBytes == 0 && o.stepFactor <= 1)) usageAndExit(2);
  return o;
}

std::vector<size_t> sweep(const Options& o) {
  std::vector<size_t> sizes;
  for (size_t s = o.minBytes; s <= o.maxBytes;) {
    sizes.push_back(s);
    const size_t next = o.stepBytes ? s + o.stepBytes : static_cast<size_t>(std::max<double>(s + 1, s * o.stepFactor));
    if (next <= s) break;
    s = next;
  }
  return sizes;
}

struct Row {
  std::string impl, algo, op;
  size_t bytes = 0, count = 0;
  std::string type, redop;
  int root = -1;
  double time[2] = {0, 0}, algbw[2] = {0, 0}, busbw[2] = {0, 0};
  long long wrong[2] = {0, 0};
  double modelUs = -1;
  bool supported = true;
  std::string why;
  std::vector<std::pair<std::string, double>> phases;  // out of place, median us of the slowest rank
};

// Median over the iterations of each phase's duration on the slowest rank. Phases are matched by
// label; ranks that lack a phase (it runs elsewhere) count as 0.
std::vector<std::pair<std::string, double>> phaseMedians(const std::vector<PhaseTimes>& runs) {
  std::vector<std::string> labels;
  for (const PhaseTimes& r : runs) {
    for (const auto& p : r.phases) {
      if (std::find(labels.begin(), labels.end(), p.label) == labels.end()) labels.push_back(p.label);
    }
  }
  // Every rank must agree on the label list: take rank 0's, padded with what others add.
  std::string joined;
  for (const std::string& l : labels) joined += l + "\n";
  int len = static_cast<int>(joined.size()), maxLen = 0;
  MPI_Allreduce(&len, &maxLen, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  std::vector<char> mine(static_cast<size_t>(maxLen) + 1, 0), all(static_cast<size_t>(maxLen + 1) * static_cast<size_t>(gSize));
  std::memcpy(mine.data(), joined.data(), joined.size());
  MPI_Allgather(mine.data(), maxLen + 1, MPI_CHAR, all.data(), maxLen + 1, MPI_CHAR, MPI_COMM_WORLD);
  labels.clear();
  for (int r = 0; r < gSize; ++r) {
    std::string text(&all[static_cast<size_t>(r) * static_cast<size_t>(maxLen + 1)]);
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t nl = text.find('\n', pos);
      const std::string l = text.substr(pos, nl - pos);
      if (std::find(labels.begin(), labels.end(), l) == labels.end()) labels.push_back(l);
      pos = nl + 1;
    }
  }
  std::vector<std::pair<std::string, double>> out;
  for (const std::string& l : labels) {
    std::vector<double> d(runs.size(), 0.0), slowest(runs.size(), 0.0);
    for (size_t i = 0; i < runs.size(); ++i) {
      for (const auto& p : runs[i].phases) {
        if (p.label == l) d[i] = p.end - p.start;
      }
    }
    MPI_Allreduce(d.data(), slowest.data(), static_cast<int>(d.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    std::sort(slowest.begin(), slowest.end());
    out.push_back({l, slowest.empty() ? 0.0 : slowest[slowest.size() / 2] * 1e6});
  }
  return out;
}

double medianOfSlowest(std::vector<double>& local) {
  std::vector<double> slowest(local.size());
  MPI_Allreduce(local.data(), slowest.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  std::sort(slowest.begin(), slowest.end());
  const size_t n = slowest.size();
  return n % 2 ? slowest[n / 2] : 0.5 * (slowest[n / 2 - 1] + slowest[n / 2]);
}

void printMachine(const Options& o, strataComm_t anyComm) {
  char host[256] = "?";
  gethostname(host, sizeof(host) - 1);
  std::vector<char> hosts(static_cast<size_t>(gSize) * 256);
  MPI_Gather(host, 256, MPI_CHAR, hosts.data(), 256, MPI_CHAR, 0, MPI_COMM_WORLD);
  int pid = static_cast<int>(getpid());
  std::vector<int> pids(static_cast<size_t>(gSize));
  MPI_Gather(&pid, 1, MPI_INT, pids.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (gRank != 0) return;
  std::string cpu = "?";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  char mpiVersion[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  MPI_Get_library_version(mpiVersion, &len);
  std::string mpiFirst = mpiVersion;
  mpiFirst = mpiFirst.substr(0, mpiFirst.find_first_of("\n,"));
  const char* shape = std::getenv("STRATA_RANKS_PER_NODE");
  std::printf("# strata-perf %d.%d.%d: minBytes %zu maxBytes %zu step: %s warmup iters: %d iters: %d validation: %d\n",
              STRATA_MAJOR, STRATA_MINOR, STRATA_PATCH, o.minBytes, o.maxBytes,
              o.stepBytes ? (std::to_string(o.stepBytes) + "(bytes)").c_str()
                          : (std::to_string(o.stepFactor).substr(0, 4) + "(factor)").c_str(),
              o.warmup, o.iters, o.check);
  std::printf("# machine: %s, %s, %ld cores; MPI: %s\n", host, cpu.c_str(), sysconf(_SC_NPROCESSORS_ONLN), mpiFirst.c_str());
  std::printf("# ranks: %d, nodes: %s, memory: %s, impls:", gSize,
              anyComm ? reinterpret_cast<strataComm*>(anyComm)->topology.shapeText().c_str() : "?", o.mem.c_str());
  for (const std::string& i : o.impls) std::printf(" %s", i.c_str());
  std::printf("%s\n", shape ? (std::string(" (STRATA_RANKS_PER_NODE=") + shape + ")").c_str() : "");
  std::printf("#\n# Using devices\n");
  for (int r = 0; r < gSize; ++r) {
    const Topology& t = reinterpret_cast<strataComm*>(anyComm)->topology;
    std::printf("#  Rank %2d Pid %6d on %10s node %d local %d %s memory\n", r, pids[static_cast<size_t>(r)],
                &hosts[static_cast<size_t>(r) * 256], t.nodeOf[static_cast<size_t>(r)], t.localRankOf[static_cast<size_t>(r)],
                o.mem.c_str());
  }
}

void printHeader(const std::string& impl, const std::string& algo, const CollectiveDescriptor& d) {
  if (gRank != 0) return;
  std::printf("#\n# %s (impl %s, algorithm %s)\n#\n", d.name, impl.c_str(), algo.c_str());
  std::printf("#                                                              out-of-place                       in-place\n");
  std::printf("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong   model     algo\n");
  std::printf("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)           (us)\n");
}

void printRow(const Row& r) {
  if (gRank != 0) return;
  if (!r.supported) {
    std::printf("%12zu  %12zu  %8s  %6s  %6d   (not run: %s)\n", r.bytes, r.count, r.type.c_str(), r.redop.c_str(), r.root,
                r.why.c_str());
    return;
  }
  std::printf("%12zu  %12zu  %8s  %6s  %6d", r.bytes, r.count, r.type.c_str(), r.redop.c_str(), r.root);
  for (int ip = 0; ip < 2; ++ip) {
    std::printf("  %7.2f  %6.2f  %6.2f  %5lld", r.time[ip], r.algbw[ip], r.busbw[ip], r.wrong[ip]);
  }
  if (r.modelUs >= 0) std::printf("  %7.2f", r.modelUs);
  else std::printf("  %7s", "-");
  std::printf("  %s\n", r.algo.c_str());
  if (!r.phases.empty()) {
    std::printf("#   phases (us, out of place):");
    for (const auto& [label, us] : r.phases) std::printf(" %s %.2f;", label.empty() ? "local" : label.c_str(), us);
    std::printf("\n");
  }
  std::fflush(stdout);
}

struct Runner {
  const Options& o;
  std::vector<Row> rows;
  long long totalWrong = 0;

  // Every variant at one size. The timed iterations interleave the variants (A B C A B C ...), so
  // each ratio compares calls made microseconds apart: this machine's speed drifts by 2x over
  // seconds, and blocks of one variant after another would measure the drift.
  std::vector<Row> measureSize(const std::vector<std::pair<std::string, std::string>>& variants,
                               const CollectiveDescriptor& d, const std::vector<strataComm_t>& comms, size_t bytes,
                               Buffers& buf, Buffers& dbuf, unsigned seed) {
    const size_t es = dataTypeSize(o.type);
    const CallShape s = d.shape(bytes, es, gSize);
    CallArgs a;
    a.type = o.type;
    a.op = o.op;
    a.root = d.hasRoot ? o.root : 0;
    a.shift = o.shift;
    const size_t nv = variants.size();
    std::vector<Row> rows(nv);
    for (size_t v = 0; v < nv; ++v) {
      Row& row = rows[v];
      row.impl = variants[v].first;
      row.algo = variants[v].second;
      row.op = d.name;
      row.bytes = s.reportedBytes;
      row.count = s.reportedCount;
      row.type = dataTypeName(o.type);
      row.redop = d.hasOp ? redOpName(o.op) : "none";
      row.root = d.hasRoot ? o.root : -1;
      if (isMpiImpl(row.impl) && !mpiSupports(d, a, &row.why)) row.supported = false;
      if (row.impl == "nccl") {
        if (!gNcclWhy.empty()) {
          row.supported = false;
          row.why = gNcclWhy;
        } else if (!ncclSupports(d, &row.why)) {
          row.supported = false;
        }
      }
    }
    for (int ip = 0; ip < 2; ++ip) {
      a.inPlace = ip == 1;
      const void* send = nullptr;
      void* recv = nullptr;
      const bool device = o.mem == "device";
      auto call = [&](size_t v) -> bool {
        if (variants[v].first == "strata") {
          const strataResult_t rc = runStrata(d, s, a, send, recv, comms[v], device ? perfStream() : nullptr);
          if (rc != strataSuccess) {
            std::fprintf(stderr, "[rank %d] strata %s failed: %s\n", gRank, d.name, strataGetLastError(comms[v]));
            return false;
          }
          if (device) syncStream();  // timed to completion on the stream, as nccl-tests
          return true;
        }
        if (variants[v].first == "nccl") return runNccl(d, s, a, send, recv) == 0;
        const MpiNames names = variants[v].first == "pmpi" ? MpiNames::kProfiling : MpiNames::kMpi;
        if (!device) return runMpi(d, s, a, send, recv, MPI_COMM_WORLD, gRank, es, names) == MPI_SUCCESS;
        // MPI on device buffers without CUDA-aware MPI: the whole buffers through the host in one go
        // (device-to-host, MPI, host-to-device), the baseline of the staged pipeline.
        const void* hs = nullptr;
        void* hr = nullptr;
        callPointers(d, s, a, gRank, es, buf, &hs, &hr);
        copyToHost(const_cast<void*>(hs), send, s.sendElems * es);
        const int rc = runMpi(d, s, a, hs, hr, MPI_COMM_WORLD, gRank, es, names);
        copyToDevice(recv, hr, s.recvElems * es);
        return rc == MPI_SUCCESS;
      };
      auto pointers = [&]() {
        if (device) callPointers(d, s, a, gRank, es, dbuf, &send, &recv);
        else callPointers(d, s, a, gRank, es, buf, &send, &recv);
      };
      for (size_t v = 0; v < nv; ++v) {
        if (!rows[v].supported || !o.check) continue;
        prepareCheck(d, s, a, gRank, gSize, seed, buf);
        pointers();
        if (device) {
          copyToDevice(dbuf.send, buf.send, s.sendElems * es);
          copyToDevice(dbuf.recv, buf.recv, s.recvElems * es);
        }
        const bool ran = call(v);
        if (device) {  // both buffers: in place, a result may live inside the send buffer
          copyToHost(buf.recv, dbuf.recv, s.recvElems * es);
          copyToHost(buf.send, dbuf.send, s.sendElems * es);
        }
        long long local = ran ? static_cast<long long>(countWrong(d, s, a, gRank, gSize, buf, isMpiImpl(variants[v].first)))
                              : static_cast<long long>(std::max<size_t>(1, s.recvElems));
        MPI_Allreduce(&local, &rows[v].wrong[ip], 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        totalWrong += rows[v].wrong[ip];
      }
      pointers();
      for (size_t v = 0; v < nv; ++v) {
        for (int w = 0; rows[v].supported && w < o.warmup; ++w) call(v);
      }
      std::vector<std::vector<double>> times(nv, std::vector<double>(static_cast<size_t>(o.iters)));
      std::vector<std::vector<PhaseTimes>> phaseRuns(nv);
      for (int it = 0; it < o.iters; ++it) {
        for (size_t v = 0; v < nv; ++v) {
          if (!rows[v].supported) continue;
          const bool timePhases = o.phases && variants[v].first == "strata" && ip == 0;
          PhaseTimes pt;
          auto* c = reinterpret_cast<strataComm*>(comms[v]);
          MPI_Barrier(MPI_COMM_WORLD);
          if (timePhases) c->phaseTimes = &pt;
          const double t0 = MPI_Wtime();
          call(v);
          times[v][static_cast<size_t>(it)] = MPI_Wtime() - t0;
          if (timePhases) {
            c->phaseTimes = nullptr;
            phaseRuns[v].push_back(std::move(pt));
          }
        }
      }
      for (size_t v = 0; v < nv; ++v) {
        if (!rows[v].supported) continue;
        if (!phaseRuns[v].empty()) rows[v].phases = phaseMedians(phaseRuns[v]);
        const double t = medianOfSlowest(times[v]);
        rows[v].time[ip] = t * 1e6;
        rows[v].algbw[ip] = t > 0 ? static_cast<double>(s.reportedBytes) / t / 1e9 : 0;
        rows[v].busbw[ip] = rows[v].algbw[ip] * d.busFactor(gSize);
      }
    }
    for (size_t v = 0; v < nv; ++v) {
      Row& row = rows[v];
      if (row.impl != "strata") {
        row.algo = "MPI_" + std::string(d.name);
        continue;
      }
      CollectiveArgs args;
      args.coll = d.coll;
      args.count = s.count;
      args.type = o.type;
      args.op = o.op;
      args.root = a.root;
      args.shift = a.shift;
      args.commSize = gSize;
      args.device = o.mem == "device";  // the plan the call will run
      std::shared_ptr<CachedPlan> plan;
      if (planFor(reinterpret_cast<strataComm*>(comms[v]), args, &plan).ok()) {
        row.modelUs = plan->predictedSeconds * 1e6;
        row.algo = plan->plan.algorithm;
      }
    }
    return rows;
  }

  // Every implementation and algorithm at one size, then the next size: the ratios compare
  // measurements taken moments apart, not minutes (machines drift).
  void run(const std::vector<std::pair<std::string, std::string>>& variants, const CollectiveDescriptor& d) {
    std::vector<strataComm_t> comms(variants.size(), nullptr);
    for (size_t v = 0; v < variants.size(); ++v) {
      const auto& [impl, algo] = variants[v];
      if (impl != "strata") continue;
      strataConfig_t config = STRATA_CONFIG_INITIALIZER;
      const std::string spec = std::string(d.name) + "=" + algo;
      config.algorithm = algo == "auto" ? nullptr : spec.c_str();
      if (strataCommInitMpi(&comms[v], MPI_COMM_WORLD, &config) != strataSuccess) {
        if (gRank == 0) std::fprintf(stderr, "strata-perf: %s\n", strataGetLastError(nullptr));
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    const size_t es = dataTypeSize(o.type);
    const CallShape largest = d.shape(o.maxBytes, es, gSize);
    Buffers buf;
    std::vector<unsigned char> sendStore(std::max<size_t>(1, largest.sendElems * es) + 64),
        recvStore(std::max<size_t>(1, largest.recvElems * es) + 64);
    buf.send = sendStore.data();
    buf.recv = recvStore.data();
    Buffers dbuf;  // --mem device: the call's buffers; buf holds the host copies for the check
    if (o.mem == "device") {
      dbuf.send = deviceAlloc(sendStore.size());
      dbuf.recv = deviceAlloc(recvStore.size());
    }
    std::vector<std::vector<Row>> table(variants.size());
    unsigned seed = 1;
    for (size_t bytes : sweep(o)) {
      const CallShape s = d.shape(bytes, es, gSize);
      if (d.coll != Collective::kBarrier && s.count == 0) continue;  // below one element per rank
      std::vector<Row> measured = measureSize(variants, d, comms, bytes, buf, dbuf, seed);
      for (size_t v = 0; v < variants.size(); ++v) table[v].push_back(std::move(measured[v]));
      ++seed;
      if (d.coll == Collective::kBarrier) break;
    }
    for (size_t v = 0; v < variants.size(); ++v) {
      printHeader(variants[v].first, variants[v].second, d);
      for (const Row& r : table[v]) {
        printRow(r);
        rows.push_back(r);
      }
      if (comms[v]) strataCommDestroy(comms[v]);
    }
    if (dbuf.send != nullptr) deviceFree(dbuf.send);
    if (dbuf.recv != nullptr) deviceFree(dbuf.recv);
  }
};

void writeCsv(const Options& o, const std::vector<Row>& rows) {
  if (gRank != 0 || o.csv.empty()) return;
  std::FILE* f = std::fopen(o.csv.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "strata-perf: cannot write %s\n", o.csv.c_str());
    return;
  }
  std::fprintf(f, "impl,op,algo,ranks,size_bytes,count,type,redop,root,inplace,time_us,algbw_gbs,busbw_gbs,wrong,model_us\n");
  for (const Row& r : rows) {
    if (!r.supported) continue;
    for (int ip = 0; ip < 2; ++ip) {
      std::fprintf(f, "%s,%s,%s,%d,%zu,%zu,%s,%s,%d,%d,%.3f,%.4f,%.4f,%lld,%.3f\n", r.impl.c_str(), r.op.c_str(),
                   r.algo.c_str(), gSize, r.bytes, r.count, r.type.c_str(), r.redop.c_str(), r.root, ip, r.time[ip],
                   r.algbw[ip], r.busbw[ip], r.wrong[ip], r.modelUs);
    }
  }
  std::fclose(f);
}

void writePlot(const Options& o, const std::vector<Row>& rows) {
  if (gRank != 0 || o.plot.empty()) return;
  // One plot per collective; with several collectives the file name gets the collective's name.
  std::map<std::string, PlotSpec> byOp;
  for (const Row& r : rows) {
    if (!r.supported || r.op == "barrier") continue;
    PlotSpec& spec = byOp[r.op];
    spec.title = r.op + " on " + std::to_string(gSize) + " ranks, " + r.type + ", out of place";
    const std::string label = r.impl == "strata" ? "strata " + r.algo : r.impl;
    auto it = std::find_if(spec.series.begin(), spec.series.end(), [&](const PlotSeries& s) { return s.label == label; });
    if (it == spec.series.end()) {
      spec.series.push_back({label, {}});
      it = spec.series.end() - 1;
    }
    it->points.push_back({static_cast<double>(r.bytes), r.time[0]});
  }
  for (auto& [op, spec] : byOp) {
    std::string path = o.plot;
    if (byOp.size() > 1) {
      const size_t dot = path.rfind('.');
      path = path.substr(0, dot) + "_" + op + (dot == std::string::npos ? ".png" : path.substr(dot));
    }
    const std::string err = writeLogLogPlotPng(path, spec);
    if (err.empty()) std::printf("# plot written to %s\n", path.c_str());
    else std::fprintf(stderr, "strata-perf: %s\n", err.c_str());
  }
}

void printComparison(const Options& o, const std::vector<Row>& rows) {
  if (gRank != 0) return;
  const std::string subject = o.impls[0];
  // With several algorithms, the fastest of the subject's at each size (out of place).
  if (o.algo == "all") {
    std::printf("#\n# fastest %s algorithm per size (out-of-place median)\n", subject.c_str());
    std::printf("#  %-13s %12s  %-22s %10s   %s\n", "op", "size(B)", "algorithm", "time(us)", "runner-up");
    std::map<std::pair<std::string, size_t>, std::vector<const Row*>> groups;
    for (const Row& r : rows) {
      if (r.impl == subject && r.supported) groups[{r.op, r.bytes}].push_back(&r);
    }
    for (auto& [key, g] : groups) {
      std::sort(g.begin(), g.end(), [](const Row* a, const Row* b) { return a->time[0] < b->time[0]; });
      std::string second = g.size() > 1 ? strformat("%s %.2fx slower", g[1]->algo.c_str(), g[1]->time[0] / g[0]->time[0]) : "-";
      std::printf("#  %-13s %12zu  %-22s %10.2f   %s\n", key.first.c_str(), key.second, g[0]->algo.c_str(), g[0]->time[0],
                  second.c_str());
    }
  }
  for (size_t k = 1; k < o.impls.size(); ++k) {
    const std::string base = o.impls[k];
    std::printf("#\n# %s against %s: medians of the same run (out-of-place / in-place); ratio = %s time / %s time\n",
                subject.c_str(), base.c_str(), base.c_str(), subject.c_str());
    std::printf("#  %-13s %-20s %12s  %10s %10s %7s   %10s %10s %7s   %10s %7s\n", "op", "algorithm", "size(B)",
                (subject + "(us)").c_str(), (base + "(us)").c_str(), "ratio", (subject + "(us)").c_str(),
                (base + "(us)").c_str(), "ratio", "model(us)", "error");
    for (const Row& r : rows) {
      if (r.impl != subject) continue;
      for (const Row& b : rows) {
        if (b.impl != base || b.op != r.op || b.bytes != r.bytes || !b.supported || !r.supported) continue;
        // error: the model's prediction against the out-of-place median, (model - time) / time.
        std::string model = "         -        -";
        if (r.modelUs >= 0 && r.time[0] > 0) model = strformat("%10.2f %+6.0f%%", r.modelUs, (r.modelUs / r.time[0] - 1) * 100);
        std::printf("#  %-13s %-20s %12zu  %10.2f %10.2f %6.2fx   %10.2f %10.2f %6.2fx   %s\n", r.op.c_str(), r.algo.c_str(),
                    r.bytes, r.time[0], b.time[0], b.time[0] / r.time[0], r.time[1], b.time[1], b.time[1] / r.time[1],
                    model.c_str());
      }
    }
  }
}

// The algorithms of every collective with their cost formulas (a Markdown table).
void listAlgorithms() {
  if (gRank != 0) return;
  std::printf("| collective | algorithm | level | cost |\n| --- | --- | --- | --- |\n");
  for (int k = 0; k < kNumCollectives; ++k) {
    const Collective c = static_cast<Collective>(k);
    for (const FlatAlgorithm* a : flatAlgorithmsFor(c)) {
      std::printf("| %s | `%s` | flat | %s |\n", collectiveName(c), a->name, a->formula);
    }
    for (const HierAlgorithm* h : hierAlgorithmsFor(c)) {
      std::printf("| %s | `%s` | hierarchical | %s |\n", collectiveName(c), h->name, h->formula);
    }
  }
}

int mainImpl(int argc, char** argv) {
  const Options o = parseOptions(argc, argv);
  if (o.listAlgorithms) {
    listAlgorithms();
    return 0;
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
      gNcclWhy = ncclStart();
      if (gRank == 0) std::printf("# %s: %s\n", ncclVersionText().c_str(), gNcclWhy.empty() ? "running" : gNcclWhy.c_str());
    }
  }
  Runner runner{o, {}, 0};
  for (const std::string& opName : o.ops) {
    const CollectiveDescriptor& d = *findDescriptor(opName);
    std::vector<std::pair<std::string, std::string>> variants;
    for (const std::string& impl : o.impls) {
      std::vector<std::string> algos = splitList(o.algo);
      if (isMpiImpl(impl)) algos = {"-"};
      else if (o.algo == "all") algos = algorithmNames(d.coll);
      for (const std::string& algo : algos) variants.push_back({impl, algo});
    }
    runner.run(variants, d);
  }
  ncclStop();
  writeCsv(o, runner.rows);
  writePlot(o, runner.rows);
  printComparison(o, runner.rows);
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
