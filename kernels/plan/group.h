// Group: the ranks an algorithm runs over (the whole communicator, a node team or a lane), in the
// algorithm's order. Builders address peers by group index; the plan holds communicator ranks.
#pragma once

#include <cstddef>
#include <vector>

namespace strata {

struct Group {
  std::vector<int> ranks;  // communicator rank of each member, in group order
  int me = 0;              // my index in `ranks`

  int size() const { return static_cast<int>(ranks.size()); }
  int rank(int index) const { return ranks[static_cast<size_t>(index)]; }
  // Communicator rank of the member `delta` places after me (mod size), for rings.
  int relative(int delta) const {
    const int n = size();
    return ranks[static_cast<size_t>(((me + delta) % n + n) % n)];
  }
  // The same members renumbered so that member `root` becomes index 0 (virtual ranks of rooted
  // algorithms): index v of the result is member (v + root) mod size of this group.
  Group rotated(int root) const {
    Group g;
    const int n = size();
    g.ranks.resize(ranks.size());
    for (int v = 0; v < n; ++v) g.ranks[static_cast<size_t>(v)] = ranks[static_cast<size_t>((v + root) % n)];
    g.me = ((me - root) % n + n) % n;
    return g;
  }
  // The group of communicator ranks 0..p-1 seen from `me`.
  static Group world(int p, int me) {
    Group g;
    g.ranks.resize(static_cast<size_t>(p));
    for (int i = 0; i < p; ++i) g.ranks[static_cast<size_t>(i)] = i;
    g.me = me;
    return g;
  }
};

// How a vector is cut into per-member blocks: block i is [offset[i], offset[i] + count[i]).
struct BlockLayout {
  std::vector<size_t> offset;
  std::vector<size_t> count;

  int size() const { return static_cast<int>(count.size()); }
  size_t total() const {
    size_t t = 0;
    for (size_t c : count) t += c;
    return t;
  }
  size_t maxCount() const {
    size_t m = 0;
    for (size_t c : count) m = c > m ? c : m;
    return m;
  }
  // Blocks of `blockCount` elements each, back to back.
  static BlockLayout uniform(int blocks, size_t blockCount);
  // `total` elements cut into `blocks` nearly equal consecutive blocks (the first total % blocks get
  // one more), each a multiple of `granule` elements except possibly the last non-empty one.
  static BlockLayout even(size_t total, int blocks, size_t granule = 1);
};

inline BlockLayout BlockLayout::uniform(int blocks, size_t blockCount) {
  BlockLayout l;
  l.offset.resize(static_cast<size_t>(blocks));
  l.count.assign(static_cast<size_t>(blocks), blockCount);
  for (int i = 0; i < blocks; ++i) l.offset[static_cast<size_t>(i)] = static_cast<size_t>(i) * blockCount;
  return l;
}

inline BlockLayout BlockLayout::even(size_t total, int blocks, size_t granule) {
  BlockLayout l;
  l.offset.resize(static_cast<size_t>(blocks));
  l.count.resize(static_cast<size_t>(blocks));
  if (granule == 0) granule = 1;
  const size_t units = (total + granule - 1) / granule;  // whole granules, the last maybe partial
  const size_t base = units / static_cast<size_t>(blocks);
  const size_t extra = units % static_cast<size_t>(blocks);
  size_t pos = 0;
  for (int i = 0; i < blocks; ++i) {
    size_t n = (base + (static_cast<size_t>(i) < extra ? 1 : 0)) * granule;
    if (pos + n > total) n = total - pos;
    l.offset[static_cast<size_t>(i)] = pos;
    l.count[static_cast<size_t>(i)] = n;
    pos += n;
  }
  return l;
}

}  // namespace strata
