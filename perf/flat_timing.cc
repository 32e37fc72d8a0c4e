// strata-flat-timing: times the library's flat algorithms, one rank per node, with nothing but the
// plan executor between the plans and MPI. It is what perf/smpi_compare.sh builds with SimGrid's
// smpicxx and runs under smpirun, where MPI_Wtime is the simulated clock of a simulated cluster, so
// that strata-model's predictions can be held against an independent network simulator running
// the same plans. Under a real MPI it times the same thing (ctest runs it that way).
//
// Every rank builds its plan exactly as strata-model does (the algorithm's builder with the flat
// level of --machine), runs it -w times, then -n times after a barrier, and rank 0 prints the
// slowest rank's mean time per call (with --global-clock, from the last rank's start). Each output
// is checked against the sum, block or root value it must hold (float sums of small integers,
// exact), so a wrong plan cannot pass as a fast one.
//
//   strata-flat-timing --machine FILE --op allreduce|reducescatter|allgather|broadcast|reduce
//                      [--algo A,B|all] [-b 8] [-e 1M] [-f 4] [-n 2] [-w 1]
//                      [--block-in-mpi]   (network simulators: wait in MPI_Waitsome when idle)
//                      [--global-clock]   (MPI_Wtime is one clock: time from the last start)
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "inter_node/algorithms/algorithm.h"
#include "inter_node/executor.h"
#include "kernels/compute_backend.h"
#include "kernels/plan/plan_builder.h"
#include "perf/machine_model.h"
#include "perf/option_values.h"

namespace strata::perf {
namespace {

struct TimingOptions {
  std::string machine;
  Collective coll = Collective::kAllReduce;
  std::vector<std::string> algos;  // empty: every algorithm that serves the call
  size_t minBytes = 8, maxBytes = size_t{1} << 20;
  double factor = 4;
  int iters = 2, warmup = 1;
  bool blockInMpi = false;
  bool globalClock = false;  // MPI_Wtime is one clock for every rank (a simulator's)
};

int gRank = 0;

[[noreturn]] void fail(const std::string& what) {
  if (gRank == 0) std::fprintf(stderr, "strata-flat-timing: %s\n", what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::exit(2);
}

int parseWhole(const std::string& option, const char* text, int lo) {
  double v = 0;
  if (!parseNonNegative(text, &v) || v < lo || v > 1e6 || v != std::floor(v)) {
    fail(option + " " + text + ": expected a whole number from " + std::to_string(lo));
  }
  return static_cast<int>(v);
}

TimingOptions parseOptions(int argc, char** argv) {
  TimingOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--block-in-mpi") {
      o.blockInMpi = true;
      continue;
    }
    if (a == "--global-clock") {
      o.globalClock = true;
      continue;
    }
    if (i + 1 >= argc) fail("option " + a + " needs a value");
    const char* v = argv[++i];
    size_t bytes = 0;
    if (a == "--machine") o.machine = v;
    else if (a == "--op") {
      if (!parseCollective(v, &o.coll)) fail(std::string("--op ") + v + ": expected a collective");
      if (o.coll != Collective::kAllReduce && o.coll != Collective::kReduceScatter &&
          o.coll != Collective::kAllGather && o.coll != Collective::kBroadcast && o.coll != Collective::kReduce) {
        fail(std::string("--op ") + v + ": this tool checks allreduce, reducescatter, allgather, broadcast and reduce");
      }
    } else if (a == "--algo") {
      o.algos.clear();
      if (std::string(v) != "all") o.algos = splitList(v);
    } else if (a == "-b" || a == "-e") {
      if (!parseByteSize(v, &bytes)) fail(a + " " + v + ": expected bytes, with an optional K, M or G");
      (a == "-b" ? o.minBytes : o.maxBytes) = bytes;
    } else if (a == "-f") {
      if (!parseNonNegative(v, &o.factor) || o.factor <= 1) fail(std::string("-f ") + v + ": expected a factor above 1");
    } else if (a == "-n") o.iters = parseWhole(a, v, 1);
    else if (a == "-w") o.warmup = parseWhole(a, v, 0);
    else {
      fail("unknown option " + a);
    }
  }
  if (o.machine.empty()) fail("--machine FILE is required (its flat level shapes the pipelined plans)");
  if (o.minBytes > o.maxBytes) fail("-b is larger than -e");
  return o;
}

// Element i of rank r's input, in float: (r + i) mod 13, so the sum over p ranks of element i
// depends only on i mod 13 (13 sums computed once, in O(13 p)): checking an output costs O(output),
// not O(p) per element, which keeps the check affordable at 1024 simulated ranks in one process.
constexpr size_t kCycle = 13;
float inputValue(int r, size_t i) { return static_cast<float>((static_cast<size_t>(r) + i) % kCycle); }

class SumOracle {
 public:
  explicit SumOracle(int p) {
    for (size_t c = 0; c < kCycle; ++c)
      for (int r = 0; r < p; ++r) sums_[c] += inputValue(r, c);
  }
  double sum(size_t i) const { return sums_[i % kCycle]; }

 private:
  double sums_[kCycle] = {};
};

void fill(std::vector<float>& buf, size_t count, int r) {
  for (size_t i = 0; i < count; ++i) buf[i] = inputValue(r, i);
}

// The first element of `out` that differs from what the collective must leave there, or -1.
long long firstWrong(const CollectiveArgs& a, const std::vector<float>& out, const SumOracle& oracle, int me, int p) {
  auto bad = [](size_t i) { return static_cast<long long>(i); };
  switch (a.coll) {
    case Collective::kAllReduce:
    case Collective::kReduce:
      if (a.coll == Collective::kReduce && me != a.root) return -1;
      for (size_t i = 0; i < a.count; ++i)
        if (out[i] != oracle.sum(i)) return bad(i);
      return -1;
    case Collective::kReduceScatter:
      for (size_t i = 0; i < a.count; ++i)
        if (out[i] != oracle.sum(static_cast<size_t>(me) * a.count + i)) return bad(i);
      return -1;
    case Collective::kAllGather:
      for (int q = 0; q < p; ++q)
        for (size_t i = 0; i < a.count; ++i)
          if (out[static_cast<size_t>(q) * a.count + i] != inputValue(q, i)) return bad(static_cast<size_t>(q) * a.count + i);
      return -1;
    case Collective::kBroadcast:
      for (size_t i = 0; i < a.count; ++i)
        if (out[i] != inputValue(a.root, i)) return bad(i);
      return -1;
    default:
      return -1;
  }
}

// Runs one algorithm at one size: returns the slowest rank's mean seconds per call (on every rank).
double timeOne(const FlatAlgorithm& algo, const CollectiveArgs& args, const LinkCost& flat, const TimingOptions& o,
               int me, int p, int tagUpperBound) {
  Plan plan;
  plan.algorithm = algo.name;
  plan.divisor = p;
  PlanBuilder b(&plan);
  BuildOptions opt;
  opt.link = flat;
  algo.build(b, args, Group::world(p, me), opt);
  b.finish();

  const CollectiveSpec& spec = specOf(args.coll);
  auto length = [&](Length l) { return l == Length::kBlocks ? args.count * static_cast<size_t>(p) : args.count; };
  std::vector<float> send(std::max<size_t>(1, length(spec.sendLength)));
  std::vector<float> recv(std::max<size_t>(1, length(spec.recvLength)));
  std::vector<float> scratch(std::max<size_t>(1, plan.scratchCount));
  fill(send, length(spec.sendLength), me);
  Bindings bind;
  bind.send = send.data();
  bind.recv = recv.data();
  bind.scratch = scratch.data();
  bind.type = args.type;
  bind.op = args.op;

  ExecContext ctx;
  ctx.comm = MPI_COMM_WORLD;
  ctx.tagUpperBound = tagUpperBound;
  ctx.compute = &hostComputeBackend();
  ctx.collective = collectiveName(args.coll);
  ctx.blockInMpiWhenIdle = o.blockInMpi;
  Executor exec;
  auto runOnce = [&] {
    const Status s = exec.run(plan, bind, ctx);
    if (!s.ok()) fail(std::string(algo.name) + ": " + s.message());
  };
  for (int i = 0; i < o.warmup; ++i) runOnce();
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < o.iters; ++i) runOnce();
  const double t1 = MPI_Wtime();
  const long long wrong = firstWrong(args, recv, SumOracle(p), me, p);
  long long anyWrong = wrong;
  MPI_Allreduce(&wrong, &anyWrong, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (anyWrong >= 0) {
    if (wrong >= 0) {
      std::fprintf(stderr, "strata-flat-timing: %s %s at %zu elements: rank %d element %lld is wrong\n", algo.name,
                   collectiveName(args.coll), args.count, me, wrong);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fail("wrong result");
  }
  // With one clock for all ranks (a simulator's), from the last rank's start to the last rank's
  // end: the ranks leave the barrier at different times, and a rank that left early would count
  // its wait for the others. Otherwise each rank's own clock, the slowest rank's time.
  const double times[2] = {o.globalClock ? t0 : 0.0, o.globalClock ? t1 : t1 - t0};
  double last[2] = {0, 0};
  MPI_Allreduce(times, last, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return (last[1] - last[0]) / o.iters;
}

int run(int argc, char** argv) {
  int p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const TimingOptions o = parseOptions(argc, argv);
  Machine m;
  const Status loaded = loadMachine(o.machine, &m);
  if (!loaded.ok()) fail(loaded.message());
  int* ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  const int tagUpperBound = flag != 0 && ub != nullptr ? *ub : 32767;
  for (const std::string& name : o.algos) {
    if (findFlatAlgorithm(o.coll, name) == nullptr) fail("--algo " + name + ": no flat " + collectiveName(o.coll) + " of that name");
  }
  if (gRank == 0) {
    std::printf("# strata-flat-timing: %s on %d ranks (one per node), float sum, flat level of %s\n",
                collectiveName(o.coll), p, o.machine.c_str());
    std::printf("# %12s  %-24s %14s %6s\n", "size (B)", "algorithm", "time (us)", "check");
  }
  for (double b = static_cast<double>(o.minBytes); b <= static_cast<double>(o.maxBytes) * 1.0000001; b *= o.factor) {
    const size_t bytes = static_cast<size_t>(std::llround(b));
    const CollectiveArgs args = sweepCall(o.coll, strataFloat32, strataSum, bytes, p);
    const LinkCost flat = m.forCall(args).formulaCosts().flat;  // as strata-model builds its plans
    for (const FlatAlgorithm* algo : flatAlgorithmsFor(o.coll)) {
      const bool named = std::find(o.algos.begin(), o.algos.end(), algo->name) != o.algos.end();
      if (!o.algos.empty() && !named) continue;
      const std::string why = algo->whyUnsupported(args, p);
      if (!why.empty()) {
        if (gRank == 0 && named) std::printf("  %12zu  %-24s %14s %6s  (%s)\n", bytes, algo->name, "-", "-", why.c_str());
        continue;
      }
      const double seconds = timeOne(*algo, args, flat, o, gRank, p, tagUpperBound);
      if (gRank == 0) std::printf("  %12zu  %-24s %14.3f %6s\n", bytes, algo->name, seconds * 1e6, "ok");
    }
    if (gRank == 0) std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace strata::perf

// SMPI loads the program as a library and looks main up by name: it must be exported (the build
// hides every other symbol).
__attribute__((visibility("default"))) int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = strata::perf::run(argc, argv);
  MPI_Finalize();
  return rc;
}
