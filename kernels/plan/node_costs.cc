#include "kernels/plan/node_costs.h"

#include <algorithm>
#include <cmath>

namespace strata {

double nodeOpRounds(double sharedBytes, const LinkCost& c) {
  return std::max(1.0, std::ceil(sharedBytes / std::max(c.roundBytes, 1.0)));
}

// Every node op is priced by what its busiest member does: beta for each byte it copies into its
// slot and for each byte it writes into its own buffers (a copy out of a peer's slot, or a
// reduction's result), gamma for each input byte it reduces (reading the peers' parts is part of
// the reduction). Counting the result's writes matters: a one-shot allreduce writes all m bytes on
// every member, a reduce-scatter m/n. A member's copy of its own piece (a broadcast's root out of
// place, a scatter's or gather's root's own block, an all-to-all's own part, a team of one) is a
// copy within the rank, priced at the level's `copy` (LevelCosts::forWorkingSet), not at beta, the
// price of a byte that crosses to another process: on the development VM a 2-rank node broadcast of
// 4 MiB out of place took 201 us against 123 in place where the two processes share a cache and
// the root's two copies set the pace (its own copy 78 us: 54 GB/s, the copy curve's 51), and 176
// against 175 where they do not and the member's reads across caches do.
double nodeReduceScatterCost(double m, int n, const LinkCost& c) {
  if (n <= 1) return c.copy * m;
  const double shared = m * (n - 1) / n;
  return nodeOpRounds(shared, c) * c.alpha + c.beta * (shared + m / n) + c.gamma * m;
}
double nodeAllGatherCost(double m, int n, const LinkCost& c) {
  if (n <= 1) return 0;
  return nodeOpRounds(m / n, c) * c.alpha + c.beta * (m / n + m * (n - 1) / n);
}
// The root-centred ops keep only the root of each node busy for part of their time (it reduces
// every member's input, or writes the whole vector into its slot, or reads every member's slot):
// that part is priced at the share 1/n of the host's processes (kernels/plan/cost.h, HostShare).
LinkCost nodeRootAlone(int n, const LinkCost& c) { return c.atShare(1.0 / n); }
// Their other part keeps the members busy while the root waits: the share (n - 1)/n.
LinkCost nodeMembersBusy(int n, const LinkCost& c) { return c.atShare((n - 1.0) / n); }

// The root-centred ops pipeline through the double-buffered slots: the root writes (or reduces)
// round r + 1 while the members read (or write) round r. Where each process has a core, the first
// round's root side and the last round's members' side run alone, each while the other side waits,
// and the rounds between keep both busy, the slower side setting the pace (2-rank leader allreduce
// at 4 MiB: 774 us measured, 1426 priced as the sum of both sides, 822 as their pipeline):
//   (R - 1)/R max(root, members) + (root alone + members alone)/R
// with each side's alone costs where calibration measured the level alone (one copy alone outruns
// two at once on a shared memory system: a 2-rank node broadcast of one round at 64 KiB took 10 us,
// 18 priced at the busy costs), its busy ones otherwise (then max + min/R). Where the host's
// processes outnumber its cores (HostShare::coresShared) the two sides take turns on the same cores
// and their work adds up, each at its share (8 processes on 2 cores: a 16 MiB node reduce took
// 20-22 ms, priced 23.8 as the sum and 13.9 as the pipeline). `side(costs)` prices a side's work.
// `rootTail(costs)`, where the root writes: the part of its side it does after publishing a round,
// its own copy out of its send buffer (a broadcast's out of place, a scatter's own block), which
// runs beside the members' reads of that round; the last round's ends then overlap, each at the
// busy costs, where the sum of both alone had priced a 2-rank leader broadcast of one round out of
// place over (fid39 on the development VM, 64 KiB: 6.9 us priced, 5.1 measured; +55% round by
// round, +29% at 256 KiB).
namespace {
double noTail(const LinkCost&) { return 0; }
template <typename Root, typename Members, typename Tail = decltype(&noTail)>
double nodePipeline(const LinkCost& c, int n, double rounds, Root&& root, Members&& members, Tail&& rootTail = &noTail) {
  const LinkCost rootAlone = nodeRootAlone(n, c), membersAlone = nodeMembersBusy(n, c);
  if (c.alone.share < 1 && c.alone.coresShared) return root(rootAlone) + members(membersAlone);
  const double r = std::max(rounds, 1.0);
  const double steady = r > 1 ? (r - 1) / r * std::max(root(c), members(c)) : 0;
  const double tail = rootTail(c);
  const double ends = tail > 0 ? root(rootAlone) - rootTail(rootAlone) + std::max(tail, members(c))
                               : root(rootAlone) + members(membersAlone);
  return steady + ends / r;
}
}  // namespace

// Their rounds pay the root's alpha too: each hands one slot between the root and the members, not
// every member's to every other's as the symmetric ops do, and it is the alpha that calibration
// fits to a node reduce measured with the roots alone busy (perf/calibration_fit.h, fitAlone; 2x4
// on the AMD VM: 0.54 of the busy node alpha, which had priced a leader broadcast's node step at
// 64 KiB at 31 us of alpha alone, the whole step measuring about 25).
double nodeBroadcastCost(double m, int n, const LinkCost& c, bool rootCopies) {
  // In place, a team of one moves nothing (the compositions' node broadcasts after a lane step).
  if (n <= 1) return rootCopies ? c.copy * m : 0;
  const double rounds = nodeOpRounds(m, c);
  auto copy = [m, rootCopies](const LinkCost& k) { return rootCopies ? k.copy * m : 0; };
  auto root = [m, copy](const LinkCost& k) { return k.beta * m + copy(k); };
  auto members = [m](const LinkCost& k) { return k.beta * m; };
  return rounds * nodeRootAlone(n, c).alpha + nodePipeline(c, n, rounds, root, members, copy);
}
double nodeReduceCost(double m, int n, const LinkCost& c) {
  if (n <= 1) return c.copy * m;
  const double rounds = nodeOpRounds(m, c);
  return rounds * nodeRootAlone(n, c).alpha +
         nodePipeline(c, n, rounds, [m, n](const LinkCost& k) { return k.beta * m + k.gamma * m * n; },
                      [m](const LinkCost& k) { return k.beta * m; });
}
double nodeAllReduceCost(double m, int n, const LinkCost& c) {
  if (n <= 1) return c.copy * m;
  return nodeOpRounds(m, c) * c.alpha + 2 * c.beta * m + c.gamma * m * n;
}
// Gather and scatter: the root's side moves the whole m, each member's its m/n; `shared`, the most
// one member puts through its slot, sets the rounds (node_op_layout.cc): a gather's members m/n
// each, a scatter's root every other member's part, (n - 1)/n of m.
// A scatter's root copies its own block after publishing each round (its tail); a gather's root
// reads, its own block too, after its members publish.
namespace {
double nodePiecesCost(double m, int n, double shared, bool rootWrites, bool rootCopies, const LinkCost& c) {
  if (n <= 1) return rootCopies ? c.copy * m : 0;
  const double rounds = nodeOpRounds(shared, c);
  const double own = rootCopies ? m / n : 0;
  return rounds * nodeRootAlone(n, c).alpha +
         nodePipeline(c, n, rounds, [m, n, own](const LinkCost& k) { return k.beta * m * (n - 1) / n + k.copy * own; },
                      [m, n](const LinkCost& k) { return k.beta * m / n; },
                      [own, rootWrites](const LinkCost& k) { return rootWrites ? k.copy * own : 0; });
}
}  // namespace
double nodeGatherCost(double m, int n, const LinkCost& c, bool rootCopies) {
  return nodePiecesCost(m, n, m / n, false, rootCopies, c);
}
double nodeScatterCost(double m, int n, const LinkCost& c, bool rootCopies) {
  return nodePiecesCost(m, n, m * (n - 1) / n, true, rootCopies, c);
}
double nodeAllToAllCost(double m, int n, const LinkCost& c) {
  if (n <= 1) return c.copy * m;
  const double shared = m * (n - 1) / n;
  return nodeOpRounds(shared, c) * c.alpha + 2 * c.beta * shared + c.copy * m / n;
}
double nodeBarrierCost(int n, const LinkCost& c) { return n <= 1 ? 0 : c.alpha; }

namespace {
// What one member does in a node op, from its own description: bytes it puts into its slot for the
// others, bytes it writes into its buffers out of its peers' slots or as a reduction's result,
// bytes it copies out of its own pieces (a copy within the rank), input bytes it reduces, and
// whether it reads a peer's slot.
struct MemberWork {
  double shared = 0, written = 0, copied = 0, reduced = 0;
  bool readsPeers = false;
};
MemberWork workOf(const NodeOpDesc& d, double es) {
  MemberWork w;
  const size_t me = static_cast<size_t>(d.me);
  for (size_t i = 0; me < d.writeCounts.size() && i < d.writeCounts[me].size(); ++i) {
    if (d.writeShared[me][i]) w.shared += static_cast<double>(d.writeCounts[me][i]) * es;
  }
  for (const NodeRead& r : d.reads) {
    // My own piece onto itself (a broadcast's root whose output is its input) moves nothing.
    if (r.sources.size() == 1 && r.sources[0].member == me && r.sources[0].index < d.writes.size() &&
        d.writes[r.sources[0].index] == r.dst) {
      continue;
    }
    const double bytes = static_cast<double>(r.dst.count) * es;
    if (r.sources.size() == 1 && r.sources[0].member == me) {
      w.copied += bytes;
      continue;
    }
    w.written += bytes;
    if (r.sources.size() > 1) w.reduced += bytes * static_cast<double>(r.sources.size());
    for (const NodePiece& src : r.sources) w.readsPeers = w.readsPeers || src.member != me;
  }
  return w;
}
}  // namespace

namespace {
// A root-centred op is one where the members that put bytes into their slots and the members that
// read a peer's slot are apart, one side a single member (the root): a broadcast's or scatter's
// root writes, the others read; a reduce's or gather's members write, the root reads. Its time is
// the formulas' pipeline of the two sides, each side a member's whole work (a scatter's root copies
// its own block as well as writing the others'). Every other op is priced by its busiest member,
// its writes and reads in turn.
double teamCost(const std::vector<MemberWork>& work, const LinkCost& c) {
  const int n = static_cast<int>(work.size());
  double maxShared = 0;
  int writers = 0, readers = 0, writer = -1, reader = -1;
  bool apart = true;
  for (int j = 0; j < n; ++j) {
    const MemberWork& w = work[static_cast<size_t>(j)];
    maxShared = std::max(maxShared, w.shared);
    if (w.shared > 0) ++writers, writer = j;
    if (w.readsPeers) ++readers, reader = j;
    apart = apart && !(w.shared > 0 && w.readsPeers);
  }
  const double rounds = nodeOpRounds(maxShared, c);
  auto writes = [&work](int j, const LinkCost& k) { return k.beta * work[static_cast<size_t>(j)].shared; };
  auto reads = [&work](int j, const LinkCost& k) {
    const MemberWork& w = work[static_cast<size_t>(j)];
    return k.beta * w.written + k.copy * w.copied + k.gamma * w.reduced;
  };
  if (n > 1 && apart && writers > 0 && readers > 0 && (writers == 1 || readers == 1)) {
    const bool rootWrites = writers == 1;
    const int root = rootWrites ? writer : reader;
    auto rootSide = [&](const LinkCost& k) { return writes(root, k) + reads(root, k); };
    auto membersSide = [&](const LinkCost& k) {
      double most = 0;
      for (int j = 0; j < n; ++j) {
        if (j != root) most = std::max(most, writes(j, k) + reads(j, k));
      }
      return most;
    };
    // A writing root's reads (its own copies) come after it publishes each round.
    auto rootTail = [&](const LinkCost& k) { return rootWrites ? reads(root, k) : 0; };
    return rounds * nodeRootAlone(n, c).alpha + nodePipeline(c, n, rounds, rootSide, membersSide, rootTail);
  }
  double busiest = 0;
  for (int j = 0; j < n; ++j) busiest = std::max(busiest, writes(j, c) + reads(j, c));
  // A team of one hands no slot to anyone: its op is its own copies (the formulas' n <= 1).
  return (n > 1 ? rounds * c.alpha : 0) + busiest;
}
}  // namespace

double nodeOpTeamCost(const std::vector<const NodeOpDesc*>& team, size_t elemSize, const LinkCost& c) {
  std::vector<MemberWork> work;
  for (const NodeOpDesc* d : team) work.push_back(workOf(*d, static_cast<double>(elemSize)));
  return teamCost(work, c);
}

// A node scan (intra_node/node_collectives.h, nodeScan): member j puts its input into its slot for
// the members after it, and reads members 0..j's (0..j-1's for an exclusive scan) into its output:
// one piece its own copy, one a peer's copy, more a reduction. Priced by the rule every node op's
// description is (teamCost): on 2 members the first writes and the second reads, a root-centred op.
// `inPlace`: the output is the input (member 0 of an inclusive scan then copies nothing).
double nodeScanCost(double m, int n, const LinkCost& c, bool exclusive, bool inPlace) {
  std::vector<MemberWork> work(static_cast<size_t>(std::max(n, 1)));
  for (int j = 0; j < n; ++j) {
    MemberWork& w = work[static_cast<size_t>(j)];
    w.shared = j < n - 1 ? m : 0;
    const int sources = exclusive ? j : j + 1;
    if (sources == 1 && !exclusive) {
      w.copied = inPlace ? 0 : m;
    } else if (sources >= 1) {
      w.written = m;
      w.readsPeers = true;
      if (sources > 1) w.reduced = m * sources;
    }
  }
  return teamCost(work, c);
}

}  // namespace strata
