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
// Whether the collective combines values with an operator (specOf(c).reduces).
bool isReduction(Collective c);
// Whether the collective has a root argument (specOf(c).rooted).
bool isRooted(Collective c);
// Whether the collective is a v-variant (specOf(c).irregular).
bool isIrregular(Collective c);

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
};

// ---- One description per collective: what it does with its buffers ----------------------------
// Every layer reads this table: API validation, the runner's in-place alias, the cost model's
// working set, strata-perf (sizes, in-place pointers, bus bandwidth), the symbolic verifier's buffer
// views and the tests' buffers. What each output must contain is not here: the verifier's oracle
// and the tests' references state that on their own, and check the table.

// The ranks whose buffer is significant.
enum class Holders : uint8_t { kNone, kAll, kRoot, kAllButRankZero };
// A buffer's length: one block (`count` elements), or a block per rank (count x p for the regular
// collectives; for the v-variants, as far as the call's counts and displacements reach).
enum class Length : uint8_t { kNone, kBlock, kBlocks };
// In place, as NCCL has it: one buffer for both, or the smaller is a block of the larger (the
// rank's own block, or the root's, at the root).
enum class InPlace : uint8_t { kNever, kSameBuffer, kSendIsOwnBlock, kSendIsRootBlock, kRecvIsOwnBlock, kRecvIsRootBlock };

struct CollectiveSpec {
  Collective coll;
  const char* name;      // collectiveName(): STRATA_ALGO, strata-perf, logs
  const char* function;  // the C API's entry point
  bool reduces;
  bool rooted;
  bool irregular;        // a v-variant: per-rank counts and displacements
  Holders sendHolders, recvHolders;
  Length sendLength, recvLength;
  InPlace inPlace;
  double (*busFactor)(int p);  // nccl-tests' bus bandwidth: busbw = algbw x busFactor(p)
};
const CollectiveSpec& specOf(Collective c);

// How one rank's call uses a buffer: significant or not, and its length in elements (given even
// where it is not significant: a rank may pass such a buffer, which must then stay untouched).
struct BufferUse {
  bool used = false;
  size_t elems = 0;
};
BufferUse sendUse(const CollectiveArgs& a, int rank);
BufferUse recvUse(const CollectiveArgs& a, int rank);

// Where block i of a kBlocks buffer starts (elements): i x count, or the v-variant's displacement.
size_t blockOffset(const CollectiveArgs& a, bool sendSide, int i);

// In place: the buffer that holds both sides, and where the smaller one starts in it (elements).
struct InPlaceAlias {
  bool sendInsideRecv = true;  // send == recv + offset; else recv == send + offset
  size_t offset = 0;
};
InPlaceAlias inPlaceAlias(const CollectiveArgs& a, int rank);

// Bytes a call on a communicator of one rank copies (its own data from the send buffer into the
// receive buffer; nothing in place), which the formulas, whose terms are messages and reductions
// between ranks, do not count: the tuner's price of a one-rank call, and a composition's level of
// one member (a leader composition on one node).
double oneRankCopyBytes(const CollectiveArgs& a);

// Bytes of one rank's send and receive buffers together (for rooted calls, the mean over the
// communicator's ranks, the root's buffers with the others'): the call's share of the host's
// memory traffic, for the cost model's cache term.
double rankWorkingSetBytes(const CollectiveArgs& a);

}  // namespace strata
