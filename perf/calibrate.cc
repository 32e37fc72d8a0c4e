// strata-perf --calibrate FILE: measures the cost parameters of the machine's levels and writes the
// file the library reads (STRATA_TOPO_FILE).
//
// Each level is measured the way the compositions use it, every instance at once: the node level on
// every node team together (node allgather and node reduce-scatter), the lane level on every lane
// together (flat ring allgather and ring reduce-scatter between the nodes), the flat level on the
// whole communicator (the same ring algorithms). The parameters are then fitted to the very cost
// formulas the tuner evaluates: every formula is linear in (alpha, beta, gamma), so its coefficients
// come from evaluating it with unit parameters; beta and gamma per size make the level's curve over
// the working set, alpha comes from the small sizes, and per size too where a ring and recursive
// doubling and halving (p - 1 steps against log2 p) tell it from beta (perf/calibration_fit.h). Where the host's
// processes outnumber its cores, the levels are also measured alone (one lane, one pair of ranks,
// each node's root reducing) while the others wait, and on 2 ranks the flat level with one rank
// receiving: what a leader composition's lanes, a tree's first round or a node reduce's root see
// (kernels/plan/cost.h, HostShare). Last, every busy sample is priced again by the tuner from the
// fitted costs, as the file holds them: the largest difference from the fit's own price is printed,
// and one over 1% is named as an error (the fit and the tuner pricing a call's parts differently).
#include "perf/calibrate.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "inter_node/algorithms/algorithm.h"
#include "perf/calibration_fit.h"
#include "perf/collective_descriptors.h"
#include "src/core/introspection.h"
#include "src/tuning/cost_model.h"
#include "src/tuning/tuner.h"

namespace strata::perf {
namespace {

constexpr size_t kMaxBytes = 64 << 20;  // the largest size measured (the larger buffer of a call)

// The flat level's costs `unit`, carrying a copy within a rank of `copy` seconds per byte: the
// price every level's copies take (LevelCosts::forWorkingSet), so a count of them can be set apart.
LinkCost withCopyCost(LinkCost unit, double copy) {
  unit.curve = BandwidthCurve::of({{1, unit.beta, unit.gamma, -1, copy}});
  return unit;
}

// The forced candidate's prediction with the level's parameters set to `unit` (the other levels 0)
// and its copies within a rank free: the level's fit leaves them out (Sample::copyBytes).
double predict(strataComm_t comm, const CollectiveArgs& args, const std::string& algo, Level level, const LinkCost& unit) {
  LevelCosts costs;
  costs.flat = costs.node = costs.lane = LinkCost{0, 0, 0};
  (level == Level::kNode ? costs.node : level == Level::kLane ? costs.lane : costs.flat) = unit;
  costs.flat = withCopyCost(costs.flat, 0);
  for (const Candidate& cand : tools::candidatesUnder(comm, args, costs)) {
    if (cand.name == algo) return cand.predictedSeconds;
  }
  return -1;
}

// The bytes the forced candidate's formula copies within a rank, at any level (an allgather's own
// block; on one node, a full-lane composition's lane of one member): its prediction with a copy
// costing 1 and everything else 0.
double predictCopyBytes(strataComm_t comm, const CollectiveArgs& args, const std::string& algo) {
  LevelCosts costs;
  costs.flat = costs.node = costs.lane = LinkCost{0, 0, 0};
  costs.flat = withCopyCost(costs.flat, 1);
  for (const Candidate& cand : tools::candidatesUnder(comm, args, costs)) {
    if (cand.name == algo) return cand.predictedSeconds;
  }
  return 0;
}

// A timed call, to be priced again by the tuner from the file written (Sample::call).
struct TimedCall {
  strataComm_t comm;
  CollectiveArgs args;
  std::string algo;
  int hostProcesses;  // the sample's working set counts them (the whole job's on the host)
};
std::vector<TimedCall>& timedCalls() {
  static std::vector<TimedCall> calls;
  return calls;
}

// One pair of buffers (0: send, 1: receive) for every measurement, touched once: fresh
// allocations each time measured page faults, and buffers that moved between sizes measured their
// placement.
std::vector<float>& buffer(int which) {
  static std::vector<float> send(kMaxBytes / sizeof(float), 0.5f), recv(kMaxBytes / sizeof(float), 0.0f);
  return which == 0 ? send : recv;
}

// `call` timed `iters` times after `warmup` calls, each after `prepare` (untimed) and a job-wide
// barrier: the median over the iterations of the slowest rank's time (every rank of the job calls
// this at once). The timing's own barriers and reduction go through MPI's profiling names, so an
// MPI face preloaded into this process does not answer for them.
template <typename Call, typename Prepare>
double medianOfSlowest(Call&& call, int iters, int warmup, Prepare&& prepare) {
  for (int w = 0; w < warmup; ++w) prepare(), call();
  std::vector<double> times(static_cast<size_t>(iters));
  for (int it = 0; it < iters; ++it) {
    prepare();
    PMPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    call();
    times[static_cast<size_t>(it)] = MPI_Wtime() - t0;
  }
  std::vector<double> slowest(times.size());
  PMPI_Allreduce(times.data(), slowest.data(), iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  std::sort(slowest.begin(), slowest.end());
  return slowest[slowest.size() / 2];
}

// The largest difference between the tuner's price of a level's busy samples, with every level's
// fitted costs as the file holds them, and the fit's own price of them; printed, and where it is
// over 1% named as an error: the tuner would not price the calls calibration timed as it fitted
// them (a copy priced at one level by the fit and at another by the tuner).
void checkPrices(const char* level, const std::vector<Sample>& samples, const LinkCost& fitted, const LevelCosts& all) {
  double worst = 0;
  std::string what;
  for (const Sample& s : samples) {
    if (s.inPlace || s.call < 0) continue;
    const TimedCall& c = timedCalls()[static_cast<size_t>(s.call)];
    double tuner = -1;
    for (const Candidate& cand : tools::candidatesUnder(c.comm, c.args, all, c.hostProcesses)) {
      if (cand.name == c.algo) tuner = cand.predictedSeconds;
    }
    const double fit = fittedPrice(s, fitted), diff = fit > 0 ? tuner / fit - 1 : 0;
    if (std::abs(diff) >= std::abs(worst)) worst = diff, what = s.what;
  }
  if (what.empty()) return;
  std::printf("#   %-5s priced again by the tuner from the file: largest difference from the fit %+.1f%% (%s)%s\n", level,
              worst * 100, what.c_str(), std::abs(worst) > 0.01 ? ": the tuner's price differs from the fit" : "");
}

// Times `algo` of collective `op` on `comm` (every rank of the job calls this at once, each on its
// own sub-communicator), medians of the slowest rank of the whole job.
// `active`: this rank takes part (the others only join the job-wide barriers, waiting there);
// `hostProcesses`: the processes of the host the sample's working set counts (the whole job's, as
// the tuner counts them, also when only some of them are busy).
// `inPlace`: the call in place (allreduce: the send buffer is the receive buffer); its sample keeps
// the out-of-place call's coefficients and working set, the tuner's key, and copies nothing
// (perf/calibration_fit.h, separateCopies).
// `aloneShare` (< 1): the sample is timed for the level alone at that share, and its formula prices
// its phases' shares itself (a node op: the root's side alone, the members' busier); its coefZero
// is the formula with the level's alone costs at nothing (perf/calibration_fit.h), the host's
// processes sharing its cores or not as `coresShared` says (HostShare::coresShared).
bool measure(strataComm_t comm, bool active, int hostProcesses, const std::string& op, const std::string& algo,
             Level level, size_t bytes, int iters, int warmup, std::vector<Sample>* out, bool inPlace = false,
             double aloneShare = 1, bool coresShared = true) {
  const int size = tools::topologyOf(comm).size;
  const CollectiveDescriptor& d = *findDescriptor(op);
  const CallShape s = d.shape(bytes, 4, size);
  const bool skip = s.count == 0 || !active;  // still joins the job-wide barriers below
  std::vector<float>& send = buffer(0);
  std::vector<float>& recv = buffer(1);
  if (s.sendElems > send.size() || s.recvElems > recv.size()) return false;
  CallArgs a;
  a.type = strataFloat32;
  a.op = strataSum;
  a.inPlace = inPlace;
  Buffers buffers;
  buffers.send = send.data();
  buffers.recv = recv.data();
  const void* sendPtr = nullptr;
  void* recvPtr = nullptr;
  callPointers(d, s, a, tools::topologyOf(comm).rank, sizeof(float), buffers, &sendPtr, &recvPtr);
  bool ok = true;
  const double seconds = medianOfSlowest([&] { ok &= skip || runStrata(d, s, a, sendPtr, recvPtr, comm, nullptr) == strataSuccess; },
                                         iters, warmup, [] {});
  int allOk = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!allOk) return false;
  if (skip) return true;  // the busy ranks' samples are the same job-wide medians
  CollectiveArgs args;
  args.coll = d.coll;
  args.count = s.count;
  args.type = strataFloat32;
  args.op = strataSum;
  args.commSize = size;
  Sample smp;
  smp.seconds = seconds;
  smp.bytes = s.reportedBytes;
  smp.workingSet = hostProcesses * rankWorkingSetBytes(args);
  smp.coef = {predict(comm, args, algo, level, {1, 0, 0}), predict(comm, args, algo, level, {0, 1, 0}),
              predict(comm, args, algo, level, {0, 0, 1})};
  if (aloneShare < 1) {
    auto aloneFree = [aloneShare, coresShared](LinkCost unit) {
      unit.alone.share = aloneShare;
      unit.alone.coresShared = coresShared;
      unit.alone.alpha = 0;
      unit.alone.ratios = BandwidthCurve::of({{1, 0, 0}});
      return unit;
    };
    smp.coefZero = {predict(comm, args, algo, level, aloneFree({1, 0, 0})), predict(comm, args, algo, level, aloneFree({0, 1, 0})),
                    predict(comm, args, algo, level, aloneFree({0, 0, 1}))};
  }
  smp.what = op + " " + algo + (inPlace ? " in place " : " ") + std::to_string(s.reportedBytes) + " B";
  smp.inPlace = inPlace;
  if (!inPlace) smp.copyBytes = predictCopyBytes(comm, args, algo);
  if (smp.coef[0] < 0) return false;
  args.inPlace = inPlace;
  smp.call = static_cast<int>(timedCalls().size());
  timedCalls().push_back({comm, args, algo, hostProcesses});
  if (const FlatAlgorithm* f = level == Level::kFlat ? findFlatAlgorithm(d.coll, algo) : nullptr) {
    smp.rewritten = flatRewrittenBytes(*f, args, size, LinkCost{});
  }
  out->push_back(smp);
  return true;
}

// The copy within a rank of the allgather of `bytes` on `comm` just measured (the last of `out`,
// where this rank timed it: `before` is out's size before that call), timed on its own: every rank
// of the job copies that call's own block from its send buffer into its receive buffer at once, as
// the call does first (Sample::copyOnly, at the call's working set). Before each copy, untimed,
// the rank writes the rest of its receive buffer, as the call's messages did after the copy of the
// call before: the copy repeated on its own buffers alone kept more of them in the caches (2 ranks
// on the Zen 5 VM, the 8 MiB of a 16 MiB allgather: 49 GB/s, 41 with the rest written). Timed to a
// closing barrier, less that barrier timed alone: the time until every process of the host has
// copied, as the call waits for it. Where the processes outnumber the cores they take turns, and
// one process's own copy, timed from its own start, ran as fast as if it had a core (8 ranks on 2
// cores: 51-100 GB/s, which left the node's full-lane samples the copies' turns and priced the
// 2x4 leader broadcast at 16 MiB 26% over). Every rank of the job calls this.
bool measureCopy(strataComm_t comm, size_t bytes, std::vector<Sample>* out, size_t before, int iters, int warmup) {
  const Sample* call = out->size() > before ? &out->back() : nullptr;
  const size_t copyBytes = call != nullptr && call->copyBytes > 0 ? static_cast<size_t>(call->copyBytes) : 0;
  const CallShape s = findDescriptor("allgather")->shape(bytes, 4, tools::topologyOf(comm).size);
  const size_t recvBytes = std::max(s.recvElems * sizeof(float), copyBytes);
  if (recvBytes > kMaxBytes) return false;
  char* from = reinterpret_cast<char*>(buffer(0).data());
  char* to = reinterpret_cast<char*>(buffer(1).data());
  auto writeRest = [&] { std::memset(to + copyBytes, 0, copyBytes > 0 ? recvBytes - copyBytes : 0); };
  const double copied = medianOfSlowest(
      [&] {
        std::memcpy(to, from, copyBytes);
        PMPI_Barrier(MPI_COMM_WORLD);
      },
      iters, warmup, writeRest);
  const double barrier = medianOfSlowest([] { PMPI_Barrier(MPI_COMM_WORLD); }, iters, warmup, writeRest);
  const double seconds = copied - barrier;
  if (copyBytes == 0) return true;
  Sample c = *call;
  c.coef = {0, 0, 0};
  c.seconds = seconds;
  c.what = "copy within a rank, " + std::to_string(copyBytes) + " B of " + call->what;
  c.copyOnly = true;
  c.callSeconds = call->seconds;
  c.call = -1;
  out->push_back(c);
  return true;
}

// The MPI library's own collective `op` on MPI_COMM_WORLD through its profiling names (so an MPI
// face preloaded into this process does not answer for it): the median of the slowest rank, keyed
// by the call's bytes as the tuner computes them (callBytes). False when MPI cannot run it.
bool measureNative(const std::string& op, size_t bytes, int iters, int warmup, int rank, int size,
                   std::vector<std::pair<size_t, double>>* out) {
  const CollectiveDescriptor& d = *findDescriptor(op);
  const CallShape s = d.shape(bytes, 4, size);
  std::vector<float>& send = buffer(0);
  std::vector<float>& recv = buffer(1);
  CallArgs a;
  a.type = strataFloat32;
  a.op = strataSum;
  std::string why;
  if (!mpiSupports(d, a, &why) || s.sendElems > send.size() || s.recvElems > recv.size()) return false;
  int rc = MPI_SUCCESS;
  const double seconds = medianOfSlowest(
      [&] { rc |= runMpi(d, s, a, send.data(), recv.data(), MPI_COMM_WORLD, rank, 4, MpiNames::kProfiling); }, iters,
      warmup, [] {});
  CollectiveArgs args;
  args.coll = d.coll;
  args.count = s.count;
  args.type = strataFloat32;
  args.commSize = size;
  out->push_back({static_cast<size_t>(callBytes(args)), seconds});
  return rc == MPI_SUCCESS;
}

// The collectives the tuner may hand to the MPI library, as strata-perf names them.
const char* const kNativeOps[] = {"allreduce", "broadcast", "reduce", "allgather", "reducescatter", "gather",
                                  "scatter",   "alltoall",  "scan",   "exscan",    "barrier"};

}  // namespace

int calibrate(const std::string& path, int iters, int warmup) {
  timedCalls().clear();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  strataComm_t world = nullptr;
  if (strataCommInitMpi(&world, MPI_COMM_WORLD, nullptr) != strataSuccess) {
    if (rank == 0) std::fprintf(stderr, "strata-perf --calibrate: %s\n", strataGetLastError(nullptr));
    return 1;
  }
  const Topology topo = tools::topologyOf(world);
  const int nodes = topo.numNodes();
  const int local = topo.nodeSize(topo.myNode());

  // Sub-communicators of the levels: one node each (the node team), one rank per node (the lanes),
  // the world with one rank per node (flat algorithms only), and a pair of ranks (rank 0 and the
  // middle one, on another node where there are several) for the flat level alone.
  MPI_Comm nodeMpi = MPI_COMM_NULL, laneMpi = MPI_COMM_NULL, pairMpi = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, topo.myNode(), rank, &nodeMpi);
  MPI_Comm_split(MPI_COMM_WORLD, topo.myLocalRank(), rank, &laneMpi);
  const bool inPair = rank == 0 || rank == size / 2;
  MPI_Comm_split(MPI_COMM_WORLD, inPair ? 0 : 1, rank, &pairMpi);
  // The measured algorithms are forced: the formulas fitted are theirs.
  auto init = [&](MPI_Comm mpi, int ranksPerNode, const char* algorithms, strataComm_t* out) {
    strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
    cfg.ranksPerNode = ranksPerNode;
    cfg.algorithm = algorithms;
    const bool ok = strataCommInitMpi(out, mpi, &cfg) == strataSuccess;
    int all = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all && rank == 0) std::fprintf(stderr, "strata-perf --calibrate: %s\n", strataGetLastError(nullptr));
    return all == 1;
  };
  // Beside each ring, on more than 2 ranks, recursive doubling and halving: log2 p steps for the
  // ring's p - 1 and the same bytes, so a size's four calls tell its alpha from its beta (on 2
  // ranks both take one step: alpha stays the small sizes').
  const char* const kRings = "allgather=ring,reducescatter=ring";
  // Where each process has a core: recursive doubling's allreduce out of place and in place, the
  // same messages, but in place each rank reduces into the buffer its peer just read (out of place
  // it sends only from the send buffer, which it never writes): the difference, per byte the plans
  // count (kernels/plan/peer_reads.h), is the level's rewrite cost. Where processes share cores the
  // two ran alike within the noise (2x4 on the development VM: in place 164, 633 and 2351 us at
  // 64 KiB, 256 KiB and 1 MiB, out of place 181, 651 and 2433), and the level keeps none.
  const char* const kFlatAlgorithms = "allgather=ring,reducescatter=ring,allreduce=recursive_doubling";
  const char* const kLogSteps = "allgather=recursive_doubling,reducescatter=recursive_halving";
  const bool flatLog = size > 2, laneLog = nodes > 2;
  strataComm_t nodeComm = nullptr, laneComm = nullptr, flatComm = nullptr, pairComm = nullptr;
  strataComm_t laneLogComm = nullptr, flatLogComm = nullptr;
  if (!init(nodeMpi, local, "allgather=fulllane,reducescatter=fulllane,reduce=leader", &nodeComm) ||
      !init(laneMpi, 1, kRings, &laneComm) || !init(MPI_COMM_WORLD, 1, kFlatAlgorithms, &flatComm) ||
      (laneLog && !init(laneMpi, 1, kLogSteps, &laneLogComm)) ||
      (flatLog && !init(MPI_COMM_WORLD, 1, kLogSteps, &flatLogComm)) ||
      !init(pairMpi, 1, "allgather=ring,reducescatter=ring,broadcast=binomial", &pairComm)) {
    return 1;
  }
  const bool haveNodeTeam = tools::hasNodeTeam(nodeComm);
  int allHaveTeams = haveNodeTeam ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &allHaveTeams, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  // Working sets are the call's with every process of the host busy, alone too (the tuner's key).
  const int hostProcesses = tools::hostProcessesOf(world);
  // Alone, where the host's processes outnumber its cores (there a phase that keeps fewer of them
  // busy runs faster): one lane of the node's `local` (the lane of local rank 0), one pair of the
  // `size` ranks, the node's root reducing its members' inputs (a node reduce, every node at once:
  // one member of each busy for most of it); only where that is not the whole level already. On 2
  // ranks, the pair is the whole level: there one rank receives a binomial broadcast (one message,
  // copied by its receiver) while the other waits, since one copy alone outruns the two of an
  // exchange even with a core each (2x per byte on the development VM). For the same reason the
  // node's root reduces alone there too: the first and last rounds of a root-centred node step run
  // one side alone (kernels/plan/node_costs.cc; a 2-rank node broadcast of one round at 64 KiB took
  // 10 us, 18 priced at the busy costs).
  int oversubscribed = hostProcesses > static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &oversubscribed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const bool laneAlone = oversubscribed && nodes > 1 && topo.maxNodeSize() > 1;
  const bool flatAloneOneWay = size == 2, flatAlone = (oversubscribed && size > 2) || flatAloneOneWay;
  const bool nodeAlone = allHaveTeams && topo.maxNodeSize() > 1;
  const double laneAloneShare = 1.0 / topo.maxNodeSize(), flatAloneShare = (flatAloneOneWay ? 1.0 : 2.0) / size,
               nodeAloneShare = 1.0 / topo.maxNodeSize();

  // Sizes: the latency end (alpha), and from 32 KiB up the points of the curves, 2x apart: the
  // knees of a cache are sharp (on the development VM a 2-rank allgather runs at 16 GB/s at
  // 512 KiB and at 6 GB/s at 1 MiB), and interpolating over 4x steps missed them by 2x. Per call,
  // all ranks.
  std::vector<size_t> sizes = {64, 1024, 4096};
  for (size_t bytes = 32 << 10; bytes <= kMaxBytes; bytes *= 2) sizes.push_back(bytes);
  bool ok = true;
  std::vector<Sample> node, lane, flat, nodeAlone1, laneAlone1, flatAlone1, flatRewrite, flatCopyRewrite;
  // Only where every process runs on one host: between hosts a NIC reads the buffer.
  const bool measureRewrite = !oversubscribed && size > 1 && hostProcesses == size;
  // A copy's rewrite beside it (LinkCost::copyRewrite): the Bruck allgather copies its own block into
  // the block its peer read in the call before (on 2 ranks, m/2 a rank), where the ring sends it from
  // the send buffer; the two make the same messages and, past the Bruck's rotation of the gathered
  // buffer, the same copies. Their difference, that rotation priced at the copy curve, per byte the
  // plans count (the ring timed again beside the Bruck, back to back as the reduction's pair is,
  // not a sample of the flat level's taken earlier in the size's turn): on the development VM's 2 ranks placed on two L3s, 0.04-0.08 ns a byte where a
  // reduction's rewrite cost 0.14-0.19 (working sets of 96 KiB - 3 MiB).
  strataComm_t bruckComm = nullptr;
  if (measureRewrite && !init(MPI_COMM_WORLD, 1, "allgather=bruck", &bruckComm)) return 1;
  std::map<std::string, std::vector<std::pair<size_t, double>>> native;  // op -> (bytes, seconds) of every sweep
  // Every rank runs every measurement (sub-communicators of one rank time nothing but still join
  // the job-wide barriers), so the levels are busy all at once; alone, the others wait.
  // Three sweeps, each point's result the median of its three: a drift of the machine's speed
  // during one sweep then moves one of the three, not the fit.
  for (int sweep = 0; sweep < 3; ++sweep) {
  for (size_t bytes : sizes) {
    // Each level's allgather and reduce-scatter back to back: their difference prices its gamma.
    // `allgatherInPlace`: the allgather in place, which copies nothing within a rank (the samples
    // of a level alone: their copies would be priced at the copy curve, which every process of
    // the host measured copying at once; alone, where the processes share the cores, the copy
    // runs several times faster, and 8 ranks on the 2-core VM priced a pair's 4 MiB ring
    // allgather's 2 MiB copy at 315 us where the whole call took 178, which left that size's
    // alone ratio to the reduce-scatter beside it and the allgather priced 3x its time).
    auto pair = [&](bool enabled, strataComm_t comm, bool active, const char* algo, Level level, std::vector<Sample>* out,
                    bool allgatherInPlace = false) {
      if (!enabled) return;
      for (const char* op : {"allgather", "reducescatter"}) {
        const bool inPlace = allgatherInPlace && std::string(op) == "allgather";
        ok &= measure(comm, active, hostProcesses, op, algo, level, bytes, iters, warmup, out, inPlace);
      }
    };
    // A ring's pair, the out-of-place allgather's copy of its own block timed on its own (it
    // prices the level's copies), the allgather in place, and on more than 2 ranks recursive
    // doubling's and halving's beside them.
    auto stepPairs = [&](bool enabled, bool logToo, strataComm_t rings, strataComm_t logs, std::vector<Sample>* out) {
      const size_t before = out->size();
      if (enabled) ok &= measure(rings, true, hostProcesses, "allgather", "ring", Level::kFlat, bytes, iters, warmup, out);
      if (enabled && bytes >= (32 << 10)) ok &= measureCopy(rings, bytes, out, before, iters, warmup);
      if (enabled) ok &= measure(rings, true, hostProcesses, "reducescatter", "ring", Level::kFlat, bytes, iters, warmup, out);
      if (enabled) ok &= measure(rings, true, hostProcesses, "allgather", "ring", Level::kFlat, bytes, iters, warmup, out, true);
      if (!enabled || !logToo) return;
      ok &= measure(logs, true, hostProcesses, "allgather", "recursive_doubling", Level::kFlat, bytes, iters, warmup, out);
      ok &= measure(logs, true, hostProcesses, "reducescatter", "recursive_halving", Level::kFlat, bytes, iters, warmup, out);
    };
    pair(allHaveTeams, nodeComm, true, "fulllane", Level::kNode, &node);
    stepPairs(nodes > 1, laneLog, laneComm, laneLogComm, &lane);
    stepPairs(true, flatLog, flatComm, flatLogComm, &flat);
    if (measureRewrite && bytes >= (32 << 10)) {
      for (bool inPlace : {false, true}) {
        ok &= measure(flatComm, true, hostProcesses, "allreduce", "recursive_doubling", Level::kFlat, bytes, iters,
                      warmup, &flatRewrite, inPlace);
      }
      ok &= measure(flatComm, true, hostProcesses, "allgather", "ring", Level::kFlat, bytes, iters, warmup,
                    &flatCopyRewrite);
      ok &= measure(bruckComm, true, hostProcesses, "allgather", "bruck", Level::kFlat, bytes, iters, warmup,
                    &flatCopyRewrite);
    }
    if (nodeAlone) {
      ok &= measure(nodeComm, true, hostProcesses, "reduce", "leader", Level::kNode, bytes, iters, warmup, &nodeAlone1,
                    false, nodeAloneShare, oversubscribed != 0);
    }
    pair(laneAlone, laneComm, topo.myLocalRank() == 0, "ring", Level::kFlat, &laneAlone1, true);
    if (flatAloneOneWay) {
      ok &= measure(pairComm, true, hostProcesses, "broadcast", "binomial", Level::kFlat, bytes, iters, warmup, &flatAlone1);
    } else {
      pair(flatAlone, pairComm, inPair, "ring", Level::kFlat, &flatAlone1, true);
    }
  }
  // The MPI library's own collectives ("native"), at sizes a factor 8 apart up to 16 MiB (the
  // tuner extends the last stretch beyond).
  for (size_t bytes = 8; bytes <= (size_t{16} << 20); bytes *= 8) {
    for (const char* op : kNativeOps) {
      if (std::string(op) == "barrier" && bytes != 8) continue;
      measureNative(op, bytes, iters, warmup, rank, size, &native[op]);
    }
  }
  }
  auto medians = [](std::vector<Sample>& v) {
    std::vector<Sample> out;
    for (const Sample& s : v) {
      if (std::any_of(out.begin(), out.end(), [&](const Sample& o) { return o.what == s.what; })) continue;
      std::vector<double> t, call;
      for (const Sample& o : v) {
        if (o.what == s.what) t.push_back(o.seconds), call.push_back(o.callSeconds);
      }
      std::sort(t.begin(), t.end());
      std::sort(call.begin(), call.end());
      out.push_back(s);
      out.back().seconds = t[t.size() / 2];
      out.back().callSeconds = call[call.size() / 2];
    }
    v = std::move(out);
  };
  // Samples of a one-member node or one-node lane cost nothing in the model: leave them out.
  auto informative = [](std::vector<Sample>& v) {
    v.erase(std::remove_if(v.begin(), v.end(),
                           [](const Sample& s) { return !s.copyOnly && s.coef[0] + s.coef[1] + s.coef[2] <= 0; }),
            v.end());
  };
  for (std::vector<Sample>* v :
       {&node, &lane, &flat, &nodeAlone1, &laneAlone1, &flatAlone1, &flatRewrite, &flatCopyRewrite}) {
    medians(*v);
    informative(*v);
  }

  CostParams params = defaultCostParams();
  LinkCost flatFit = params.flat, nodeFit = params.node, laneFit;
  // The copies within a rank (an allgather's own block, out of place: on 2 ranks as much as its
  // message) leave the flat and lane levels' beta and become their copy curves: fitted into beta,
  // every algorithm without the copy paid it (a 2-rank ring allreduce's allgather phase sends in
  // place, and at 16 MiB was priced 40% over).
  const std::map<double, double> flatCopies = separateCopies(&flat), laneCopies = separateCopies(&lane);
  if (!flat.empty()) flatFit = fitLevel(flat);
  attachCopies(&flatFit, flatCopies);
  if (lane.empty()) {
    laneFit = flatFit;
  } else {
    laneFit = fitLevel(lane);
    attachCopies(&laneFit, laneCopies);
  }
  // Every level's samples pay their copies at the price the tuner puts on them
  // (LevelCosts::forWorkingSet): a full-lane composition on one node copies each rank's own block
  // through its lane of one member, at the lane level's copy curve (the flat level's on one node).
  // Fitted into the node's beta (2 ranks: 8 MiB of 24 at 16 MiB), the node steps paid it again
  // beside that price (2-rank full-lane allgather at 16 MiB priced 2208 us where calibration
  // measured the same call at 1766). Alone, the same copies as busy (LinkCost::atShare keeps the
  // copy's cost).
  // `level`: the costs that price the samples' copies, as the flat level of a one-rank-per-node
  // sample (the lanes' and pairs' flat algorithms) or as the lane of a node sample.
  auto payCopies = [](std::vector<Sample>* v, const LinkCost& flat, const LinkCost& level) {
    for (Sample& s : *v) {
      if (!(s.copyBytes > 0)) continue;
      s.fixed = s.copyBytes * LevelCosts{flat, LinkCost{0, 0, 0}, level}.forWorkingSet(s.workingSet).lane.copy;
      s.seconds -= s.fixed;
    }
  };
  payCopies(&node, flatFit, laneFit);
  if (!node.empty()) nodeFit = fitLevel(node);
  payCopies(&nodeAlone1, flatFit, laneFit);
  payCopies(&flatAlone1, flatFit, flatFit);
  payCopies(&laneAlone1, laneFit, laneFit);
  flatFit.alone = fitAlone(flatAlone1, flatFit, flatAloneShare);
  nodeFit.alone = fitAlone(nodeAlone1, nodeFit, nodeAloneShare);
  laneFit.alone = lane.empty() ? flatFit.alone : fitAlone(laneAlone1, laneFit, laneAloneShare);
  for (LinkCost* f : {&flatFit, &nodeFit, &laneFit}) f->alone.coresShared = oversubscribed != 0;
  // The rewrite cost where measured; the lanes share it where they run between processes of one
  // host, as the flat level's pairs do.
  // The copy's pair pays its copies within a rank first (the Bruck allgather's rotation of the
  // gathered buffer beside both algorithms' own block), at the copy curve fitted above.
  payCopies(&flatCopyRewrite, flatFit, flatFit);
  const BandwidthCurve rewrite = fitRewrite(flatRewrite, Rewrite::kReduction),
                       copyRewrite = fitRewrite(flatCopyRewrite, Rewrite::kCopy);
  for (LinkCost* f : {&flatFit, &laneFit}) {
    setRewrite(rewrite, f, Rewrite::kReduction);
    setRewrite(copyRewrite, f, Rewrite::kCopy);
  }
  // Each point of a curve was fitted from its own size alone: one a moved host disturbed gives way
  // to its neighbours (smoothCurve).
  for (LinkCost* f : {&flatFit, &nodeFit, &laneFit}) {
    smoothCurve(&f->curve);
    smoothCurve(&f->alone.ratios);
  }
  // Rank 0's fit for everyone: the samples are job-wide medians already, but the node and lane
  // samples of different nodes differ when the nodes' sizes do.
  static_assert(std::is_trivially_copyable_v<LinkCost>, "a level's fit travels as bytes");
  auto agree = [](LinkCost* f) { MPI_Bcast(f, sizeof(LinkCost), MPI_BYTE, 0, MPI_COMM_WORLD); };
  agree(&flatFit);
  agree(&nodeFit);
  agree(&laneFit);
  params.flat = flatFit;
  params.node = nodeFit;
  params.lane = laneFit;
  // Native: the median over the sweeps at each size (job-wide medians already, the same on every rank).
  params.native.ranks = size;
  for (auto& [op, samples] : native) {
    std::map<size_t, std::vector<double>> bySize;
    for (const auto& [bytes, seconds] : samples) bySize[bytes].push_back(seconds);
    auto& points = params.native.points[findDescriptor(op)->coll];
    for (auto& [bytes, t] : bySize) {
      std::sort(t.begin(), t.end());
      points.push_back({static_cast<double>(bytes), t[t.size() / 2]});
    }
  }
  int allOk = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int rc = 0;
  if (rank == 0) {
    std::printf("# calibration on %d ranks, nodes %s%s (%d iterations per point, medians of the slowest rank)\n", size,
                topo.shapeText().c_str(), topo.virtualNodes ? " (virtual)" : "", iters);
    if (!allOk) std::printf("#   some measurements failed: their levels keep the defaults\n");
    const LevelCosts all{params.flat, params.node, params.lane};
    report("flat", flatFit, flat);
    checkPrices("flat", flat, flatFit, all);
    if (measureRewrite) reportRewrite("flat", flatFit, flatRewrite, flatCopyRewrite);
    if (flatAlone) reportAlone("flat", flatFit, flatAlone1);
    if (allHaveTeams) {
      report("node", nodeFit, node);
      checkPrices("node", node, nodeFit, all);
    } else {
      std::printf("#   node  no node team: defaults kept\n");
    }
    if (nodeAlone) reportAlone("node", nodeFit, nodeAlone1);
    if (nodes > 1) {
      report("lane", laneFit, lane);
      // The lanes' samples are flat algorithms on one rank per node, fitted as the lane level.
      checkPrices("lane", lane, laneFit, LevelCosts{params.lane, params.node, params.lane});
    } else {
      std::printf("#   lane  one node: lanes take the flat parameters\n");
    }
    if (laneAlone) reportAlone("lane", laneFit, laneAlone1);
    std::printf("#   native: the MPI library's own collectives (median us at each size; the tuner interpolates)\n");
    for (const auto& [coll, points] : params.native.points) {
      std::string row;
      for (const auto& [bytes, seconds] : points) row += strformat("  %.0f B %.2f", bytes, seconds * 1e6);
      std::printf("#         %-14s%s\n", collectiveName(coll), row.c_str());
    }
    const Status s = saveCostParams(path, params);
    if (!s.ok()) {
      std::fprintf(stderr, "strata-perf --calibrate: %s\n", s.message().c_str());
      rc = 1;
    } else if (std::FILE* f = std::fopen(path.c_str(), "a"); f == nullptr) {
      std::fprintf(stderr, "strata-perf --calibrate: cannot append to %s\n", path.c_str());
      rc = 1;
    } else {
      // The machine it was measured on, for strata-model (perf/machine_model.h; the library skips
      // these keys): the NICs are not measured, so none is modelled.
      std::fprintf(f,
                   "# the machine measured, for strata-model: %s\nmachine.nodes %d\nmachine.ranks_per_node %d\n"
                   "machine.ranks_per_host %d\n",
                   topo.shapeText().c_str(), nodes, topo.maxNodeSize(), tools::hostProcessesOf(world));
      std::fclose(f);
      std::printf("# cost parameters written to %s (use: STRATA_TOPO_FILE=%s, or strata-model --machine %s)\n#\n",
                  path.c_str(), path.c_str(), path.c_str());
    }
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  strataCommDestroy(nodeComm);
  strataCommDestroy(laneComm);
  strataCommDestroy(flatComm);
  if (bruckComm) strataCommDestroy(bruckComm);
  if (laneLogComm) strataCommDestroy(laneLogComm);
  if (flatLogComm) strataCommDestroy(flatLogComm);
  strataCommDestroy(pairComm);
  strataCommDestroy(world);
  MPI_Comm_free(&nodeMpi);
  MPI_Comm_free(&laneMpi);
  MPI_Comm_free(&pairMpi);
  return rc;
}

}  // namespace strata::perf
