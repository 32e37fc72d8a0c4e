// The collectives and the arguments of one call, as the plan builders and the cost model see them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/datatype.h"

namespace strata {

enum class Collective : uint8_t {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kGather,
  kScatter,
  kAllToAll,
  kScan,
  kExscan,
  kShift,
  kBarrier,
  kAllGatherv,
  kGatherv,
  kScatterv,
  kAllToAllv,
  kReduceScatterv,
};
constexpr int kNumCollectives = 17;
const char* collectiveName(Collective c);  // "allreduce", "broadcast", ...
bool parseCollective(const char* name, Collective* out);
// Whether the collective combines values with an operator.
bool isReduction(Collective c);
// Whether the collective has a root argument.
bool isRooted(Collective c);

struct CollectiveArgs {
  Collective coll = Collective::kAllReduce;
  size_t count = 0;  // NCCL's count: per rank block for allgather/gather/scatter/reduce-scatter/alltoall
  DataType type = strataFloat32;
  RedOp op = strataSum;
  int root = 0;
  int shift = 0;        // strataShift: rank r sends to (r + shift) mod p
  bool inPlace = false;
  bool device = false;  // the buffers are device memory
  int commSize = 1;     // p, the divisor of strataAvg
  // Irregular (v) variants, in elements, per rank: the receive (or scatter) side and, for alltoallv,
  // the send side. Empty for the regular collectives.
  std::vector<size_t> counts, displs, sendCounts, sendDispls;

  size_t elemSize() const { return dataTypeSize(type); }
  // A stable key for the plan cache.
  std::string key() const;
};

// Bytes of one rank's send and receive buffers together (the largest rank's, for rooted and
// irregular calls): the call's share of the host's memory traffic, for the cost model's cache term.
double rankWorkingSetBytes(const CollectiveArgs& a);

}  // namespace strata
