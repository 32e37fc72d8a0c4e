// The list of flat algorithms. Records are defined in each algorithm's own file; listing them here
// (instead of self-registration) keeps static libraries from dropping any.
#include "inter_node/algorithms/algorithm.h"

namespace strata {

extern const FlatAlgorithm kRingAllReduce;
extern const FlatAlgorithm kRecursiveDoublingAllReduce;
extern const FlatAlgorithm kRabenseifnerAllReduce;
extern const FlatAlgorithm kRingReduceScatter;
extern const FlatAlgorithm kRecursiveHalvingReduceScatter;
extern const FlatAlgorithm kRingAllGather;
extern const FlatAlgorithm kBinomialBroadcast;
extern const FlatAlgorithm kChainBroadcast;
extern const FlatAlgorithm kScatterAllGatherBroadcast;
extern const FlatAlgorithm kBinomialReduce;
extern const FlatAlgorithm kReduceScatterGatherReduce;
extern const FlatAlgorithm kDisseminationBarrier;

const std::vector<const FlatAlgorithm*>& flatAlgorithms() {
  static const std::vector<const FlatAlgorithm*> all = {
      &kRingAllReduce,        &kRecursiveDoublingAllReduce, &kRabenseifnerAllReduce,     &kRingReduceScatter,
      &kRecursiveHalvingReduceScatter, &kRingAllGather,     &kBinomialBroadcast,         &kChainBroadcast,
      &kScatterAllGatherBroadcast,     &kBinomialReduce,    &kReduceScatterGatherReduce, &kDisseminationBarrier,
  };
  return all;
}

std::vector<const FlatAlgorithm*> flatAlgorithmsFor(Collective c) {
  std::vector<const FlatAlgorithm*> out;
  for (const FlatAlgorithm* a : flatAlgorithms()) {
    if (a->collective == c) out.push_back(a);
  }
  return out;
}

const FlatAlgorithm* findFlatAlgorithm(Collective c, const std::string& name) {
  for (const FlatAlgorithm* a : flatAlgorithms()) {
    if (a->collective == c && name == a->name) return a;
  }
  return nullptr;
}

}  // namespace strata
