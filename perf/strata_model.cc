// strata-model: predicts a collective on a machine nobody can book. For every algorithm that can
// serve the call (flat and hierarchical, the ones the library itself would consider) it prints per
// size the predicted time and bus bandwidth, marks the tuner's choice, and writes CSV and a PNG
// plot. Two predictions: the algorithm's closed form (what the tuner prices), and, where every
// rank's plan fits the step budget, the plan-level simulation of the very plans the library would
// run (perf/plan_timing.h: messages pay their level's alpha and beta, the ranks of a node share
// their NICs and the nodes a tapered core, node ops their calibrated costs). Where both run it
// reports how far they disagree.
//
//   strata-model --machine FILE [--nodes N] [--ppn K] [--nics K] [--nic-bandwidth BYTES_PER_S]
//                [--core-bandwidth BYTES_PER_S] [--op allreduce] [-b 8] [-e 1G] [-f 2] [-d float] [-o sum] [--algo A,B|all]
//                [--in-place 0|1]
//                [--simulate auto|off|all] [--sim-ranks N] [--sim-steps N] [--csv FILE] [--plot FILE.png]
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/plan/collective.h"
#include "perf/machine_model.h"
#include "perf/option_values.h"
#include "perf/plan_timing.h"
#include "perf/png_plot.h"
#include "src/core/config.h"
#include "src/tuning/tuner.h"

namespace strata::perf {
namespace {

struct ModelOptions {
  std::string machine;
  int nodes = 0, ppn = 0, nics = 0;
  double nicBandwidth = -1, coreBandwidth = -1;
  Collective coll = Collective::kAllReduce;
  size_t minBytes = 8, maxBytes = size_t{1} << 30;
  double factor = 2;
  DataType type = strataFloat32;
  RedOp op = strataSum;
  int shift = 1;  // strataShift's shift
  bool inPlace = false;  // every rank calls in place (the choice is the same; the prices are the calls as made)
  std::vector<std::string> algos;  // empty: all
  std::string simulate = "auto";
  double simSteps = 4e6;  // every rank's plan together, per (algorithm, size)
  int simRanks = 1024;    // auto: simulate machines of at most this many ranks
  std::string csv, plot;
};

[[noreturn]] void usage(int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: strata-model --machine FILE [options]\n"
               "  --machine FILE        machine file (machine.* keys and the cost levels; see perf/machine_model.h);\n"
               "                        without it, this library's default levels on 1 node\n"
               "  --nodes N, --ppn K    override machine.nodes and machine.ranks_per_node\n"
               "  --nics K              override machine.nics_per_node\n"
               "  --nic-bandwidth B     override machine.nic_bandwidth (bytes/s per NIC and direction)\n"
               "  --core-bandwidth B    override machine.core_bandwidth (bytes/s all messages between nodes\n"
               "                        share; 0: a non-blocking core)\n"
               "  --op NAME             allreduce broadcast reduce allgather reducescatter gather scatter alltoall\n"
               "                        scan exscan shift barrier (default allreduce)\n"
               "  -b, -e SIZE           smallest and largest size in bytes (K, M, G suffixes; default 8 and 1G);\n"
               "                        the size is nccl-tests': the larger buffer of a rank\n"
               "  -f F                  factor between sizes (default 2)\n"
               "  -d TYPE, -o OP        datatype (float) and reduction (sum)\n"
               "  --shift S             the shift of --op shift (default 1)\n"
               "  --algo A,B|all        algorithms to predict (default all that serve the call)\n"
               "  --in-place 0|1        1: every rank calls in place; each algorithm priced as that call is made,\n"
               "                        without the copies it then leaves out (the price the library reports for\n"
               "                        it); the tuner's choice is the out-of-place one (default 0)\n"
               "  --simulate MODE       auto (default): simulate the plans on machines of at most --sim-ranks ranks\n"
               "                        (default 1024) whose plans together hold at most --sim-steps steps\n"
               "                        (default 4e6, a few seconds); all: every plan; off: formulas only\n"
               "  --csv FILE            every prediction as CSV\n"
               "  --plot FILE.png       time against size, one line per algorithm\n");
  std::exit(code);
}

[[noreturn]] void bad(const std::string& option, const char* value, const char* want) {
  std::fprintf(stderr, "strata-model: %s %s: expected %s\n", option.c_str(), value, want);
  std::exit(2);
}

size_t parseSize(const char* text) {
  size_t bytes = 0;
  if (!parseByteSize(text, &bytes)) bad("size", text, "bytes, with an optional K, M or G");
  return bytes;
}

double parseNumber(const std::string& option, const char* text) {
  double v = 0;
  if (!parseNonNegative(text, &v)) bad(option, text, "a non-negative number");
  return v;
}

int parseCount(const std::string& option, const char* text) {
  const double v = parseNumber(option, text);
  if (v < 1 || v > 1 << 20 || v != std::floor(v)) bad(option, text, "a whole number from 1 to 2^20");
  return static_cast<int>(v);
}

ModelOptions parseOptions(int argc, char** argv) {
  ModelOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") usage(0);
    if (i + 1 >= argc) usage(2);
    const char* v = argv[++i];
    if (a == "--machine") o.machine = v;
    else if (a == "--nodes") o.nodes = parseCount(a, v);
    else if (a == "--ppn") o.ppn = parseCount(a, v);
    else if (a == "--nics") o.nics = parseCount(a, v);
    else if (a == "--nic-bandwidth") o.nicBandwidth = parseNumber(a, v);
    else if (a == "--core-bandwidth") o.coreBandwidth = parseNumber(a, v);
    else if (a == "--op") {
      if (!parseCollective(v, &o.coll)) bad(a, v, "a collective (allreduce, broadcast, ...)");
    } else if (a == "-b") o.minBytes = parseSize(v);
    else if (a == "-e") o.maxBytes = parseSize(v);
    else if (a == "-f") o.factor = parseNumber(a, v);
    else if (a == "-d") {
      if (!parseDataType(v, &o.type)) bad(a, v, "a datatype (int8 ... bfloat16)");
    } else if (a == "-o") {
      if (!parseRedOp(v, &o.op)) bad(a, v, "sum, prod, max, min or avg");
    } else if (a == "--shift") {
      char* end = nullptr;
      const long q = std::strtol(v, &end, 10);
      if (end == v || *end != '\0' || q < INT_MIN || q > INT_MAX) bad(a, v, "an integer shift");
      o.shift = static_cast<int>(q);
    } else if (a == "--algo") {
      o.algos.clear();
      if (std::string(v) != "all") o.algos = splitList(v);
    } else if (a == "--in-place") {
      if (std::string(v) != "0" && std::string(v) != "1") bad(a, v, "0 or 1");
      o.inPlace = std::string(v) == "1";
    } else if (a == "--simulate") {
      o.simulate = v;
      if (o.simulate != "auto" && o.simulate != "off" && o.simulate != "all") bad(a, v, "auto, off or all");
    } else if (a == "--sim-steps") o.simSteps = parseNumber(a, v);
    else if (a == "--sim-ranks") o.simRanks = parseCount(a, v);
    else if (a == "--csv") o.csv = v;
    else if (a == "--plot") o.plot = v;
    else {
      std::fprintf(stderr, "strata-model: unknown option %s\n", a.c_str());
      usage(2);
    }
  }
  if (o.factor <= 1) bad("-f", std::to_string(o.factor).c_str(), "a factor above 1");
  if (o.maxBytes < o.minBytes) bad("-e", std::to_string(o.maxBytes).c_str(), "at least -b");
  return o;
}

struct Prediction {
  size_t bytes;
  std::string algo;
  double formula = 0;    // seconds
  double simulated = -1;  // seconds, -1: not simulated
  bool chosen = false;
  double busbw = 0;  // GB/s, from the simulated time where there is one
};

int run(const ModelOptions& o) {
  Machine m;
  if (!o.machine.empty()) {
    const Status s = loadMachine(o.machine, &m);
    if (!s.ok()) {
      std::fprintf(stderr, "strata-model: %s\n", s.message().c_str());
      return 2;
    }
  } else {
    m.costs = defaultCostParams();
    m.source = "defaults";
  }
  if (o.nodes > 0) m.nodes = o.nodes;
  if (o.ppn > 0) m.ranksPerNode = o.ppn;
  if (o.nics > 0) m.nicsPerNode = o.nics;
  if (o.nicBandwidth >= 0) m.nicBandwidth = o.nicBandwidth;
  if (o.coreBandwidth >= 0) m.coreBandwidth = o.coreBandwidth;
  // A machine of more ranks than one host holds: its flat level and lanes cross between hosts, where
  // a NIC reads the buffers, so a one-host calibration's rewrite cost does not apply to them (and
  // counting it would build every rank's plans for every candidate: 5 s for 4096 x 2 ranks against
  // 0.06).
  if (m.ranks() > m.hostProcesses()) {
    m.costs.flat = m.costs.flat.withoutRewrite();
    m.costs.lane = m.costs.lane.withoutRewrite();
  }
  if (Status s = checkMachine(m); !s.ok()) {
    std::fprintf(stderr, "strata-model: %s\n", s.message().c_str());
    return 2;
  }
  for (const std::string& a : o.algos) {
    const std::vector<std::string> known = algorithmNames(o.coll);
    if (std::find(known.begin(), known.end(), a) != known.end()) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    std::fprintf(stderr, "strata-model: %s has no algorithm named '%s'; it has: %s\n", collectiveName(o.coll), a.c_str(),
                 list.c_str());
    return 2;
  }
  const int p = m.ranks();
  Topology topo;
  if (Status s = Topology::fromShape({m.ranksPerNode}, p, 0, &topo); !s.ok()) {
    std::fprintf(stderr, "strata-model: %s\n", s.message().c_str());
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::printf("# strata-model: %s on %d nodes x %d ranks (%d ranks), %d NIC%s per node at %.3g GB/s per direction",
              collectiveName(o.coll), m.nodes, m.ranksPerNode, p, m.nicsPerNode, m.nicsPerNode == 1 ? "" : "s",
              m.nicBandwidth / 1e9);
  if (m.coreBandwidth > 0) {
    std::printf(", a core of %.3g GB/s (%d messages at once; %.2g:1 against the NICs)", m.coreBandwidth / 1e9,
                m.coreSlots(), m.nodes * m.nicsPerNode * m.nicBandwidth / m.coreBandwidth);
  }
  std::printf("\n");
  // The closed forms' costs: the file's, with a core's share of it on the lanes (Machine::formulaCosts).
  const CostParams formulaCosts = m.formulaCosts();
  std::printf("# machine: %s; node alpha %.3g s beta %.3g s/B gamma %.3g s/B; lane alpha %.3g beta %.3g; flat alpha %.3g "
              "beta %.3g\n",
              m.source.c_str(), m.costs.node.alpha, m.costs.node.beta, m.costs.node.gamma, m.costs.lane.alpha,
              m.costs.lane.beta, m.costs.flat.alpha, m.costs.flat.beta);
  std::printf("# formula: the closed form the tuner prices; simulated: every rank's plan in simulated time "
              "(perf/plan_timing.h); * the tuner's choice; busbw from the simulated time where there is one\n");
  if (o.inPlace) std::printf("# in place: every rank's call in place, each priced as made; the choice the out-of-place one\n");
  std::printf("# %12s  %-24s %14s %14s %8s %10s\n", "size (B)", "algorithm", "formula (us)", "simulated (us)",
              "diff", "busbw GB/s");
  std::vector<Prediction> all;
  double worstDiff = 0;
  std::string worstWhere;
  Config config;
  for (double b = static_cast<double>(o.minBytes); b <= static_cast<double>(o.maxBytes) * 1.0000001; b *= o.factor) {
    const size_t bytes = static_cast<size_t>(std::llround(b));
    CollectiveArgs args = sweepCall(o.coll, o.type, o.op, bytes, p);
    args.shift = o.shift;
    args.inPlace = o.inPlace;
    if (args.count == 0 && o.coll != Collective::kBarrier) {  // the library returns at once, as NCCL does
      std::printf("  %12zu  (no element per rank: the call is a no-op)\n", bytes);
      continue;
    }
    const Machine call = m.forCall(args);  // the plan timing's costs; the tuner reads the curves itself
    TunerInput in;
    in.args = &args;
    in.topology = &topo;
    in.costs = &formulaCosts;
    in.hostProcesses = m.hostProcesses();
    in.config = &config;
    in.nodeTeam = true;
    std::vector<std::string> rejected;
    std::vector<Candidate> cands = candidatesFor(in, &rejected);
    Candidate choice;
    const bool haveChoice = selectAlgorithm(in, &choice).ok();
    for (const Candidate& c : cands) {
      if (!o.algos.empty() && std::find(o.algos.begin(), o.algos.end(), c.name) == o.algos.end()) continue;
      Prediction pr;
      pr.bytes = bytes;
      pr.algo = c.name;
      pr.formula = c.calledSeconds;  // out of place, predictedSeconds
      pr.chosen = haveChoice && c.name == choice.name;
      if (o.simulate == "all" || (o.simulate == "auto" && p <= o.simRanks)) {
        PlanTiming t;
        bool overBudget = false;
        const Status s = timeAlgorithm(args, c.name, call, o.simulate == "all" ? 0 : o.simSteps, &t, &overBudget);
        if (!s.ok()) {
          std::fprintf(stderr, "strata-model: %s at %zu bytes: %s\n", c.name.c_str(), bytes, s.message().c_str());
          return 1;
        }
        if (!overBudget) {
          pr.simulated = t.seconds;
          const double diff = std::fabs(pr.simulated - pr.formula) / std::max(pr.simulated, 1e-30);
          if (diff > worstDiff) {
            worstDiff = diff;
            worstWhere = c.name + " at " + std::to_string(bytes) + " B";
          }
        }
      }
      const double t = pr.simulated >= 0 ? pr.simulated : pr.formula;
      pr.busbw = t > 0 ? static_cast<double>(bytes) / t / 1e9 * specOf(o.coll).busFactor(p) : 0;
      std::printf("  %12zu  %-24s %14.2f ", bytes, (pr.algo + (pr.chosen ? " *" : "")).c_str(), pr.formula * 1e6);
      if (pr.simulated >= 0) {
        std::printf("%14.2f %7.1f%% ", pr.simulated * 1e6, 100 * (pr.formula - pr.simulated) / pr.simulated);
      } else {
        std::printf("%14s %8s ", "-", "-");
      }
      std::printf("%10.2f\n", pr.busbw);
      all.push_back(pr);
    }
    if (all.empty() || all.back().bytes != bytes) {
      std::printf("  %12zu  (no algorithm serves the call:", bytes);
      for (const std::string& r : rejected) std::printf(" %s;", r.c_str());
      std::printf(")\n");
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!worstWhere.empty()) {
    std::printf("# largest disagreement of formula and simulation: %.1f%% (%s)\n", 100 * worstDiff, worstWhere.c_str());
  } else {
    std::printf("# no plan simulated (more than --sim-ranks %d ranks or --sim-steps %.3g steps, or --simulate off): "
                "formulas only\n", o.simRanks, o.simSteps);
  }
  std::printf("# %zu predictions in %.2f s\n", all.size(), secs);
  if (!o.csv.empty()) {
    std::FILE* f = std::fopen(o.csv.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "strata-model: cannot write %s\n", o.csv.c_str());
      return 1;
    }
    std::fprintf(f, "collective,nodes,ranks_per_node,size_bytes,algorithm,formula_us,simulated_us,busbw_gbs,chosen,inplace\n");
    for (const Prediction& pr : all) {
      std::fprintf(f, "%s,%d,%d,%zu,%s,%.4f,%.4f,%.4f,%d,%d\n", collectiveName(o.coll), m.nodes, m.ranksPerNode, pr.bytes,
                   pr.algo.c_str(), pr.formula * 1e6, pr.simulated >= 0 ? pr.simulated * 1e6 : -1.0, pr.busbw,
                   pr.chosen ? 1 : 0, o.inPlace ? 1 : 0);
    }
    std::fclose(f);
  }
  if (!o.plot.empty()) {
    PlotSpec spec;
    spec.title = std::string("strata-model ") + collectiveName(o.coll) + " " + std::to_string(m.nodes) + "x" +
                 std::to_string(m.ranksPerNode);
    for (const Prediction& pr : all) {
      auto it = std::find_if(spec.series.begin(), spec.series.end(), [&](const PlotSeries& s) { return s.label == pr.algo; });
      if (it == spec.series.end()) {
        spec.series.push_back({pr.algo, {}});
        it = spec.series.end() - 1;
      }
      it->points.push_back({static_cast<double>(pr.bytes), (pr.simulated >= 0 ? pr.simulated : pr.formula) * 1e6});
    }
    const std::string why = writeLogLogPlotPng(o.plot, spec);
    if (!why.empty()) {
      std::fprintf(stderr, "strata-model: %s\n", why.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace strata::perf

int main(int argc, char** argv) { return strata::perf::run(strata::perf::parseOptions(argc, argv)); }
