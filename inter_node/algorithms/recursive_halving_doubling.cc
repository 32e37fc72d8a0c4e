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
    const int member = j < f.rem ? 2 * j + 1 : j + f.rem;
    f.vmember[static_cast<size_t>(j)] = member;
    f.vpeers[static_cast<size_t>(j)] = g.rank(member);
  }
  return f;
}

void buildRecursiveHalving(PlanBuilder& b, const std::vector<int>& vpeers, int vme, const BlockLayout& vblocks,
                           Slice in, Slice work, int tagBase, const Slice* out, size_t outOffset) {
  const int p2 = static_cast<int>(vpeers.size());
  // The last round's reduce, or the copy of a single rank: the part that is `out` goes there.
  auto finish = [&](Slice dst, Slice a, const Slice* b2) {
    auto emit = [&](size_t from, size_t n, Slice to) {
      if (n == 0) return;
      if (b2 != nullptr) b.reduce(to, {a.sub(from, n), b2->sub(from, n)});
      else b.copy(to, a.sub(from, n));
    };
    if (out == nullptr) {
      emit(0, dst.count, dst);
      return;
    }
    const size_t end = outOffset + out->count;
    emit(0, outOffset, dst.sub(0, outOffset));
    emit(outOffset, out->count, *out);
    emit(end, dst.count - end, dst.sub(end, dst.count - end));
  };
  if (p2 == 1) {
    b.label("recursive-halving", 0);
    finish(work, in, nullptr);
    return;
  }
  // One receive slot of the largest half; a round's receive waits for the last round's reduce.
  size_t maxHalf = 0;
  for (int mask = p2 / 2; mask >= 1; mask >>= 1) {
    for (int base = 0; base < p2; base += mask) {
      maxHalf = std::max(maxHalf, blockRange(work, vblocks, base, base + mask).count);
    }
  }
  const Slice slot = b.scratch(maxHalf);
  int lo = 0, hi = p2;
  Slice cur = in;
  int round = 0;
  for (int mask = p2 / 2; mask >= 1; mask >>= 1, ++round) {
    b.label("recursive-halving", round);
    const int partner = vpeers[static_cast<size_t>(vme ^ mask)];
    const int mid = lo + (hi - lo) / 2;
    const bool keepLow = (vme & mask) == 0;
    const int keepLo = keepLow ? lo : mid, keepHi = keepLow ? mid : hi;
    const int giveLo = keepLow ? mid : lo, giveHi = keepLow ? hi : mid;
    const Slice give = blockRange(cur, vblocks, giveLo, giveHi);
    const Slice keepCur = blockRange(cur, vblocks, keepLo, keepHi);
    const Slice keepWork = blockRange(work, vblocks, keepLo, keepHi);
    const Slice tmp = slot.sub(0, keepWork.count);
    if (give.count != 0) b.send(partner, give, tagBase + round);
    if (keepWork.count != 0) {
      b.recv(partner, tmp, tagBase + round);
      if (mask == 1) finish(keepWork, keepCur, &tmp);
      else b.reduce(keepWork, {keepCur, tmp});
    }
    lo = keepLo;
    hi = keepHi;
    cur = work;
  }
}

void buildRecursiveDoubling(PlanBuilder& b, const std::vector<int>& vpeers, int vme, const BlockLayout& vblocks,
                            Slice work, int tagBase, const Slice* first) {
  const int p2 = static_cast<int>(vpeers.size());
  int round = 0;
  for (int mask = 1; mask < p2; mask <<= 1, ++round) {
    b.label("recursive-doubling", round);
    const int partner = vpeers[static_cast<size_t>(vme ^ mask)];
    const int myBase = vme & ~(mask - 1);
    const int partnerBase = myBase ^ mask;
    const Slice mine = blockRange(work, vblocks, myBase, myBase + mask);
    const Slice theirs = blockRange(work, vblocks, partnerBase, partnerBase + mask);
    const Slice from = mask == 1 && first != nullptr && first->count == mine.count ? *first : mine;
    if (mine.count != 0) b.send(partner, from, tagBase + round);
    if (theirs.count != 0) b.recv(partner, theirs, tagBase + round);
  }
}

}  // namespace strata
