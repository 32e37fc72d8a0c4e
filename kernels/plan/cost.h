// The alpha-beta-gamma cost model's vocabulary (002, "Linear transmission cost model"): sending m
// bytes costs alpha + beta * m, reducing m bytes costs gamma * m. Each level of the machine (the
// flat communicator, the node, the lanes) has its own parameters.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <initializer_list>

namespace strata {

// Memory hierarchy: a host moves and reduces data that fits its caches faster than data that
// streams from DRAM, and the knees lie wherever the machine's caches put them (on the 2-core
// development VM a 2-rank allgather moves 31 GB/s at 512 KiB, 13 at 4 MiB, 7 at 64 MiB). So a
// level's beta and gamma are a curve over the call's working set (every process of the host: send
// and receive buffers), measured by calibration at sizes 2x apart and interpolated linearly in
// log(working set) between its points, held at the end points beyond them.
// A curve may also carry alpha, at every point or at none: a host's per-message cost changes with
// the size too (8 processes on 2 cores pay a step's scheduling at 64 KiB, 2x the small messages'
// alpha, while their bytes move faster than a beta read off ring algorithms alone would say), and
// a calibration that times algorithms of different step counts at one size separates the two.
// It may carry a copy's cost per byte within a rank too, at every point or at none (calibration
// times an allgather's own block's copy from the send buffer on its own, at the call's working set).
struct BandwidthCurve {
  static constexpr size_t kMaxPoints = 16;
  struct Point {
    double workingSet = 0, beta = 0, gamma = 0;
    double alpha = -1;  // < 0: the curve carries no alpha
    double copy = -1;   // < 0: the curve carries no copy
    double rewrite = 0;  // LinkCost::rewrite at this working set
    double copyRewrite = -1;  // LinkCost::copyRewrite at this working set (< 0: the curve carries none)
  };
  std::array<Point, kMaxPoints> points{};  // the first `size`, by working set
  size_t size = 0;

  // A curve of the given points (those `add` refuses are left out).
  static BandwidthCurve of(std::initializer_list<Point> list) {
    BandwidthCurve c;
    for (const Point& p : list) c.add(p);
    return c;
  }
  bool empty() const { return size == 0; }
  const Point* begin() const { return points.data(); }
  const Point* end() const { return points.data() + size; }
  // Adds a point in working-set order; false when the curve is full or the working set is not
  // a positive number of bytes (the interpolation is in its logarithm).
  bool add(const Point& p) {
    if (size == kMaxPoints || !(p.workingSet > 0)) return false;
    size_t k = size++;
    for (; k > 0 && points[k - 1].workingSet > p.workingSet; --k) points[k] = points[k - 1];
    points[k] = p;
    return true;
  }
  bool carriesAlpha() const { return size > 0 && points[0].alpha >= 0; }
  bool carriesCopy() const { return size > 0 && points[0].copy >= 0; }
  bool carriesCopyRewrite() const { return size > 0 && points[0].copyRewrite >= 0; }
  bool carriesRewrite() const {
    for (size_t k = 0; k < size; ++k) {
      if (points[k].rewrite > 0) return true;
    }
    return false;
  }
  // Beta and gamma at working set `ws` (the curve must not be empty), alpha and the copy's cost
  // where the curve carries them (`alpha` and `copy` are left alone where it does not), and the
  // rewrite costs where it carries them (left alone where no point has one, or where it carries
  // no copy's rewrite).
  void read(double ws, double* beta, double* gamma, double* alpha = nullptr, double* copy = nullptr,
            double* rewrite = nullptr, double* copyRewrite = nullptr) const {
    const Point& first = points[0];
    const Point& last = points[size - 1];
    const bool withAlpha = alpha != nullptr && carriesAlpha(), withCopy = copy != nullptr && carriesCopy(),
               withRewrite = rewrite != nullptr && carriesRewrite(),
               withCopyRewrite = copyRewrite != nullptr && carriesCopyRewrite();
    if (ws <= first.workingSet || size == 1) {
      *beta = first.beta, *gamma = first.gamma;
      if (withAlpha) *alpha = first.alpha;
      if (withCopy) *copy = first.copy;
      if (withRewrite) *rewrite = first.rewrite;
      if (withCopyRewrite) *copyRewrite = first.copyRewrite;
      return;
    }
    if (ws >= last.workingSet) {
      *beta = last.beta, *gamma = last.gamma;
      if (withAlpha) *alpha = last.alpha;
      if (withCopy) *copy = last.copy;
      if (withRewrite) *rewrite = last.rewrite;
      if (withCopyRewrite) *copyRewrite = last.copyRewrite;
      return;
    }
    size_t k = 1;
    while (points[k].workingSet < ws) ++k;
    const Point& lo = points[k - 1];
    const Point& hi = points[k];
    const double t = std::log(ws / lo.workingSet) / std::log(hi.workingSet / lo.workingSet);
    *beta = lo.beta + t * (hi.beta - lo.beta);
    *gamma = lo.gamma + t * (hi.gamma - lo.gamma);
    if (withAlpha) *alpha = lo.alpha + t * (hi.alpha - lo.alpha);
    if (withCopy) *copy = lo.copy + t * (hi.copy - lo.copy);
    if (withRewrite) *rewrite = lo.rewrite + t * (hi.rewrite - lo.rewrite);
    if (withCopyRewrite) *copyRewrite = lo.copyRewrite + t * (hi.copyRewrite - lo.copyRewrite);
  }
};

// How a level's costs depend on how many of the host's processes are busy. A level is calibrated
// with every process of the host busy at once (every lane, every node team, the whole flat
// communicator), but a binomial tree's first round keeps one of p ranks receiving and a leader
// composition's lane phase one rank of each node. Where the host's processes share its cores (8
// ranks on 2 cores), a phase that keeps fewer of them busy runs faster, and its data sits in less
// of the cache; with a core each, one copy alone still runs faster than two at once (they share
// the memory system). So calibration also measures the level with only the share `share` of the
// processes busy (one lane alone, one pair of the flat communicator, each node's root reducing;
// on 2 ranks, one rank receiving a broadcast) and keeps what it found as fractions of the busy
// costs, beta's and gamma's per working set (a
// curve of ratios); between the two shares the costs are interpolated linearly in the share
// (processor sharing: a core's time is split among its busy processes).
struct HostShare {
  double share = 1;     // 1: never measured alone (the costs do not depend on the share)
  double alpha = 1;     // alpha alone, as a fraction of busy
  // Per working set: beta and gamma alone as fractions of busy (empty: 1), and alpha's where the
  // busy curve carries alpha (alone, alpha keeps the small sizes' value while the busy one grows).
  BandwidthCurve ratios;
  // Measured where the host's processes outnumber its cores (they take turns on them); false where
  // each has its own (2 ranks on 2 cores: alone, one copy runs while the other side waits, and
  // outruns two at once on the shared memory system). The root-centred node steps pipeline only in
  // the second case (kernels/plan/node_costs.cc).
  bool coresShared = true;

  // The factors on the busy alpha, beta and gamma of a call of working set `ws` when the share `s`
  // of the processes is busy.
  void factors(double ws, double s, double* fa, double* fb, double* fg) const {
    *fa = *fb = *fg = 1;
    if (share >= 1) return;
    const double w = std::clamp((s - share) / (1 - share), 0.0, 1.0);
    double rb = 1, rg = 1, ra = alpha;
    if (!ratios.empty()) ratios.read(ws, &rb, &rg, &ra);
    *fa = ra + (1 - ra) * w;
    *fb = rb + (1 - rb) * w;
    *fg = rg + (1 - rg) * w;
  }
};

// A level's costs as one phase of one call sees them: alpha, beta and gamma are the prices to use;
// with a curve, beta and gamma come from it at the call's working set, and with a HostShare all
// three are scaled for the share of the host's processes the phase keeps busy.
struct LinkCost {
  double alpha = 2e-6;        // seconds per message
  double beta = 1.0 / 4e9;    // seconds per byte moved
  double gamma = 1.0 / 4e9;   // seconds per byte reduced (per input)
  // The node level: bytes a node step moves per round, each round paying alpha (the host
  // segment's 256 KiB slots; a GPU node's peer buffers are larger).
  double roundBytes = 256 << 10;
  // Seconds per byte of a copy within a rank's own memory (an allgather's own block from the send
  // buffer, Bruck's final rotation): the level's own curve where calibration measured it (the
  // copy an allgather out of place makes, timed on its own), else the flat level's measured one,
  // else the node level's beta; set by LevelCosts::forWorkingSet (0: such copies are free).
  double copy = 0;
  // Seconds per byte a rank writes into its own buffer where a peer read it through a single-copy
  // message since the rank last wrote it (kernels/plan/peer_reads.h): between processes of one
  // host, the reader's core keeps the lines it read, and each write has to take them back (on the
  // development VM 2 ranks, 64 KiB - 1 MiB; nothing where the lines have left the caches, nor
  // where a NIC reads the buffer). Calibration measures it where each process has a core; 0
  // elsewhere. Priced on top of the formulas by the plans' counts (flatAlgorithmPrice). This is a
  // reduction's write (calibration times it as one), which reads each line before it writes it.
  double rewrite = 0;
  // The same for a copy within the rank or a message's receipt, whose stores overwrite whole lines:
  // on the development VM's 2 ranks placed on two L3s a Bruck allgather's copy of its own block
  // into the block its peer had read paid 0.26-0.33 of `rewrite` per byte at 64 KiB - 1 MiB, and a
  // scatter-allgather broadcast's receipts 0.34-0.54 (priced at `rewrite`, both came out 1.05-1.9x
  // their measured times there). Calibration times it where it times `rewrite` (the Bruck
  // allgather against the ring: perf/calibrate.cc); < 0 where nobody measured it: a reduction's.
  double copyRewrite = -1;
  double rewriteOfACopy() const { return copyRewrite >= 0 ? copyRewrite : rewrite; }
  bool pricesRewrites() const { return rewrite > 0 || rewriteOfACopy() > 0; }
  // Every rank of the level's groups runs on one host (callCosts sets it where the call's
  // communicator does): a message is its receiver's copy (single-copy shared memory), so the
  // messages one rank sends to several peers are copied by them at once, and those several peers
  // send to one rank are copied by it one after another. Through a network a rank's NIC sends its
  // messages one after another instead. The root-centred formulas price which one the level does
  // (the linear gather and scatter; on the development VM's 8 ranks the network's serial root
  // priced the linear scatter 4.9-8.6x its measured time, 64 KiB - 16 MiB).
  bool oneHost = false;
  BandwidthCurve curve{};  // empty: beta and gamma do not depend on the working set
  HostShare alone{};
  double workingSet = 0;  // the call's (every process of the host), once forWorkingSet set it
  double share = 1;       // the share of the host's processes these costs assume busy
  // A core that every message of the level crosses and that carries less than all of its ranks
  // can send (a tapered network; strata-model's machine.core_bandwidth): seconds per byte of each
  // rank's part of it when every rank sends across it at once (ranks / the core's bytes per
  // second; 0: no such core). A phase that keeps the share s of the ranks sending pays at least
  // s coreBeta per byte: beta is then max(linkBeta, share coreBeta), where linkBeta is the beta of
  // the level's own links (the curve's at the working set, scaled for the host share), so a tree's
  // first rounds of few senders pay their links and a ring's rounds the core.
  double coreBeta = 0;
  double linkBeta = 0;  // with coreBeta: beta before the core's floor
  // The flat level on nodes of several ranks (consecutive blocks of `coreNodeRanks`): coreBeta
  // prices a ring's crossings, one rank of each node's message on the core; a phase in which the
  // fraction f of the messages crosses between nodes loads the core coreNodeRanks f times as much
  // (coreScale; 0 where every message stays in its node). Set per round by `crossing`.
  int coreNodeRanks = 1;
  double coreScale = 1;

  // The costs for a call whose host-wide working set is `ws`, every process busy.
  LinkCost forWorkingSet(double ws) const {
    LinkCost out = atShare(1 / share);  // every process busy again
    out.workingSet = ws;
    if (!curve.empty()) {
      curve.read(ws, &out.beta, &out.gamma, &out.alpha, &out.copy, &out.rewrite, &out.copyRewrite);
      if (coreBeta > 0) out.withCoreFloor(out.beta);
    }
    return out;
  }
  // These costs behind a core of `seconds per byte` as coreBeta describes (0: none).
  LinkCost withCore(double secondsPerByte) const {
    LinkCost out = *this;
    const double own = coreBeta > 0 ? linkBeta : beta;
    out.coreBeta = secondsPerByte;
    if (secondsPerByte > 0) out.withCoreFloor(own);
    else out.beta = own;
    return out;
  }
  // The same costs without the rewrite: for a level whose messages cross between hosts, where a
  // NIC reads the buffer and no other core's cache holds its lines.
  LinkCost withoutRewrite() const {
    LinkCost out = *this;
    out.rewrite = 0;
    if (out.copyRewrite > 0) out.copyRewrite = 0;
    for (size_t k = 0; k < out.curve.size; ++k) {
      out.curve.points[k].rewrite = 0;
      if (out.curve.points[k].copyRewrite > 0) out.curve.points[k].copyRewrite = 0;
    }
    return out;
  }
  // The costs of a phase that keeps the share `s` (0 < s <= 1) of the processes these costs assume
  // busy: a leader composition's lanes (s = 1/ranks per node), a tree's early rounds. A copy within
  // a rank scales as beta does: calibration times it with every process of the host copying at once,
  // and fewer busy processes share the cores and the memory system as fewer messages do (8 ranks on
  // the 2-core VM: a node scatter's root copying its own block alone, priced at the copy curve every
  // process measured at once, put a 2x4 full-lane broadcast of 16 MiB at +19%, +9% without the copy).
  LinkCost atShare(double s) const {
    LinkCost out = *this;
    out.share = std::clamp(share * s, 1e-9, 1.0);
    double a0, b0, g0, a1, b1, g1;
    alone.factors(workingSet, share, &a0, &b0, &g0);
    alone.factors(workingSet, out.share, &a1, &b1, &g1);
    out.alpha *= a1 / a0;
    out.gamma *= g1 / g0;
    out.copy *= b1 / b0;
    if (coreBeta > 0) out.withCoreFloor(linkBeta * b1 / b0);
    else out.beta *= b1 / b0;
    return out;
  }
  // The costs of a round in which the fraction `f` of the messages crosses between nodes (the
  // others stay in their node and pass no core): on the flat level of nodes of several ranks
  // behind a core, its floor scaled from a ring's crossings (one of coreNodeRanks) to f.
  LinkCost crossing(double f) const {
    if (!pricesCrossings()) return *this;
    LinkCost out = *this;
    out.coreScale = std::max(f, 0.0) * coreNodeRanks;
    out.withCoreFloor(linkBeta);
    return out;
  }
  // Whether `crossing` can change these costs (a core, nodes of several ranks): else the rounds of
  // an algorithm all cost the same and its closed form holds.
  bool pricesCrossings() const { return coreBeta > 0 && coreNodeRanks > 1; }
  // The cheaper per-byte costs (beta, gamma, the copy's) of these and `other`, the same level's
  // costs at another working set (LevelCosts::forWorkingSet of a call in place).
  void takeCheaperBytes(const LinkCost& other) {
    gamma = std::min(gamma, other.gamma);
    copy = std::min(copy, other.copy);
    if (coreBeta > 0) withCoreFloor(std::min(linkBeta, other.linkBeta));
    else beta = std::min(beta, other.beta);
  }
  // With a core: the links' own beta `ownBeta`, and beta at least the core's share.
  void withCoreFloor(double ownBeta) {
    linkBeta = ownBeta;
    beta = std::max(ownBeta, share * coreScale * coreBeta);
  }
};

inline int ceilLog2(int p) {
  int k = 0;
  while ((1 << k) < p) ++k;
  return k;
}

// The costs of a phase in which `receivers` of the p ranks receive at once. A host's share of busy
// processes counts the receivers: a message between processes of one host is copied by its
// receiver (single-copy shared memory), while the sender waits for it to finish. On the 2-core
// development VM one 2-rank message runs about twice as fast per byte as the two of an exchange.
inline LinkCost receiving(const LinkCost& c, double receivers, int p) {
  if (p <= 1) return c;
  return c.atShare(std::min(1.0, receivers / p));
}
// The costs of a round in which every rank i of p sends to i + d (mod p) (Bruck's, circulant's
// rounds; a ring's d = 1): where the level prices crossings between nodes (LinkCost::crossing), at
// the fraction of the p messages whose ranks are on different nodes.
inline LinkCost shiftRound(const LinkCost& c, int p, int d) {
  if (!c.pricesCrossings() || p <= 1) return c;
  const int n = c.coreNodeRanks;
  const int shift = (d % p + p) % p;
  long crossing = 0;
  if (p % n == 0) {
    // Whole nodes: rank s of a node lands q = shift / n nodes on, one more where s + shift % n
    // carries into the next node (shift % n of the n ranks); it crosses unless that is a whole turn.
    const int nodes = p / n, q = shift / n, carried = shift % n;
    const bool stays = q % nodes == 0, carriedStays = (q + 1) % nodes == 0;
    crossing = static_cast<long>(nodes) * ((stays ? 0 : n - carried) + (carriedStays ? 0 : carried));
  } else {
    for (int i = 0; i < p; ++i) crossing += i / n != (i + shift) % p / n;
  }
  return c.crossing(static_cast<double>(crossing) / p);
}
// A pipelined broadcast's costs (chain, trees, hypercube) in its steady state, where every rank but
// the root receives: its build and its cost choose the blocks at these, so the plan priced is the
// plan run.
inline LinkCost broadcastPipelineLink(const LinkCost& c, int p) { return receiving(c, p - 1, p); }
// The costs its rounds pay: `blocks` blocks each received once by the p - 1 ranks but the root
// (`copies` times over where each rank receives that many parts of a block, a tree per half) over
// `rounds` rounds keep (p - 1) copies blocks / rounds receivers busy on average, at most p - 1. A
// pipeline of few blocks is mostly filling and draining: one block down a chain of 8 ranks keeps
// one receiver busy at a time, not 7 (2x4 chain broadcast at 64 KiB: 87 us measured, 138 priced
// at the steady state's costs).
inline LinkCost broadcastRoundsLink(const LinkCost& c, int p, double blocks, double rounds, double copies = 1) {
  if (p <= 1 || rounds <= 0) return c;
  return receiving(c, std::min(p - 1.0, (p - 1.0) * copies * blocks / rounds), p);
}
// Round r (from 0) of a binomial tree on p members: its messages join members v and v + h,
// h = span / 2^(r+1) (span the smallest power of two >= p), v a multiple of 2h with v + h < p
// (inter_node/algorithms/binomial_tree.cc; a broadcast sends them in this order, a reduce in the
// reverse, the same rounds): 2^r of them where p is a power of two, fewer elsewhere (on 24 ranks 1,
// 1, 3, 6, 12), each a receiver busy: its costs at that share. Member v is rank (v + root) mod p
// (the rooted collectives rotate their group): where the level prices crossings between nodes
// (LinkCost::crossing), at the fraction of the round's messages whose ranks are on different nodes
// (a tree from rank 0 on nodes of 8: its first rounds cross, its last 3 stay in).
inline LinkCost binomialRound(const LinkCost& c, int r, int p, int root = 0) {
  if (p <= 1 || r >= 30) return c;
  const int h = (1 << ceilLog2(p)) >> (r + 1);
  if (h == 0) return c;
  const int messages = (p + h - 1) / (2 * h);  // the v < p - h that are multiples of 2h
  const LinkCost k = receiving(c, messages, p);
  if (!k.pricesCrossings()) return k;
  const int n = k.coreNodeRanks;
  int crossing = 0;
  for (int v = 0; v + h < p; v += 2 * h) crossing += (v + root) % p / n != (v + h + root) % p / n;
  return k.crossing(static_cast<double>(crossing) / messages);
}
// A binomial broadcast's or reduce's ceil(log2 p) rounds, each moving `bytes` and reducing
// `reduced`, at the costs of the share each keeps busy:
//   sum over r of (alpha_r + beta_r bytes + gamma_r reduced) = ceil(log2 p)(alpha + beta bytes + gamma reduced)
inline double binomialTreeTime(int p, const LinkCost& c, double bytes, double reduced = 0, int root = 0) {
  double t = 0;
  for (int r = 0; r < ceilLog2(p); ++r) {
    const LinkCost k = binomialRound(c, r, p, root);
    t += k.alpha + k.beta * bytes + k.gamma * reduced;
  }
  return t;
}
// A binomial scatter's or gather's rounds: the root sends (receives) (p-1)/p of the m bytes, its
// round r message the subtree of member h = span / 2^(r+1), min(h, p - h) of the p blocks (half of
// them in the round that keeps 2 ranks busy, a quarter in the one that keeps 4 busy, ... where p
// is a power of two; on 24 ranks a third, a third, a sixth, ...):
//   sum over r of (alpha_r + beta_r min(h, p - h) m / p) = ceil(log2 p) alpha + (p-1)/p beta m
inline double binomialSpreadTime(int p, const LinkCost& c, double m, int root = 0) {
  const int rounds = ceilLog2(p);
  double t = 0;
  for (int r = 0; r < rounds; ++r) {
    const int h = 1 << (rounds - r - 1);
    const LinkCost k = binomialRound(c, r, p, root);
    t += k.alpha + k.beta * std::min(h, p - h) * m / p;
  }
  return t;
}

inline int floorPow2(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

// The levels of the machine: the flat communicator (any two ranks over MPI), the node (its shared
// memory or peer GPU memory) and a lane between nodes (MPI, all lanes busy at once).
struct LevelCosts {
  LinkCost flat;
  LinkCost node{0.5e-6, 1.0 / 8e9, 1.0 / 4e9};
  LinkCost lane;

  // The parameters for a call whose host-wide working set is `workingSetBytes` (the curves read).
  LevelCosts forWorkingSet(double workingSetBytes) const {
    LevelCosts out = *this;
    out.flat = flat.forWorkingSet(workingSetBytes);
    out.node = node.forWorkingSet(workingSetBytes);
    out.lane = lane.forWorkingSet(workingSetBytes);
    // A copy within a rank is the rank's own memory at work, whatever level the step belongs to:
    // the flat level's measured copy serves the node level (a composition's level of one member
    // copying its sums on one node) and a lane without its own. The node level's beta, the price of
    // a byte through the shared slots (2-3x a plain copy on the AMD VM), only where none was measured.
    const double ownCopy = flat.curve.carriesCopy() ? out.flat.copy : out.node.beta;
    out.node.copy = ownCopy;
    if (!flat.curve.carriesCopy()) out.flat.copy = ownCopy;
    if (!lane.curve.carriesCopy()) out.lane.copy = ownCopy;
    return out;
  }
  // The parameters for a call in place whose out-of-place call's working set is `workingSetBytes`
  // and whose own is `inPlaceBytes` (smaller: its buffers overlap). It makes the out-of-place
  // call's messages and rounds through less memory: alpha and the host shares are the out-of-place
  // call's, and each level's beta, gamma and copy the cheaper of the two working sets'. Where the
  // smaller one sits below a cache's knee that the larger one is above, its bytes move at the
  // smaller one's costs (2 ranks on the Zen 5 VM, 32 MiB of L3: a 16 MiB full-lane allreduce took
  // 1187 us in place, 1555 out of place, their working sets 32 and 64 MiB); where both sit below,
  // the smaller one's costs are higher only for the per-call overheads the curve takes into beta
  // at small calls, which a call in place pays as the out-of-place one does (keyed at its own
  // working set, a 1 MiB full-lane allreduce in place priced 101 us against 85 measured).
  LevelCosts forWorkingSet(double workingSetBytes, double inPlaceBytes) const {
    LevelCosts out = forWorkingSet(workingSetBytes);
    if (!(inPlaceBytes > 0 && inPlaceBytes < workingSetBytes)) return out;
    const LevelCosts small = forWorkingSet(inPlaceBytes);
    out.flat.takeCheaperBytes(small.flat);
    out.node.takeCheaperBytes(small.node);
    out.lane.takeCheaperBytes(small.lane);
    return out;
  }
};

// The pipelining lemma (002, "The power of pipelining"): with a latency of k rounds to deliver the
// first block and a new block every s rounds, cutting m bytes into M blocks takes
// (k + s(M-1))(alpha + beta m / M), minimised at M* = sqrt((k - s) beta m / (s alpha)).
inline size_t pipelineBlocks(int k, int s, const LinkCost& c, double bytes, size_t maxBlocks) {
  if (k <= s || bytes <= 0 || maxBlocks <= 1) return 1;
  const double best = std::sqrt((k - s) * c.beta * bytes / (s * c.alpha));
  if (std::isnan(best)) return 1;  // no cost at all (alpha and beta 0): any M will do
  const double clamped = std::clamp(best, 1.0, static_cast<double>(maxBlocks));
  return static_cast<size_t>(std::llround(clamped));
}
inline double pipelineTime(int k, int s, const LinkCost& c, double bytes, size_t blocks) {
  const double M = static_cast<double>(blocks);
  return (k + s * (M - 1)) * (c.alpha + c.beta * bytes / M);
}

}  // namespace strata
