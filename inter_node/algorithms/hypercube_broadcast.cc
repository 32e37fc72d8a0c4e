// The optimal M - 1 + log2 p round broadcast on the hypercube (Bin Jia; 002, "The power of the
// hypercube: Optimal Broadcast"), for p a power of two. In round j every rank exchanges one block
// with its (j mod q)'th hypercube neighbour, q = log2 p: rank i sends block
// s(i,j) = j - q + (1 - bit(i,j)) NEXTBIT(i)[j mod q] and receives t(i,j) = j - q + bit(i,j)
// NEXTBIT(i)[j mod q], where NEXTBIT(i)[b] is the distance from bit b to the next more significant
// one-bit of i, cyclically (q for i = 0). The root sends block min(j, M-1) and never receives;
// nobody sends to the root; indices past M-1 mean block M-1 again, negative ones nothing.
//   T(m) = (M - 1 + q)(alpha + beta m/M), M from the pipelining lemma (k = q, s = 1)
// (behind strata-model's tapered core, at the messages that cross it, averaged over the rounds).
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

bool isPow2(int p) { return p > 0 && (p & (p - 1)) == 0; }

std::string supports(const CollectiveArgs&, int p) {
  return isPow2(p) ? "" : "needs a power-of-two number of ranks";
}

size_t blocksFor(const CollectiveArgs& a, int q, const LinkCost& c, const BuildOptions& opt) {
  const double bytes = callBytes(a);
  const size_t bySize = std::max<size_t>(1, static_cast<size_t>(bytes / static_cast<double>(opt.minPipelineBytes)));
  const size_t cap = std::min({opt.maxPipelineBlocks, bySize, std::max<size_t>(1, a.count)});
  return pipelineBlocks(q, 1, c, bytes, cap);
}

void build(PlanBuilder& b, const CollectiveArgs& a, const Group& g, const BuildOptions& opt) {
  const Group vg = g.rotated(a.root);
  const int p = vg.size();
  const int i = vg.me;
  const int q = ceilLog2(p);
  const Slice src{BufferId::kSend, 0, a.count}, dst{BufferId::kRecv, 0, a.count};
  if (i == 0) {
    b.label("hypercube-broadcast", 0);
    b.copy(dst, src);
  }
  if (p == 1) return;
  const int M = static_cast<int>(blocksFor(a, q, broadcastPipelineLink(opt.link, p), opt));
  const BlockLayout blocks = BlockLayout::even(a.count, M, std::max<size_t>(1, 64 / a.elemSize()));
  auto block = [&](Slice s, int k) { return s.sub(blocks.offset[static_cast<size_t>(k)], blocks.count[static_cast<size_t>(k)]); };
  std::vector<int> nextbit(static_cast<size_t>(q), q);
  if (i != 0) {
    for (int bit = 0; bit < q; ++bit) {
      for (int d = 1; d <= q; ++d) {
        if ((i >> ((bit + d) % q)) & 1) {
          nextbit[static_cast<size_t>(bit)] = d;
          break;
        }
      }
    }
  }
  // Duplicates of block M-1 arrive into a slot nobody reads.
  const Slice discard = b.scratch(blocks.maxCount());
  std::vector<bool> received(static_cast<size_t>(M), false);
  // Every send is posted once its block is here, not round by round: chained one after another
  // (the one-port rounds, which strata-model's one-message-at-a-time NICs favour), the broadcast
  // measured 1.2-1.6x slower on the development VM's shared memory (8 ranks as 2x4, 256 KiB to
  // 4 MiB, 10 interleaved rounds), where the receivers copy in parallel.
  for (int j = 0; j < M - 1 + q; ++j) {
    b.label("hypercube-broadcast", j);
    const int partner = i ^ (1 << (j % q));
    if (i == 0) {
      const int s = std::min(j, M - 1);
      if (blocks.count[static_cast<size_t>(s)] != 0) b.send(vg.rank(partner), block(src, s), j);
      continue;
    }
    const int bit = (i >> (j % q)) & 1;
    const int s = j - q + (1 - bit) * nextbit[static_cast<size_t>(j % q)];
    const int t = j - q + bit * nextbit[static_cast<size_t>(j % q)];
    // The send first: it carries a block received in an earlier round.
    if (s >= 0 && partner != 0) {
      const int sb = std::min(s, M - 1);
      if (blocks.count[static_cast<size_t>(sb)] != 0) b.send(vg.rank(partner), block(dst, sb), j);
    }
    if (t >= 0) {
      const int tb = std::min(t, M - 1);
      if (blocks.count[static_cast<size_t>(tb)] != 0) {
        const bool duplicate = received[static_cast<size_t>(tb)];
        b.recv(vg.rank(partner), duplicate ? discard.sub(0, blocks.count[static_cast<size_t>(tb)]) : block(dst, tb), j);
        received[static_cast<size_t>(tb)] = true;
      }
    }
  }
}

double cost(const CollectiveArgs& a, int p, const LinkCost& c) {
  const int q = ceilLog2(p);
  if (q == 0) return 0;
  BuildOptions opt;
  opt.link = broadcastPipelineLink(c, p);
  const size_t M = blocksFor(a, q, opt.link, opt);
  const double block = callBytes(a) / static_cast<double>(M);
  const int rounds = static_cast<int>(M) - 1 + q;
  const LinkCost k = broadcastRoundsLink(c, p, static_cast<double>(M), rounds);
  if (!k.pricesCrossings()) return rounds * (k.alpha + k.beta * block);
  // Behind a core, the messages that cross it: round j exchanges along dimension j mod q (on nodes
  // of 8 from a root that starts a node, the 3 lowest dimensions stay in their nodes and the others
  // all cross), and since each send goes once its block is here the rounds overlap, so the core
  // carries the average over them (priced round by round, each at its own, 4 x 8 to 16 x 8 behind
  // 4:1 came out 13-56% over the simulated plans; at the average, within 6% from 4 MiB).
  double crossing = 0;
  for (int d = 0; d < q && d < rounds; ++d) {
    crossing += ((rounds - 1 - d) / q + 1) * butterflyCrossing(p, k.coreNodeRanks, 1 << d, [](int) { return 1.0; }, a.root);
  }
  const LinkCost kc = k.crossing(crossing / rounds);
  return rounds * (kc.alpha + kc.beta * block);
}

}  // namespace

extern const FlatAlgorithm kHypercubeBroadcast = {"hypercube", Collective::kBroadcast, supports, build, cost,
                                                  "(M-1+log p)(a + b m/M), p a power of two"};

}  // namespace strata
