#include "kernels/plan/peer_reads.h"

#include <algorithm>
#include <iterator>
#include <map>

namespace strata {
namespace {

// Disjoint element ranges of one buffer, begin -> end.
class RangeSet {
 public:
  void add(size_t begin, size_t end) {
    if (begin >= end) return;
    auto it = ranges_.upper_bound(begin);
    if (it != ranges_.begin() && std::prev(it)->second >= begin) {
      --it;
      begin = it->first;
    }
    while (it != ranges_.end() && it->first <= end) {
      end = std::max(end, it->second);
      it = ranges_.erase(it);
    }
    ranges_[begin] = end;
  }
  // Removes [begin, end) and returns how many of its elements were in the set.
  size_t take(size_t begin, size_t end) {
    if (begin >= end) return 0;
    size_t taken = 0;
    auto it = ranges_.upper_bound(begin);
    if (it != ranges_.begin()) --it;
    while (it != ranges_.end() && it->first < end) {
      const size_t b = it->first, e = it->second;
      if (e <= begin) {
        ++it;
        continue;
      }
      taken += std::min(e, end) - std::max(b, begin);
      it = ranges_.erase(it);
      if (b < begin) ranges_[b] = begin;
      if (e > end) it = ranges_.emplace(end, e).first, ++it;
    }
    return taken;
  }

 private:
  std::map<size_t, size_t> ranges_;
};

}  // namespace

std::vector<RewrittenBytes> rewrittenBytesPerStep(const Plan& plan, size_t elemSize) {
  RangeSet read[kNumBufferIds];  // read by a peer since last written
  std::vector<RewrittenBytes> out(plan.size());
  auto set = [&](const Slice& s) -> RangeSet& { return read[static_cast<size_t>(s.buffer)]; };
  // Twice through: the first call marks what the second call's writes pay for.
  for (int pass = 0; pass < 2; ++pass) {
    for (StepId id = 0; id < plan.size(); ++id) {
      const Step& st = plan.steps[id];
      auto write = [&](const Slice& s, bool reduced) {
        const double n = static_cast<double>(set(s).take(s.offset, s.end())) * static_cast<double>(elemSize);
        if (pass == 1) (reduced ? out[id].reduced : out[id].copied) += n;
      };
      switch (st.kind) {
        case StepKind::kSend: set(st.src).add(st.src.offset, st.src.end()); break;
        case StepKind::kRecv:
        case StepKind::kCopy: write(st.dst, false); break;
        case StepKind::kReduce:
        case StepKind::kDivide: write(st.dst, true); break;
        case StepKind::kNodeOp:
          for (const NodeRead& r : plan.nodeOps[st.nodeOp].reads) write(r.dst, r.sources.size() > 1);
          break;
      }
    }
  }
  return out;
}

RewrittenBytes rewrittenBytes(const Plan& plan, size_t elemSize) {
  RewrittenBytes total;
  for (const RewrittenBytes& b : rewrittenBytesPerStep(plan, elemSize)) total += b;
  return total;
}

}  // namespace strata
