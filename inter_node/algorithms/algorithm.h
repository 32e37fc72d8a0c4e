// Flat algorithms over MPI. Each algorithm lives in its own file, next to its cost formula in the
// alpha-beta-gamma model, and is described by one FlatAlgorithm record; the tuner and STRATA_ALGO
// choose among the records of a collective. Building blocks that compositions reuse (a ring
// reduce-scatter over given slices, a binomial gather, ...) are declared here as well.
#pragma once

#include <string>
#include <vector>

#include "kernels/plan/collective.h"
#include "kernels/plan/cost.h"
#include "kernels/plan/group.h"
#include "kernels/plan/peer_reads.h"
#include "kernels/plan/plan_builder.h"
#include "kernels/plan/selection.h"

namespace strata {

// What a builder needs besides the call: the cost parameters of the level it runs on (for
// pipelining decisions) and a cap on the number of pipeline blocks.
struct BuildOptions {
  LinkCost link;
  size_t maxPipelineBlocks = 256;
  size_t minPipelineBytes = 8192;  // blocks below this size do not pay for their message
};

struct FlatAlgorithm {
  const char* name;
  Collective collective;
  // Why the algorithm cannot serve the call on `p` ranks (shown to the user), or empty; nullptr:
  // it serves every call. Read through whyUnsupported().
  std::string (*unsupported)(const CollectiveArgs& args, int p);
  // Builds the plan of group member g.me for the whole call (buffers kSend, kRecv as the API's).
  void (*build)(PlanBuilder& b, const CollectiveArgs& args, const Group& g, const BuildOptions& opt);
  // Predicted time in seconds.
  double (*cost)(const CollectiveArgs& args, int p, const LinkCost& c);
  const char* formula;  // the cost formula as text, for documentation and logs
  // Optional: why the tuner must not pick this algorithm on its own for the call (it may still be
  // forced), e.g. floating-point sums added in a different order on different ranks.
  std::string (*notAutomatic)(const CollectiveArgs& args, int p) = nullptr;

  std::string whyUnsupported(const CollectiveArgs& args, int p) const { return unsupported ? unsupported(args, p) : ""; }
  bool automatic(const CollectiveArgs& args, int p) const { return notAutomatic == nullptr || notAutomatic(args, p).empty(); }
};

// All flat algorithms, in a fixed order.
const std::vector<const FlatAlgorithm*>& flatAlgorithms();
// The flat algorithms of one collective.
std::vector<const FlatAlgorithm*> flatAlgorithmsFor(Collective c);
const FlatAlgorithm* findFlatAlgorithm(Collective c, const std::string& name);

// The plan of rank `rank` of `p` for a whole call of `f`, in-place calls aliased as the API's
// pointers are (a rooted call is in place at its root only).
Plan buildFlatPlan(const FlatAlgorithm& f, const CollectiveArgs& args, int p, int rank, const BuildOptions& opt);

// The price of `f` for a call on `p` ranks of a level with costs `c`: its formula (on the
// arguments every rank shares, selectionArgs, in place as `args` says: the tuner's choice passes
// its call out of place, its price as made the rank's own, which for a rooted call only its root
// can make in place, the others holding one of the two buffers),
// plus, where the level has a rewrite cost, what its
// plan writes after a peer read it (kernels/plan/peer_reads.h) at c.rewrite per byte a reduction
// writes and c.copyRewrite per byte a copy or a receipt writes, the most of any rank's (ranks 0,
// 1, p/2, p - 1 and the root: the same on every rank, as a choice must be).
// `args.inPlace` counts here: an in-place call reduces into the buffer its peer read.
double flatAlgorithmPrice(const FlatAlgorithm& f, const CollectiveArgs& args, int p, const LinkCost& c);
// That second part's bytes: those of the rank among them whose rewrites cost the most at `c` (the
// most bytes where `c` prices none), a rooted call counted out of place; gatherv, scatterv and
// alltoallv, whose arrays differ from rank to rank, not counted.
RewrittenBytes flatRewrittenBytes(const FlatAlgorithm& f, const CollectiveArgs& args, int p, const LinkCost& c);

// Bytes of a call's vector (count * element size) as a double, for cost formulas.
inline double callBytes(const CollectiveArgs& a) { return static_cast<double>(a.count) * static_cast<double>(a.elemSize()); }

// The per-rank blocks of the larger buffer of a gather-like collective: the receive buffer of
// allgather(v) and gather(v), the send buffer of scatter(v) and reduce-scatter(v). Regular
// collectives have blocks of `count` back to back; v-variants take counts and displacements.
BlockLayout rankBlocks(const CollectiveArgs& a, int p);
// Whether the blocks follow each other in rank order without gaps (an image the algorithms can
// work in directly).
bool isPacked(const BlockLayout& l);
// Blocks of `l` cut out of `whole` (buffer + base offset).
std::vector<Slice> blockSlices(Slice whole, const BlockLayout& l);
// The same blocks packed back to back in rank order.
BlockLayout packedLayout(const BlockLayout& l);

// Builds the avg division step only when the call's op is strataAvg.
inline void divideIfAverage(PlanBuilder& b, const CollectiveArgs& a, Slice s) {
  if (a.op == strataAvg) b.divide(s);
}

// Rejects floating-point sum, product and average for algorithms whose ranks combine the inputs in
// different orders (the last bits could then differ between ranks).
std::string rankOrderDependent(const CollectiveArgs& a, int p);

// ---- Building blocks (slices are in the builder's buffers; groups give the peers) ----

// Ring reduce-scatter (002, "Linear-ring reduce-scatter"): p-1 rounds; in round s member r sends
// its partial sum of block (r-s-1) to r+1 and adds its own input to block (r-s-2) received from
// r-1. `input[i]` is my contribution to block i; the reduced block `me` is written to `result`.
// Partial sums travel through two scratch slots. Empty blocks cost nothing.
void buildRingReduceScatter(PlanBuilder& b, const Group& g, const std::vector<Slice>& input, Slice result,
                            int tagBase = 0);

// Ring allgather (002, "Linear-ring allgather"): p-1 rounds; in round s member r forwards block
// (r-s) to r+1 and receives block (r-s-1) from r-1. `mine` is my block (copied to out[me] unless
// it is the same slice); out[i] receives block i. Its sends start after `sendsAfter` (a step of
// an earlier phase whose messages would otherwise share the link with the ring's).
void buildRingAllGather(PlanBuilder& b, const Group& g, Slice mine, const std::vector<Slice>& out, int tagBase = 0,
                        StepId sendsAfter = kNoStep);

// The binomial tree of `g` rooted at member 0 (inter_node/algorithms/binomial_tree.cc), as member
// g.me sees it: its parent (-1 at the root), the end of its subtree [me, subtreeEnd), and its
// children, smallest subtree first, each with its own subtree [member, subtreeEnd). Every binomial
// algorithm walks this one description.
struct BinomialLinks {
  struct Child {
    int member;
    int subtreeEnd;
  };
  int parent = -1;
  int subtreeEnd = 1;
  std::vector<Child> children;
};
BinomialLinks binomialLinks(const Group& g);
// The root's child subtree whose ranks wrap past p - 1 on the tree of p members rotated to `root`
// (rank (v + root) mod p is member v): its blocks, which the binomial gather's and scatter's root
// copies in two pieces through scratch (0 where no subtree wraps: root 0, or the ranks from 0
// starting a subtree), whether it is the root's last child (the scatter's first send), and
// whether no child's subtree is larger (the gather's last to arrive, or as late as the last).
struct WrappedSubtree {
  int blocks = 0;
  bool last = false;
  bool largest = false;
};
WrappedSubtree binomialWrappedSubtree(int p, int root);

// Binomial gather to member 0 of `g` (002, "Binomial tree gather"): member v collects the
// contiguous range of blocks of its subtree [v, v + lowbit(v)) into `image` (a slice laid out like
// the whole vector, blocks in group order) and sends it to v - lowbit(v). `mine` is my block's
// current location (copied into the image if different).
void buildBinomialGather(PlanBuilder& b, const Group& g, const BlockLayout& blocks, Slice mine, Slice image,
                         int tagBase = 0);

// Binomial scatter from member 0 of `g` (002, "Binomial tree-like, divide-and-conquer scatter"):
// the inverse of the gather. Member 0's blocks are in `source`; member v receives the range of its
// subtree into `image` and forwards the children's ranges.
// Returns this member's last send (kNoStep: none), one send at a time, largest subtree first.
StepId buildBinomialScatter(PlanBuilder& b, const Group& g, const BlockLayout& blocks, Slice source, Slice image,
                            int tagBase = 0);

// Binomial broadcast from member 0 of `g` (002, "Binomial tree broadcast"): member 0 sends `src`;
// every other member receives into `dst` and forwards to its children, largest subtree first.
void buildBinomialBroadcast(PlanBuilder& b, const Group& g, Slice src, Slice dst, int tagBase = 0);

// Binomial reduce to member 0 of `g` (002, "Binomial tree reduction"): children's partial sums are
// received into scratch and added to my accumulator, which is then sent to the parent. `input` is
// my contribution, `acc` where my partial sum accumulates (the result at member 0).
void buildBinomialReduce(PlanBuilder& b, const Group& g, Slice input, Slice acc, int tagBase = 0);

// Recursive halving reduce-scatter and recursive doubling allgather over a power-of-two set of
// virtual ranks (002, "The power of the hypercube/butterfly"; Rabenseifner). `vpeers[j]` is the
// communicator rank of virtual rank j, `vme` mine, `vblocks` the element ranges of the virtual
// blocks (consecutive). The halving reads the first round's data from `in` (laid out like the
// whole vector) and keeps its partial sums in `work` when given (laid out likewise), else in two
// scratch slots of a half and a quarter of the vector, each round's received half reduced in
// place; the last round reduces block vme into `out`: consecutive pieces whose counts add up to
// the block's (the caller's result, a partner's part).
void buildRecursiveHalving(PlanBuilder& b, const std::vector<int>& vpeers, int vme, const BlockLayout& vblocks,
                           Slice in, const std::vector<Slice>& out, int tagBase, const Slice* work = nullptr);
// On entry `work` holds block vme; on exit all blocks. `first`, when given, holds block vme too
// (the caller's own block, still in its send buffer): the first round sends it from there, so
// that send need not wait for the copy of it into `work`. Each round's receive waits for the
// previous round's, the first for `firstRecvAfter` when given: a folded member takes its pair's
// block before its partner's, which would otherwise hold its receive link while the block its own
// first send carries waits behind it.
void buildRecursiveDoubling(PlanBuilder& b, const std::vector<int>& vpeers, int vme, const BlockLayout& vblocks,
                            Slice work, int tagBase, const Slice* first = nullptr, StepId firstRecvAfter = kNoStep);

// The non-power-of-two reduction of 002's recursive algorithms: with p' the largest power of two
// <= p and rem = p - p', members 2j and 2j+1 (j < rem) pair up; the even one sends its vector to
// the odd one, which adds it. Returns my virtual rank among the p' survivors (-1 for the even
// members that sat out) and their communicator ranks in `vpeers`.
struct Fold {
  int p2 = 1;
  int rem = 0;
  int vme = -1;
  std::vector<int> vpeers;
  // Group index of the real member that plays virtual rank j.
  std::vector<int> vmember;
};
Fold makeFold(const Group& g);
// The group index of the member that plays virtual rank j of a fold with `rem` pairs.
inline int foldMember(int j, int rem) { return j < rem ? 2 * j + 1 : j + rem; }
// The costs of a butterfly round over the fold of p ranks, virtual rank j sending
// `weight(j)` (its bytes as a fraction of the largest message, which the formula prices) to
// virtual rank j ^ mask (recursive doubling and halving, the hypercube broadcast's rounds): where
// the level prices crossings between nodes (LinkCost::crossing; strata-model's flat level behind
// a core), at the bytes that cross between nodes, in messages of the largest, over p (none at a
// mask below the ranks per node where they are a power of two, all from it); else the level's
// costs. Member m of the fold is rank (m + root) mod p (a rooted collective's rotated group);
// butterflyCrossing is that fraction, on nodes of n ranks.
template <typename Weight>
double butterflyCrossing(int p, int n, int mask, Weight&& weight, int root = 0) {
  const int p2 = floorPow2(p), rem = p - p2;
  auto node = [&](int j) { return (foldMember(j, rem) + root) % p / n; };
  double crossing = 0;
  for (int j = 0; j < p2; ++j) {
    if (node(j) != node(j ^ mask)) crossing += weight(j);
  }
  return crossing / p;
}
template <typename Weight>
LinkCost butterflyRound(const LinkCost& c, int p, int mask, Weight&& weight, int root = 0) {
  if (!c.pricesCrossings()) return c;
  return c.crossing(butterflyCrossing(p, c.coreNodeRanks, mask, weight, root));
}
// A round in which every virtual rank sends as much. Where p and the ranks per node are powers of
// two and the root starts a node, j and j ^ mask are on different nodes exactly where mask
// reaches the ranks per node.
inline LinkCost butterflyRound(const LinkCost& c, int p, int mask, int root = 0) {
  const int n = c.coreNodeRanks;
  if (c.pricesCrossings() && (p & (p - 1)) == 0 && (n & (n - 1)) == 0 && p % n == 0 && root % n == 0) {
    return c.crossing(mask >= n ? 1.0 : 0.0);
  }
  return butterflyRound(c, p, mask, [](int) { return 1.0; }, root);
}

}  // namespace strata
