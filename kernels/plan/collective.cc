#include "kernels/plan/collective.h"

#include <strings.h>

#include "kernels/common/status.h"

namespace strata {

const char* collectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "allreduce";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kReduce: return "reduce";
    case Collective::kAllGather: return "allgather";
    case Collective::kReduceScatter: return "reducescatter";
    case Collective::kGather: return "gather";
    case Collective::kScatter: return "scatter";
    case Collective::kAllToAll: return "alltoall";
    case Collective::kScan: return "scan";
    case Collective::kExscan: return "exscan";
    case Collective::kShift: return "shift";
    case Collective::kBarrier: return "barrier";
    case Collective::kAllGatherv: return "allgatherv";
    case Collective::kGatherv: return "gatherv";
    case Collective::kScatterv: return "scatterv";
    case Collective::kAllToAllv: return "alltoallv";
    case Collective::kReduceScatterv: return "reducescatterv";
  }
  return "?";
}

bool parseCollective(const char* name, Collective* out) {
  if (name == nullptr) return false;
  for (int i = 0; i < kNumCollectives; ++i) {
    const Collective c = static_cast<Collective>(i);
    if (strcasecmp(name, collectiveName(c)) == 0) {
      *out = c;
      return true;
    }
  }
  // nccl-tests spellings
  if (strcasecmp(name, "all_reduce") == 0) return *out = Collective::kAllReduce, true;
  if (strcasecmp(name, "all_gather") == 0) return *out = Collective::kAllGather, true;
  if (strcasecmp(name, "reduce_scatter") == 0) return *out = Collective::kReduceScatter, true;
  if (strcasecmp(name, "alltoall") == 0 || strcasecmp(name, "all_to_all") == 0) return *out = Collective::kAllToAll, true;
  if (strcasecmp(name, "bcast") == 0) return *out = Collective::kBroadcast, true;
  return false;
}

bool isReduction(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduce || c == Collective::kReduceScatter ||
         c == Collective::kScan || c == Collective::kExscan || c == Collective::kReduceScatterv;
}

bool isRooted(Collective c) {
  return c == Collective::kBroadcast || c == Collective::kReduce || c == Collective::kGather ||
         c == Collective::kScatter || c == Collective::kGatherv || c == Collective::kScatterv;
}

std::string CollectiveArgs::key() const {
  std::string k = strformat("%d/%zu/%d/%d/%d/%d/%d", static_cast<int>(coll), count, static_cast<int>(type),
                            static_cast<int>(op), root, shift, inPlace ? 1 : 0);
  for (const auto* v : {&counts, &displs, &sendCounts, &sendDispls}) {
    k += "|";
    for (size_t x : *v) k += strformat("%zu,", x);
  }
  return k;
}

double rankWorkingSetBytes(const CollectiveArgs& a) {
  const double es = static_cast<double>(a.elemSize());
  const double m = static_cast<double>(a.count) * es;
  const double p = static_cast<double>(a.commSize);
  auto sum = [&](const std::vector<size_t>& v) {
    double t = 0;
    for (size_t x : v) t += static_cast<double>(x);
    return t * es;
  };
  switch (a.coll) {
    case Collective::kAllGather:
    case Collective::kGather:
    case Collective::kScatter:
    case Collective::kReduceScatter: return m * (p + 1);
    case Collective::kAllToAll: return 2 * m * p;
    case Collective::kBarrier: return 0;
    case Collective::kAllGatherv:
    case Collective::kGatherv:
    case Collective::kScatterv:
    case Collective::kReduceScatterv: return 2 * sum(a.counts);
    case Collective::kAllToAllv: return sum(a.counts) + sum(a.sendCounts);
    default: return 2 * m;  // allreduce, broadcast, reduce, scan, exscan, shift
  }
}

}  // namespace strata
