// Recursive halving and doubling over a power-of-two set of virtual ranks, and the pairing step
// that reduces any p to a power of two (002, "The power of the hypercube/butterfly"; the
// reduce-scatter + allgather decomposition is Rabenseifner's, 002 "The Van de Geijn
// implementations"). Used by the Rabenseifner allreduce and the recursive-halving reduce-scatter.
#include "inter_node/algorithms/algorithm.h"

namespace strata {
namespace {

// The element range of virtual blocks [lo, hi) (blocks are consecutive in the vector).
Slice blockRange(Slice whole, const BlockLayout& blocks, int lo, int hi) {
  if (lo >= hi) return whole.sub(0, 0);
  const size_t begin = blocks.offset[static_cast<size_t>(lo)];
  const size_t end = blocks.offset[static_cast<size_t>(hi - 1)] + blocks.count[static_cast<size_t>(hi - 1)];
  return whole.sub(begin, end - begin);
}

}  // namespace

Fold makeFold(const Group& g) {
  Fold f;
  const int p = g.size();
  f.p2 = floorPow2(p);
  f.rem = p - f.p2;
  const int i = g.me;
  if (i < 2 * f.rem) {
    f.vme = (i % 2 == 0) ? -1 : i / 2;
  } else {
    f.vme = i - f.rem;
  }
  f.vmember.resize(static_cast<size_t>(f.p2));
  f.vpeers.resize(static_cast<size_t>(f.p2));
  for (int j = 0; j < f.p2; ++j) {
    const int member = foldMember(j, f.rem);
    f.vmember[static_cast<size_t>(j)] = member;
    f.vpeers[static_cast<size_t>(j)] = g.rank(member);
  }
  return f;
}

void buildRecursiveHalving(PlanBuilder& b, const std::vector<int>& vpeers, int vme, const BlockLayout& vblocks,
                           Slice in, const std::vector<Slice>& out, int tagBase, const Slice* work) {
  const int p2 = static_cast<int>(vpeers.size());
  // Block vme, from `a` (+ `plus`, when given, element by element) into the pieces of `out`.
  auto finish = [&](Slice a, const Slice* plus) {
    size_t at = 0;
    for (const Slice& piece : out) {
      if (piece.count == 0) continue;
      if (plus != nullptr) b.reduce(piece, {a.sub(at, piece.count), plus->sub(at, piece.count)});
      else b.copy(piece, a.sub(at, piece.count));
      at += piece.count;
    }
  };
  if (p2 == 1) {
    b.label("recursive-halving", 0);
    finish(in, nullptr);
    return;
  }
  // Round r keeps virtual blocks [lo, hi) and receives the partner's half of them. Without `work`
  // the partial sums live in the receive slots themselves, two used in turn (at most half of the
  // vector in even rounds, a quarter in odd ones), each round adding its own half in place; a
  // round's receive into a slot waits for the sends from it two rounds before (the builder orders
  // them). Against partial sums in a whole vector of scratch beside one receive slot this touches
  // half the memory: on 8 ranks sharing 2 cores a 16 MiB reduce-scatter went from 1.28x the ring's
  // time to 1.19x, 1-4 MiB from 1.16x to 1.05x (medians of 5 runs). With `work` (a buffer the
  // caller touches anyway: Rabenseifner's receive buffer) they live there, beside one slot.
  size_t maxKeep[2] = {0, 0};
  {
    int r = 0;
    for (int mask = p2 / 2; mask >= 1; mask >>= 1, ++r) {
      for (int base = 0; base < p2; base += mask) {
        size_t& m = maxKeep[work != nullptr ? 0 : r % 2];
        m = std::max(m, blockRange(in, vblocks, base, base + mask).count);
      }
    }
  }
  const Slice slots[2] = {b.scratch(maxKeep[0]), b.scratch(maxKeep[1])};
  // `cur` holds the partial sums of virtual blocks [lo, hi), its element 0 being element
  // `curBase` of the vector (`in` itself, base 0, before the first round; `work` likewise).
  Slice cur = in;
  size_t curBase = 0;
  auto within = [&](Slice s, size_t base, int from, int to) {
    const Slice whole = blockRange(in, vblocks, from, to);  // in `in`'s coordinates
    return s.sub(whole.offset - in.offset - base, whole.count);
  };
  int lo = 0, hi = p2;
  int round = 0;
  for (int mask = p2 / 2; mask >= 1; mask >>= 1, ++round) {
    b.label("recursive-halving", round);
    const int partner = vpeers[static_cast<size_t>(vme ^ mask)];
    const int mid = lo + (hi - lo) / 2;
    const bool keepLow = (vme & mask) == 0;
    const int keepLo = keepLow ? lo : mid, keepHi = keepLow ? mid : hi;
    const int giveLo = keepLow ? mid : lo, giveHi = keepLow ? hi : mid;
    const Slice give = within(cur, curBase, giveLo, giveHi);
    const Slice keep = within(cur, curBase, keepLo, keepHi);
    const Slice landing = slots[work != nullptr ? 0 : round % 2].sub(0, keep.count);
    const Slice acc = work != nullptr ? within(*work, 0, keepLo, keepHi) : landing;
    if (give.count != 0) b.send(partner, give, tagBase + round);
    if (keep.count != 0) {
      b.recv(partner, landing, tagBase + round);
      if (mask == 1) finish(keep, &landing);
      else b.reduce(acc, {keep, landing});
    }
    cur = work != nullptr ? *work : acc;
    curBase = work != nullptr ? 0 : blockRange(in, vblocks, keepLo, keepHi).offset - in.offset;
    lo = keepLo;
    hi = keepHi;
  }
}

void buildRecursiveDoubling(PlanBuilder& b, const std::vector<int>& vpeers, int vme, const BlockLayout& vblocks,
                            Slice work, int tagBase, const Slice* first, StepId firstRecvAfter) {
  const int p2 = static_cast<int>(vpeers.size());
  int round = 0;
  // Receives round by round: posted all at once, a later round's block (sent by a partner already
  // there) could take the receive link ahead of the one this round waits for.
  StepId prevRecv = firstRecvAfter;
  for (int mask = 1; mask < p2; mask <<= 1, ++round) {
    b.label("recursive-doubling", round);
    const int partner = vpeers[static_cast<size_t>(vme ^ mask)];
    const int myBase = vme & ~(mask - 1);
    const int partnerBase = myBase ^ mask;
    const Slice mine = blockRange(work, vblocks, myBase, myBase + mask);
    const Slice theirs = blockRange(work, vblocks, partnerBase, partnerBase + mask);
    const Slice from = mask == 1 && first != nullptr && first->count == mine.count ? *first : mine;
    if (mine.count != 0) b.send(partner, from, tagBase + round);
    if (theirs.count != 0) prevRecv = b.recv(partner, theirs, tagBase + round, {prevRecv});
  }
}

}  // namespace strata
