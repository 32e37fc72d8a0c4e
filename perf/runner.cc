#include "perf/runner.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <utility>

#include "kernels/common/datatype.h"
#include "perf/device_support.h"
#include "tests/reference/reference.h"
#include "src/core/introspection.h"

namespace strata::perf {
namespace {

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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double medianOfSlowest(std::vector<double>& local) {
  std::vector<double> slowest(local.size());
  MPI_Allreduce(local.data(), slowest.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return median(std::move(slowest));
}

}  // namespace

std::vector<Row> medianOfPasses(const std::vector<Row>& rows, int passes) {
  if (passes <= 1 || rows.size() % static_cast<size_t>(passes) != 0) return rows;
  const size_t n = rows.size() / static_cast<size_t>(passes);
  std::vector<Row> out(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n));
  for (size_t i = 0; i < n; ++i) {
    Row& r = out[i];
    for (int ip = 0; ip < 2; ++ip) {
      r.passTimes[ip].clear();
      long long wrong = 0;
      for (int k = 0; k < passes; ++k) {
        const Row& pass = rows[static_cast<size_t>(k) * n + i];
        r.passTimes[ip].push_back(pass.time[ip]);
        wrong += pass.wrong[ip];
      }
      const double t = median(r.passTimes[ip]);
      // algbw and busbw are bytes over time: rescaled from the first pass's to the median time.
      const double scale = t > 0 ? r.time[ip] / t : 0;
      r.algbw[ip] *= scale;
      r.busbw[ip] *= scale;
      r.time[ip] = t;
      r.wrong[ip] = wrong;
    }
  }
  return out;
}

// Every variant at one size. The timed iterations interleave the variants (A B C A B C ...), so
// each ratio compares calls made microseconds apart: this machine's speed drifts by 2x over
// seconds, and blocks of one variant after another would measure the drift.
std::vector<Row> Runner::measureSize(const std::vector<std::pair<std::string, std::string>>& variants,
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
    row.algo = row.requested = variants[v].second;
    row.op = d.name;
    row.bytes = s.reportedBytes;
    row.count = s.reportedCount;
    row.type = dataTypeName(o.type);
    row.redop = d.hasOp ? redOpName(o.op) : "none";
    row.root = d.hasRoot ? o.root : -1;
    if (isMpiImpl(row.impl) && !mpiSupports(d, a, &row.why)) row.supported = false;
    if (row.impl == "nccl") {
      if (!ncclWhy.empty()) {
        row.supported = false;
        row.why = ncclWhy;
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
      // The result comes back from where MPI left it: an in-place reduce-scatter's at the start of
      // the send buffer, whose device twin is where the check looks for it too.
      if (a.inPlace && mpiMovesInPlaceResult(d)) copyToDevice(const_cast<void*>(send), hs, s.recvElems * es);
      else copyToDevice(recv, hr, s.recvElems * es);
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
    for (size_t v = 0; !o.sequential && v < nv; ++v) {
      for (int w = 0; rows[v].supported && w < o.warmup; ++w) call(v);
    }
    // On the CUDA simulator: what one call moves, on the busiest rank.
    for (size_t v = 0; v < nv && device && ip == 0; ++v) {
      if (!rows[v].supported || variants[v].first != "strata") continue;
      MPI_Barrier(MPI_COMM_WORLD);
      resetDeviceCounts();
      call(v);
      DeviceCounts c;
      const int have = deviceCounts(&c) ? 1 : 0;
      int all = 0;
      MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      if (all == 0) continue;
      double mine[4] = {c.linkBytes, c.localBytes, c.hostBytes, c.launches}, most[4];
      MPI_Allreduce(mine, most, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      rows[v].counted = true;
      rows[v].linkBytes = most[0];
      rows[v].localBytes = most[1];
      rows[v].hostBytes = most[2];
      rows[v].launches = most[3];
      tools::PeerCallInfo info;
      if (tools::lastPeerCall(comms[v], &info)) {
        rows[v].peer = true;
        rows[v].barriers = info.barriers;
        rows[v].algo = info.algorithm;
      }
    }
    std::vector<std::vector<double>> times(nv, std::vector<double>(static_cast<size_t>(o.iters)));
    std::vector<std::vector<PhaseTimes>> phaseRuns(nv);
    auto timeOne = [&](size_t v, int it) {
      const bool timePhases = o.phases && variants[v].first == "strata" && ip == 0;
      PhaseTimes pt;
      strataComm_t c = comms[v];
      MPI_Barrier(MPI_COMM_WORLD);
      if (timePhases) tools::recordPhases(c, &pt);
      const double t0 = MPI_Wtime();
      call(v);
      times[v][static_cast<size_t>(it)] = MPI_Wtime() - t0;
      if (timePhases) {
        tools::recordPhases(c, nullptr);
        phaseRuns[v].push_back(std::move(pt));
      }
    };
    // Interleaved: iteration by iteration, so variants compare calls made microseconds apart.
    // Sequential: each variant's iterations in one block after its own warm-up (its calls follow
    // its own, as an application's repeated calls do and as calibration measures).
    for (int it = 0; !o.sequential && it < o.iters; ++it) {
      for (size_t v = 0; v < nv; ++v) {
        if (rows[v].supported) timeOne(v, it);
      }
    }
    for (size_t v = 0; o.sequential && v < nv; ++v) {
      for (int w = 0; rows[v].supported && w < o.warmup; ++w) call(v);
      for (int it = 0; rows[v].supported && it < o.iters; ++it) timeOne(v, it);
    }
    for (size_t v = 0; v < nv; ++v) {
      if (!rows[v].supported) continue;
      if (!phaseRuns[v].empty()) {
        rows[v].phases = phaseMedians(phaseRuns[v]);
        if (device) rows[v].stages = medianStages(phaseRuns[v]);
      }
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
    if (row.peer) continue;  // a single-kernel peer collective: no plan (printDeviceModel prices it)
    // Out of place, then in place as this rank called it (a rooted call's root alone is in place):
    // the tuner's price of each call as made.
    for (int ip = 0; ip < 2; ++ip) {
      args.inPlace = ip == 1 && specOf(d.coll).inPlace != InPlace::kNever && (!d.hasRoot || gRank == a.root);
      tools::PlannedCall plan;
      if (tools::planOf(comms[v], args, &plan).ok()) {
        row.modelUs[ip] = plan.predictedSeconds * 1e6;
        if (ip == 0) row.algo = plan.algorithm;
      }
    }
  }
  return rows;
}

// Every implementation and algorithm at one size, then the next size: the ratios compare
// measurements taken moments apart, not minutes (machines drift).
void Runner::run(const std::vector<std::pair<std::string, std::string>>& variants, const CollectiveDescriptor& d) {
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

}  // namespace strata::perf
