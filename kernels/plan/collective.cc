#include "kernels/plan/collective.h"

#include <strings.h>

#include <algorithm>

#include "kernels/common/status.h"

namespace strata {

namespace {

double busOne(int) { return 1.0; }
double busAllReduce(int p) { return p > 0 ? 2.0 * (p - 1) / p : 0.0; }
double busGathered(int p) { return p > 0 ? static_cast<double>(p - 1) / p : 0.0; }

using H = Holders;
using L = Length;
using I = InPlace;
constexpr H kAll = H::kAll, kRoot = H::kRoot;

// In Collective's order.
const CollectiveSpec kSpecs[kNumCollectives] = {
    // coll, name, function, reduces, rooted, irregular, send holders, recv holders, send, recv, in place, bus factor
    {Collective::kAllReduce, "allreduce", "strataAllReduce", true, false, false, kAll, kAll, L::kBlock, L::kBlock, I::kSameBuffer, busAllReduce},
    {Collective::kBroadcast, "broadcast", "strataBroadcast", false, true, false, kRoot, kAll, L::kBlock, L::kBlock, I::kSameBuffer, busOne},
    {Collective::kReduce, "reduce", "strataReduce", true, true, false, kAll, kRoot, L::kBlock, L::kBlock, I::kSameBuffer, busOne},
    {Collective::kAllGather, "allgather", "strataAllGather", false, false, false, kAll, kAll, L::kBlock, L::kBlocks, I::kSendIsOwnBlock, busGathered},
    {Collective::kReduceScatter, "reducescatter", "strataReduceScatter", true, false, false, kAll, kAll, L::kBlocks, L::kBlock, I::kRecvIsOwnBlock, busGathered},
    {Collective::kGather, "gather", "strataGather", false, true, false, kAll, kRoot, L::kBlock, L::kBlocks, I::kSendIsRootBlock, busGathered},
    {Collective::kScatter, "scatter", "strataScatter", false, true, false, kRoot, kAll, L::kBlocks, L::kBlock, I::kRecvIsRootBlock, busGathered},
    {Collective::kAllToAll, "alltoall", "strataAlltoAll", false, false, false, kAll, kAll, L::kBlocks, L::kBlocks, I::kSameBuffer, busGathered},
    {Collective::kScan, "scan", "strataScan", true, false, false, kAll, kAll, L::kBlock, L::kBlock, I::kSameBuffer, busOne},
    // Rank 0's receive buffer is untouched: there is nothing before it.
    {Collective::kExscan, "exscan", "strataExscan", true, false, false, kAll, H::kAllButRankZero, L::kBlock, L::kBlock, I::kSameBuffer, busOne},
    {Collective::kShift, "shift", "strataShift", false, false, false, kAll, kAll, L::kBlock, L::kBlock, I::kSameBuffer, busOne},
    {Collective::kBarrier, "barrier", "strataBarrier", false, false, false, H::kNone, H::kNone, L::kNone, L::kNone, I::kNever, busOne},
    {Collective::kAllGatherv, "allgatherv", "strataAllGatherv", false, false, true, kAll, kAll, L::kBlock, L::kBlocks, I::kSendIsOwnBlock, busGathered},
    {Collective::kGatherv, "gatherv", "strataGatherv", false, true, true, kAll, kRoot, L::kBlock, L::kBlocks, I::kSendIsRootBlock, busGathered},
    {Collective::kScatterv, "scatterv", "strataScatterv", false, true, true, kRoot, kAll, L::kBlocks, L::kBlock, I::kRecvIsRootBlock, busGathered},
    {Collective::kAllToAllv, "alltoallv", "strataAlltoAllv", false, false, true, kAll, kAll, L::kBlocks, L::kBlocks, I::kSameBuffer, busGathered},
    {Collective::kReduceScatterv, "reducescatterv", "strataReduceScatterv", true, false, true, kAll, kAll, L::kBlocks, L::kBlock, I::kRecvIsOwnBlock, busGathered},
};

bool holds(Holders h, const CollectiveArgs& a, int rank) {
  switch (h) {
    case Holders::kNone: return false;
    case Holders::kAll: return true;
    case Holders::kRoot: return rank == a.root;
    case Holders::kAllButRankZero: return rank != 0;
  }
  return false;
}

// A v-variant's blocks on one side: counts and displacements (packed when there are none). The
// send side of alltoallv and scatterv has its own arrays; reduce-scatterv's send side is the
// receive counts, packed.
struct Blocks {
  const std::vector<size_t>* counts;
  const std::vector<size_t>* displs;
};
Blocks blocksOf(const CollectiveArgs& a, bool sendSide) {
  if (sendSide && !a.sendCounts.empty()) return {&a.sendCounts, &a.sendDispls};
  return {&a.counts, &a.displs};
}

size_t blocksLength(const CollectiveArgs& a, bool sendSide, int p) {
  if (!specOf(a.coll).irregular) return a.count * static_cast<size_t>(p);
  const Blocks b = blocksOf(a, sendSide);
  size_t end = 0;
  for (size_t i = 0; i < b.counts->size(); ++i) {
    end = b.displs->empty() ? end + (*b.counts)[i] : std::max(end, (*b.displs)[i] + (*b.counts)[i]);
  }
  return end;
}

BufferUse use(const CollectiveArgs& a, int rank, bool sendSide) {
  const CollectiveSpec& s = specOf(a.coll);
  const Length length = sendSide ? s.sendLength : s.recvLength;
  BufferUse u;
  u.used = holds(sendSide ? s.sendHolders : s.recvHolders, a, rank);
  if (length == Length::kBlock) u.elems = a.count;
  if (length == Length::kBlocks) u.elems = blocksLength(a, sendSide, a.commSize);
  return u;
}

}  // namespace

const CollectiveSpec& specOf(Collective c) { return kSpecs[static_cast<int>(c)]; }

BufferUse sendUse(const CollectiveArgs& a, int rank) { return use(a, rank, true); }
BufferUse recvUse(const CollectiveArgs& a, int rank) { return use(a, rank, false); }

size_t blockOffset(const CollectiveArgs& a, bool sendSide, int i) {
  if (!specOf(a.coll).irregular) return static_cast<size_t>(i) * a.count;
  const Blocks b = blocksOf(a, sendSide);
  if (!b.displs->empty()) return (*b.displs)[static_cast<size_t>(i)];
  size_t prefix = 0;
  for (int j = 0; j < i; ++j) prefix += (*b.counts)[static_cast<size_t>(j)];
  return prefix;
}

InPlaceAlias inPlaceAlias(const CollectiveArgs& a, int rank) {
  switch (specOf(a.coll).inPlace) {
    case InPlace::kSendIsOwnBlock: return {true, blockOffset(a, false, rank)};
    case InPlace::kSendIsRootBlock: return {true, blockOffset(a, false, a.root)};
    case InPlace::kRecvIsOwnBlock: return {false, blockOffset(a, true, rank)};
    case InPlace::kRecvIsRootBlock: return {false, blockOffset(a, true, a.root)};
    default: return {true, 0};
  }
}

double oneRankCopyBytes(const CollectiveArgs& a) {
  if (a.inPlace) return 0;
  const BufferUse send = sendUse(a, 0), recv = recvUse(a, 0);
  if (!send.used || !recv.used) return 0;
  return static_cast<double>(std::min(send.elems, recv.elems) * a.elemSize());
}

double rankWorkingSetBytes(const CollectiveArgs& a) {
  const double elemSize = static_cast<double>(a.elemSize());
  const int p = std::max(1, a.commSize);
  // A rank's buffers: send and receive, or in place the one that holds the other (a rooted call's
  // root in place; the others' calls have no buffer to share).
  const bool inPlace = a.inPlace && specOf(a.coll).inPlace != InPlace::kNever;
  auto both = [inPlace](size_t send, size_t recv) { return static_cast<double>(inPlace ? std::max(send, recv) : send + recv); };
  if (!specOf(a.coll).rooted || p == 1) {  // every rank alike (an exscan's rank 0 as the others)
    return both(sendUse(a, 0).elems, recvUse(a, 0).elems) * elemSize;
  }
  // A rooted call: the mean of the root's buffers and the p - 1 others' (all alike), which lack
  // the buffer only the root has; the host's processes' buffers add up to this times their
  // number. The root's for every rank counted a node reduce's calibration sample at 4 MiB on 2x4
  // as 64 MiB where its buffers held 40, and the node reduce of a leader reduce-scatter's call of
  // 36 MiB read the node's curve below the L3's knee that sample sat above (priced 1364 us where
  // the same reduce had measured 1768).
  auto held = [&a](int rank) {
    const BufferUse send = sendUse(a, rank), recv = recvUse(a, rank);
    return static_cast<double>((send.used ? send.elems : 0) + (recv.used ? recv.elems : 0));
  };
  const double root = inPlace ? both(sendUse(a, a.root).elems, recvUse(a, a.root).elems) : held(a.root);
  return (root + (p - 1) * held((a.root + 1) % p)) / p * elemSize;
}

const char* collectiveName(Collective c) {
  const int k = static_cast<int>(c);
  return k >= 0 && k < kNumCollectives ? kSpecs[k].name : "?";
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

bool isReduction(Collective c) { return specOf(c).reduces; }
bool isRooted(Collective c) { return specOf(c).rooted; }
bool isIrregular(Collective c) { return specOf(c).irregular; }

}  // namespace strata
