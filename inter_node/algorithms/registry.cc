// The list of flat algorithms. Records are defined in each algorithm's own file; listing them here
// (instead of self-registration) keeps static libraries from dropping any. Within a collective the
// order is the order of --algo all and of error messages.
#include "inter_node/algorithms/algorithm.h"

namespace strata {

extern const FlatAlgorithm kRingAllReduce;
extern const FlatAlgorithm kRecursiveDoublingAllReduce;
extern const FlatAlgorithm kRabenseifnerAllReduce;
extern const FlatAlgorithm kCirculantAllReduce;
extern const FlatAlgorithm kRingReduceScatter;
extern const FlatAlgorithm kRecursiveHalvingReduceScatter;
extern const FlatAlgorithm kRingAllGather;
extern const FlatAlgorithm kBruckAllGather;
extern const FlatAlgorithm kRecursiveDoublingAllGather;
extern const FlatAlgorithm kBinomialBroadcast;
extern const FlatAlgorithm kChainBroadcast;
extern const FlatAlgorithm kScatterAllGatherBroadcast;
extern const FlatAlgorithm kPipelinedTreeBroadcast;
extern const FlatAlgorithm kTwoTreeBroadcast;
extern const FlatAlgorithm kHypercubeBroadcast;
extern const FlatAlgorithm kBinomialReduce;
extern const FlatAlgorithm kReduceScatterGatherReduce;
extern const FlatAlgorithm kPipelinedTreeReduce;
extern const FlatAlgorithm kTwoTreeReduce;
extern const FlatAlgorithm kBinomialGather;
extern const FlatAlgorithm kLinearGather;
extern const FlatAlgorithm kBinomialScatter;
extern const FlatAlgorithm kLinearScatter;
extern const FlatAlgorithm kPairwiseAllToAll;
extern const FlatAlgorithm kBruckAllToAll;
extern const FlatAlgorithm kRingAllToAll;
extern const FlatAlgorithm kDisseminationScan;
extern const FlatAlgorithm kInOrderTreeScan;
extern const FlatAlgorithm kDisseminationExscan;
extern const FlatAlgorithm kInOrderTreeExscan;
extern const FlatAlgorithm kDirectShift;
extern const FlatAlgorithm kRingShift;
extern const FlatAlgorithm kDisseminationBarrier;
extern const FlatAlgorithm kRingAllGatherv;
extern const FlatAlgorithm kBruckAllGatherv;
extern const FlatAlgorithm kRecursiveDoublingAllGatherv;
extern const FlatAlgorithm kLinearGatherv;
extern const FlatAlgorithm kLinearScatterv;
extern const FlatAlgorithm kPairwiseAllToAllv;
extern const FlatAlgorithm kRingReduceScatterv;
extern const FlatAlgorithm kRecursiveHalvingReduceScatterv;

const std::vector<const FlatAlgorithm*>& flatAlgorithms() {
  static const std::vector<const FlatAlgorithm*> all = {
      &kRingAllReduce,
      &kRecursiveDoublingAllReduce,
      &kRabenseifnerAllReduce,
      &kCirculantAllReduce,
      &kRingReduceScatter,
      &kRecursiveHalvingReduceScatter,
      &kRingAllGather,
      &kBruckAllGather,
      &kRecursiveDoublingAllGather,
      &kBinomialBroadcast,
      &kChainBroadcast,
      &kScatterAllGatherBroadcast,
      &kPipelinedTreeBroadcast,
      &kTwoTreeBroadcast,
      &kHypercubeBroadcast,
      &kBinomialReduce,
      &kReduceScatterGatherReduce,
      &kPipelinedTreeReduce,
      &kTwoTreeReduce,
      &kBinomialGather,
      &kLinearGather,
      &kBinomialScatter,
      &kLinearScatter,
      &kPairwiseAllToAll,
      &kBruckAllToAll,
      &kRingAllToAll,
      &kDisseminationScan,
      &kInOrderTreeScan,
      &kDisseminationExscan,
      &kInOrderTreeExscan,
      &kDirectShift,
      &kRingShift,
      &kDisseminationBarrier,
      &kRingAllGatherv,
      &kBruckAllGatherv,
      &kRecursiveDoublingAllGatherv,
      &kLinearGatherv,
      &kLinearScatterv,
      &kPairwiseAllToAllv,
      &kRingReduceScatterv,
      &kRecursiveHalvingReduceScatterv,
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
