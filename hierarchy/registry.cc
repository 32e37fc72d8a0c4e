// The list of compositions (see composition.h), defined in their own files.
#include "hierarchy/composition.h"

namespace strata {

extern const HierAlgorithm kFullLaneAllReduce, kLeaderAllReduce, kOneShotAllReduce;
extern const HierAlgorithm kFullLaneBroadcast, kLeaderBroadcast, kFullLaneReduce, kLeaderReduce;
extern const HierAlgorithm kFullLaneAllGather, kLeaderAllGather, kFullLaneReduceScatter, kLeaderReduceScatter;
extern const HierAlgorithm kFullLaneGather, kLeaderGather, kFullLaneScatter, kLeaderScatter;
extern const HierAlgorithm kFullLaneAllToAll, kFullLaneScan, kFullLaneExscan, kLeaderScan, kLeaderExscan;
extern const HierAlgorithm kHierBarrier;

const std::vector<const HierAlgorithm*>& hierAlgorithms() {
  static const std::vector<const HierAlgorithm*> all = {
      &kFullLaneAllReduce, &kLeaderAllReduce,     &kOneShotAllReduce,   &kFullLaneBroadcast, &kLeaderBroadcast,
      &kFullLaneReduce,    &kLeaderReduce,        &kFullLaneAllGather,  &kLeaderAllGather,   &kFullLaneReduceScatter,
      &kLeaderReduceScatter, &kFullLaneGather,    &kLeaderGather,       &kFullLaneScatter,   &kLeaderScatter,
      &kFullLaneAllToAll,  &kFullLaneScan,        &kFullLaneExscan,     &kLeaderScan,        &kLeaderExscan,
      &kHierBarrier,
  };
  return all;
}

std::vector<const HierAlgorithm*> hierAlgorithmsFor(Collective c) {
  std::vector<const HierAlgorithm*> out;
  for (const HierAlgorithm* h : hierAlgorithms()) {
    if (h->collective == c) out.push_back(h);
  }
  return out;
}

}  // namespace strata
