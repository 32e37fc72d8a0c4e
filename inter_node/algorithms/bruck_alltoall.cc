// Bruck alltoall (002, "Bandwidth/Latency trade-offs for alltoall", "circulant Bruck"; Bruck, Ho,
// Kipnis, Upfal, Weathersby 1997): rotate so that block i is the one for rank r+i; in round k send
// to r + 2^k every block whose index has bit k set (packed into one message) and receive the same
// indices from r - 2^k; finally block i holds the data from rank r-i. ceil(log2 p) messages of about
// half the data each: the small-block alltoall.
//   T(m) = ceil(log2 p)(alpha + beta m/2) + c (2 m + 2 ceil(log2 p) m/2)   (m: a rank's send bytes;
//   c: a copy within the rank, for the rotations and each round's packing)
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions&) {
  const int p = g.size();
  const int r = g.me;
  const size_t n = a.count;
  const size_t pn = n * static_cast<size_t>(p);
  const Slice send{BufferId::kSend, 0, pn}, recv{BufferId::kRecv, 0, pn};
  auto block = [n](Slice s, int i) { return s.sub(static_cast<size_t>(i) * n, n); };
  // Rotation: work[i] = the block for rank (r + i) mod p, two runs of blocks.
  const Slice work = b.scratch(pn);
  b.label("bruck-rotate", 0);
  b.copy(work.sub(0, static_cast<size_t>(p - r) * n), send.sub(static_cast<size_t>(r) * n, static_cast<size_t>(p - r) * n));
  b.copy(work.sub(static_cast<size_t>(p - r) * n, static_cast<size_t>(r) * n), send.sub(0, static_cast<size_t>(r) * n));
  const Slice outbox = b.scratch(pn), inbox = b.scratch(pn);
  int round = 0;
  for (int d = 1; d < p; d <<= 1, ++round) {
    b.label("bruck", round);
    // Indices with bit `d` set come in runs [d, 2d), [3d, 4d), ...: pack run by run.
    size_t packed = 0;
    std::vector<std::pair<int, int>> runs;
    for (int start = d; start < p; start += 2 * d) {
      const int len = std::min(d, p - start);
      runs.push_back({start, len});
      b.copy(outbox.sub(packed, static_cast<size_t>(len) * n), work.sub(static_cast<size_t>(start) * n, static_cast<size_t>(len) * n));
      packed += static_cast<size_t>(len) * n;
    }
    if (packed == 0) continue;
    b.send(g.relative(d), outbox.sub(0, packed), round);
    b.recv(g.relative(-d), inbox.sub(0, packed), round);
    size_t pos = 0;
    for (const auto& [start, len] : runs) {
      b.copy(work.sub(static_cast<size_t>(start) * n, static_cast<size_t>(len) * n), inbox.sub(pos, static_cast<size_t>(len) * n));
      pos += static_cast<size_t>(len) * n;
    }
  }
  // work[i] now holds the block from rank (r - i) mod p.
  b.label("bruck-unrotate", 0);
  for (int i = 0; i < p; ++i) b.copy(block(recv, (r - i + p) % p), block(work, i));
}

// Round k sends the blocks whose index has bit k set (about half of them), packed into the outbox
// and unpacked from the inbox; the rotations copy every block twice more. The copies stay within
// the rank, at the level's copy cost.
double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const double block = callBytes(a);
  double t = 0, packed = 0;
  for (int d = 1; d < p; d <<= 1) {
    int blocks = 0;
    for (int start = d; start < p; start += 2 * d) blocks += std::min(d, p - start);
    const LinkCost k = shiftRound(c, p, d);  // to rank r + d, at the round's crossings
    t += k.alpha + k.beta * blocks * block;
    packed += blocks * block;
  }
  return t + c.copy * (2 * block * p + 2 * packed);
}

}  // namespace

extern const FlatAlgorithm kBruckAllToAll = {"bruck", Collective::kAllToAll, nullptr, build, cost,
                                             "ceil(log p)(a + b m/2) + c (2 + ceil(log p)) m"};

}  // namespace strata
