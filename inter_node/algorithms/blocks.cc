// Block layouts shared by the gather-like algorithms and their v-variants.
#include "inter_node/algorithms/algorithm.h"

namespace strata {

BlockLayout rankBlocks(const CollectiveArgs& a, int p) {
  if (!a.counts.empty()) {
    BlockLayout l;
    l.count = a.counts;
    if (!a.displs.empty()) {
      l.offset = a.displs;
    } else {  // reduce-scatterv: consecutive blocks
      l.offset.resize(a.counts.size());
      size_t pos = 0;
      for (size_t i = 0; i < a.counts.size(); ++i) {
        l.offset[i] = pos;
        pos += a.counts[i];
      }
    }
    return l;
  }
  return BlockLayout::uniform(p, a.count);
}

bool isPacked(const BlockLayout& l) {
  size_t pos = 0;
  for (int i = 0; i < l.size(); ++i) {
    if (l.offset[static_cast<size_t>(i)] != pos) return false;
    pos += l.count[static_cast<size_t>(i)];
  }
  return true;
}

std::vector<Slice> blockSlices(Slice whole, const BlockLayout& l) {
  std::vector<Slice> out(static_cast<size_t>(l.size()));
  for (int i = 0; i < l.size(); ++i) {
    out[static_cast<size_t>(i)] = whole.sub(l.offset[static_cast<size_t>(i)], l.count[static_cast<size_t>(i)]);
  }
  return out;
}

BlockLayout packedLayout(const BlockLayout& l) {
  BlockLayout p;
  p.count = l.count;
  p.offset.resize(l.count.size());
  size_t pos = 0;
  for (size_t i = 0; i < l.count.size(); ++i) {
    p.offset[i] = pos;
    pos += l.count[i];
  }
  return p;
}

std::string rankOrderDependent(const CollectiveArgs& a, int p) {
  if (p > 2 && isFloatingType(a.type) && (a.op == strataSum || a.op == strataProd || a.op == strataAvg)) {
    return "ranks add floating-point inputs in different orders, so results could differ in the last bits";
  }
  return "";
}

}  // namespace strata
