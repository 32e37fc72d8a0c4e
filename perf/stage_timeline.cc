#include "perf/stage_timeline.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "perf/options.h"

namespace strata::perf {
namespace {

using Intervals = std::vector<std::pair<double, double>>;

// The union of the intervals, sorted and merged.
Intervals merged(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& iv : v) {
    if (!out.empty() && iv.first <= out.back().second) {
      out.back().second = std::max(out.back().second, iv.second);
    } else {
      out.push_back(iv);
    }
  }
  return out;
}

Intervals intersect(const Intervals& a, const Intervals& b) {
  Intervals out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (lo < hi) out.push_back({lo, hi});
    if (a[i].second < b[j].second) ++i;
    else ++j;
  }
  return out;
}

double length(const Intervals& v) {
  double t = 0;
  for (const auto& iv : v) t += iv.second - iv.first;
  return t;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

StageSummary summarizeStages(const StageTimeline& t) {
  StageSummary s;
  Intervals busy[StageTimeline::kStages];
  double begin = 0, end = 0;
  for (int k = 0; k < StageTimeline::kStages; ++k) {
    Intervals v;
    for (const StageTimeline::Interval& iv : t.intervals[k]) {
      v.push_back({iv.start * 1e3, iv.end * 1e3});
      s.bytes[k] += static_cast<double>(iv.bytes);
    }
    s.intervals[k] = static_cast<double>(v.size());
    if (v.empty()) continue;
    busy[k] = merged(std::move(v));
    s.first[k] = busy[k].front().first;
    s.last[k] = busy[k].back().second;
    s.busy[k] = length(busy[k]);
    begin = s.any ? std::min(begin, s.first[k]) : s.first[k];
    end = s.any ? std::max(end, s.last[k]) : s.last[k];
    s.any = true;
  }
  if (!s.any) return s;
  s.third = t.intervals[StageTimeline::kReduce].empty() ? StageTimeline::kToDevice : StageTimeline::kReduce;
  s.staged = end - begin;
  s.transfer = s.last[StageTimeline::kNetwork] - s.first[StageTimeline::kNetwork];
  const int three[3] = {StageTimeline::kToHost, StageTimeline::kNetwork, s.third};
  Intervals spans = {{begin, end}}, all = {{begin, end}};
  for (int k : three) {
    spans = intersect(spans, {{s.first[k], s.last[k]}});
    all = intersect(all, busy[k]);
  }
  if (s.transfer > 0) s.spanOverlap = length(spans) / s.transfer;
  if (s.staged > 0) {
    s.stagedOverlap = length(spans) / s.staged;
    s.busyOverlap = length(all) / s.staged;
  }
  return s;
}

StageSummary medianStages(const std::vector<PhaseTimes>& runs) {
  const int n = StageTimeline::kStages;
  std::vector<StageSummary> perRun;
  for (const PhaseTimes& r : runs) {
    StageSummary s = summarizeStages(r.staging);
    // The busiest rank's times and bytes, the least overlap (a rank that staged nothing does not count).
    double most[5 * StageTimeline::kStages + 2], mine[5 * StageTimeline::kStages + 2];
    for (int k = 0; k < n; ++k) {
      mine[k] = s.first[k];
      mine[n + k] = s.last[k];
      mine[2 * n + k] = s.busy[k];
      mine[3 * n + k] = s.bytes[k];
      mine[4 * n + k] = s.intervals[k];
    }
    mine[5 * n] = s.transfer;
    mine[5 * n + 1] = s.staged;
    MPI_Allreduce(mine, most, 5 * n + 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double overlap[3] = {s.any ? s.spanOverlap : 2.0, s.any ? s.busyOverlap : 2.0, s.any ? s.stagedOverlap : 2.0};
    double least[3];
    MPI_Allreduce(overlap, least, 3, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    int third = s.any ? s.third : StageTimeline::kToDevice, thirdMost = 0, any = s.any ? 1 : 0, anyMost = 0;
    MPI_Allreduce(&third, &thirdMost, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&any, &anyMost, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    StageSummary w;
    w.any = anyMost != 0;
    for (int k = 0; k < n; ++k) {
      w.first[k] = most[k];
      w.last[k] = most[n + k];
      w.busy[k] = most[2 * n + k];
      w.bytes[k] = most[3 * n + k];
      w.intervals[k] = most[4 * n + k];
    }
    w.transfer = most[5 * n];
    w.staged = most[5 * n + 1];
    w.spanOverlap = least[0] > 1 ? 0 : least[0];
    w.busyOverlap = least[1] > 1 ? 0 : least[1];
    w.stagedOverlap = least[2] > 1 ? 0 : least[2];
    w.third = thirdMost;
    perRun.push_back(w);
  }
  StageSummary out;
  if (perRun.empty()) return out;
  auto med = [&](auto field) {
    std::vector<double> v;
    for (const StageSummary& s : perRun) v.push_back(field(s));
    return median(std::move(v));
  };
  out.any = perRun.front().any;
  out.third = perRun.front().third;
  for (int k = 0; k < n; ++k) {
    out.first[k] = med([k](const StageSummary& s) { return s.first[k]; });
    out.last[k] = med([k](const StageSummary& s) { return s.last[k]; });
    out.busy[k] = med([k](const StageSummary& s) { return s.busy[k]; });
    out.bytes[k] = med([k](const StageSummary& s) { return s.bytes[k]; });
    out.intervals[k] = med([k](const StageSummary& s) { return s.intervals[k]; });
  }
  out.transfer = med([](const StageSummary& s) { return s.transfer; });
  out.staged = med([](const StageSummary& s) { return s.staged; });
  out.stagedOverlap = med([](const StageSummary& s) { return s.stagedOverlap; });
  out.spanOverlap = med([](const StageSummary& s) { return s.spanOverlap; });
  out.busyOverlap = med([](const StageSummary& s) { return s.busyOverlap; });
  return out;
}

void printStages(const StageSummary& s) {
  if (gRank != 0 || !s.any) return;
  std::printf("#   staged chunks (out of place; ms since the call began; median over the timed calls of the busiest rank):\n");
  for (int k = 0; k < StageTimeline::kStages; ++k) {
    if (s.intervals[k] == 0) continue;
    std::printf("#     %-9s first start %9.3f  last end %9.3f  busy %9.3f  %5.0f intervals  %12.0f B\n",
                StageTimeline::name(k), s.first[k], s.last[k], s.busy[k], s.intervals[k], s.bytes[k]);
  }
  std::printf("#   to-host, network and %s all under way: %.1f%% of the transfer (the network's %.3f ms), %.1f%% of the "
              "staged %.3f ms; all three busy at once %.1f%% (least rank)\n",
              StageTimeline::name(s.third), 100 * s.spanOverlap, s.transfer, 100 * s.stagedOverlap, s.staged,
              100 * s.busyOverlap);
}

}  // namespace strata::perf
