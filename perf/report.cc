#include "perf/report.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include "hierarchy/composition.h"
#include "inter_node/algorithms/algorithm.h"
#include "perf/option_values.h"
#include "perf/png_plot.h"
#include "src/core/introspection.h"
#include "src/tuning/device_model.h"

namespace strata::perf {

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
              anyComm ? tools::topologyOf(anyComm).shapeText().c_str() : "?", o.mem.c_str());
  for (const std::string& i : o.impls) std::printf(" %s", i.c_str());
  std::printf("%s\n", shape ? (std::string(" (STRATA_RANKS_PER_NODE=") + shape + ")").c_str() : "");
  std::printf("#\n# Using devices\n");
  for (int r = 0; r < gSize; ++r) {
    const Topology& t = tools::topologyOf(anyComm);
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
  if (r.modelUs[0] >= 0) std::printf("  %7.2f", r.modelUs[0]);
  else std::printf("  %7s", "-");
  std::printf("  %s\n", r.algo.c_str());
  if (!r.phases.empty()) {
    std::printf("#   phases (us, out of place):");
    for (const auto& [label, us] : r.phases) std::printf(" %s %.2f;", label.empty() ? "local" : label.c_str(), us);
    std::printf("\n");
  }
  printStages(r.stages);
  std::fflush(stdout);
}

void writeCsv(const Options& o, const std::vector<Row>& rows) {
  if (gRank != 0 || o.csv.empty()) return;
  std::FILE* f = std::fopen(o.csv.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "strata-perf: cannot write %s\n", o.csv.c_str());
    return;
  }
  std::fprintf(f, "impl,op,algo,ranks,size_bytes,count,type,redop,root,inplace,time_us,algbw_gbs,busbw_gbs,wrong,model_us,"
                 "requested,pass_times_us\n");
  for (const Row& r : rows) {
    if (!r.supported) continue;
    for (int ip = 0; ip < 2; ++ip) {
      std::string passes;  // --passes: each pass's time, ';' between
      for (double t : r.passTimes[ip]) passes += (passes.empty() ? "" : ";") + std::to_string(t);
      std::fprintf(f, "%s,%s,%s,%d,%zu,%zu,%s,%s,%d,%d,%.3f,%.4f,%.4f,%lld,%.3f,%s,%s\n", r.impl.c_str(), r.op.c_str(),
                   r.algo.c_str(), gSize, r.bytes, r.count, r.type.c_str(), r.redop.c_str(), r.root, ip, r.time[ip],
                   r.algbw[ip], r.busbw[ip], r.wrong[ip], r.modelUs[ip], r.requested.c_str(), passes.c_str());
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
    // One series per variant asked for: the tuner's choice is one line (auto) whatever it chose.
    const std::string label = r.impl == "strata" ? "strata " + r.requested : r.impl;
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

void printDeviceModel(const Options& o, const std::vector<Row>& rows, strataComm_t anyComm) {
  if (gRank != 0 || o.mem != "device") return;
  bool any = false;
  for (const Row& r : rows) any |= r.counted && r.impl == "strata";
  if (!any) return;
  DeviceNodeParams p;
  const Status loaded = tools::deviceParamsOf(anyComm, &p);
  if (!loaded.ok()) {
    std::printf("# device model: %s\n", loaded.message().c_str());
    return;
  }
  std::printf("#\n# Counted on the CUDA simulator (busiest rank, one out-of-place call) and priced by the device model\n"
              "# (src/tuning/device_model.h, parameters: %s): HBM %.0f GB/s, link %.0f GB/s per direction x %.2f,\n"
              "# PCIe %.0f GB/s, launch %.1f us, flag %.1f us. Published NCCL on 8x H100 SXM with NVSwitch, large\n"
              "# messages: ring allreduce busbw ~%.0f GB/s, NVLS allreduce ~%.0f GB/s (NVIDIA/nccl-tests#212,\n"
              "# NVIDIA/nccl#1455). Only the single-kernel peer collectives are priced (the host-synchronised\n"
              "# rounds are not modelled at the device level). link/bound: counted link bytes over the bytes each\n"
              "# rank must receive.\n",
              p.source.c_str(), p.hbmBytesPerSecond / 1e9, p.linkBytesPerSecond / 1e9, p.linkEfficiency,
              p.pcieBytesPerSecond / 1e9, p.launchSeconds * 1e6, p.flagSeconds * 1e6, p.ncclRingBusBytesPerSecond / 1e9,
              p.ncclNvlsBusBytesPerSecond / 1e9);
  std::printf("# %-14s %12s %-19s %4s %13s %13s %7s %13s %12s %5s %10s %9s %9s\n", "op", "size (B)", "algorithm",
              "lnch", "link B/rank", "bound B/rank", "ratio", "HBM B/rank", "host B/rank", "flags", "pred (us)",
              "busbw", "/ring");
  for (const Row& r : rows) {
    if (!r.counted || r.impl != "strata") continue;
    const Collective c = findDescriptor(r.op)->coll;
    const double bound = linkLowerBound(c, gSize, static_cast<double>(r.bytes));
    const double ratio = bound > 0 ? r.linkBytes / bound : 0;
    std::printf("  %-14s %12zu %-19s %4.0f %13.0f %13.0f %7.3f %13.0f %12.0f", r.op.c_str(), r.bytes, r.algo.c_str(),
                r.launches, r.linkBytes, bound, ratio, r.localBytes, r.hostBytes);
    if (!r.peer) {
      std::printf(" %5s %10s %9s %9s\n", "-", "-", "-", "-");
      continue;
    }
    DeviceTraffic t;
    t.linkBytes = r.linkBytes;
    t.localBytes = r.localBytes;
    t.hostBytes = r.hostBytes;
    t.launches = r.launches;
    t.barriers = r.barriers;
    const double seconds = predictSeconds(t, p);
    const double busbw = specOf(c).busFactor(gSize) * static_cast<double>(r.bytes) / seconds;
    std::printf(" %5.0f %10.2f %9.1f %9.2f\n", r.barriers, seconds * 1e6, busbw / 1e9,
                busbw / p.ncclRingBusBytesPerSecond);
  }
}

void printComparison(const Options& o, const std::vector<Row>& rows) {
  if (gRank != 0) return;
  const std::string subject = o.impls[0];
  // With every algorithm, the fastest of the subject's at each size (out of place; the tuner's choice,
  // where auto ran beside them, is one of them already).
  const std::vector<std::string> asked = splitList(o.algo);
  if (std::find(asked.begin(), asked.end(), "all") != asked.end()) {
    std::printf("#\n# fastest %s algorithm per size (out-of-place median)\n", subject.c_str());
    std::printf("#  %-13s %12s  %-22s %10s   %s\n", "op", "size(B)", "algorithm", "time(us)", "runner-up");
    std::map<std::pair<std::string, size_t>, std::vector<const Row*>> groups;
    for (const Row& r : rows) {
      if (r.impl == subject && r.supported && r.requested != "auto") groups[{r.op, r.bytes}].push_back(&r);
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
        if (r.modelUs[0] >= 0 && r.time[0] > 0) model = strformat("%10.2f %+6.0f%%", r.modelUs[0], (r.modelUs[0] / r.time[0] - 1) * 100);
        std::printf("#  %-13s %-20s %12zu  %10.2f %10.2f %6.2fx   %10.2f %10.2f %6.2fx   %s\n", r.op.c_str(), r.algo.c_str(),
                    r.bytes, r.time[0], b.time[0], b.time[0] / r.time[0], r.time[1], b.time[1], b.time[1] / r.time[1],
                    model.c_str());
      }
    }
  }
}

void printModelErrors(const Options& o, const std::vector<Row>& rows) {
  if (gRank != 0 || o.impls.empty()) return;
  // (model - time) / time of the subject's out-of-place medians, all rows and from 64 KiB up.
  struct Err {
    double e;
    const Row* r;
  };
  std::vector<Err> all, large;
  for (const Row& r : rows) {
    if (r.impl != o.impls[0] || !r.supported || r.modelUs[0] < 0 || r.time[0] <= 0) continue;
    all.push_back({r.modelUs[0] / r.time[0] - 1, &r});
    if (r.bytes >= 65536) large.push_back(all.back());
  }
  if (all.empty()) return;
  auto summary = [](const char* what, std::vector<Err> v) {
    if (v.empty()) return;
    std::sort(v.begin(), v.end(), [](const Err& a, const Err& b) { return std::fabs(a.e) < std::fabs(b.e); });
    const size_t n = v.size();
    const size_t within = static_cast<size_t>(
        std::count_if(v.begin(), v.end(), [](const Err& x) { return std::fabs(x.e) <= 0.15; }));
    const Err& worst = v.back();
    std::printf("#  %-16s %4zu rows: median |error| %5.1f%%, 90th percentile %5.1f%%, within 15%%: %zu of %zu; "
                "largest %+.0f%% (%s %zu B, %s)\n",
                what, n, 100 * std::fabs(v[n / 2].e), 100 * std::fabs(v[std::min(n - 1, (n * 9) / 10)].e), within, n,
                100 * worst.e, worst.r->op.c_str(), worst.r->bytes, worst.r->algo.c_str());
  };
  std::printf("#\n# the model's error, (model - time) / time, %s out of place:\n", o.impls[0].c_str());
  summary("every size", all);
  summary("from 64 KiB", large);
}

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
  std::printf("\na: alpha (per message), b: beta (per byte moved), g: gamma (per byte reduced), c: a copy's "
              "cost per byte within a rank (its own curve where calibration measured it); m: the call's bytes, p: ranks, p': the largest power of two <= p,"
              " n: ranks per node, w: the blocks of a rooted binomial tree's subtree whose ranks wrap past p - 1, one host:"
              " where one host runs the whole communicator; beta and gamma read at the call's working set, a binomial tree's rounds and the "
              "leader compositions' lanes at the share of the host they keep busy (README, \"Cost model and "
              "calibration\")\n");
}

}  // namespace strata::perf
