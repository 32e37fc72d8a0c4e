// The oracle: what every output element must hold, stated from the collective's definition
// (independent of the collective table, whose buffer views it checks).
#include "tests/verifier/simulator.h"

namespace strata::verify::detail {

std::optional<Cell> Simulator::expected(int r, size_t i) const {
  const int64_t n = static_cast<int64_t>(a_.count);
  const int64_t idx = static_cast<int64_t>(i);
  const uint64_t all = allRanks(p_);
  const bool avg = a_.op == strataAvg;
  const auto one = [](int rank) { return uint64_t{1} << rank; };
  switch (a_.coll) {
    case Collective::kAllReduce: return Cell{all, idx, avg};
    case Collective::kReduce: return Cell{all, idx, avg};
    case Collective::kBroadcast: return Cell{one(a_.root), idx, false};
    case Collective::kAllGather:
    case Collective::kGather: return Cell{one(static_cast<int>(idx / n)), idx % n, false};
    case Collective::kReduceScatter: return Cell{all, r * n + idx, avg};
    case Collective::kScatter: return Cell{one(a_.root), r * n + idx, false};
    case Collective::kAllToAll: return Cell{one(static_cast<int>(idx / n)), r * n + idx % n, false};
    case Collective::kScan: return Cell{allRanks(r + 1), idx, false};
    case Collective::kExscan:
      if (r == 0) return std::nullopt;
      return Cell{allRanks(r), idx, false};
    case Collective::kShift: return Cell{one(((r - a_.shift) % p_ + p_) % p_), idx, false};
    case Collective::kAllGatherv:
    case Collective::kGatherv: {
      const CollectiveArgs& mine = ra_[static_cast<size_t>(r)];
      for (int j = 0; j < p_; ++j) {
        const size_t d = mine.displs[static_cast<size_t>(j)], c = mine.counts[static_cast<size_t>(j)];
        if (i >= d && i < d + c) return Cell{one(j), static_cast<int64_t>(i - d), false};
      }
      return std::nullopt;  // a gap: must stay untouched
    }
    case Collective::kScatterv: {
      const CollectiveArgs& root = ra_[static_cast<size_t>(a_.root)];
      return Cell{one(a_.root), static_cast<int64_t>(root.sendDispls[static_cast<size_t>(r)] + i), false};
    }
    case Collective::kAllToAllv: {
      const CollectiveArgs& mine = ra_[static_cast<size_t>(r)];
      for (int j = 0; j < p_; ++j) {
        const size_t d = mine.displs[static_cast<size_t>(j)], c = mine.counts[static_cast<size_t>(j)];
        if (i >= d && i < d + c) {
          const size_t theirs = ra_[static_cast<size_t>(j)].sendDispls[static_cast<size_t>(r)];
          return Cell{one(j), static_cast<int64_t>(theirs + (i - d)), false};
        }
      }
      return std::nullopt;
    }
    case Collective::kReduceScatterv: {
      size_t prefix = 0;
      for (int j = 0; j < r; ++j) prefix += ra_[static_cast<size_t>(r)].counts[static_cast<size_t>(j)];
      return Cell{all, static_cast<int64_t>(prefix + i), avg};
    }
    default: return std::nullopt;
  }
}

void Simulator::checkOutput(int r) {
  const RankState& st = ranks_[static_cast<size_t>(r)];
  const View rv = recvView(ra_[static_cast<size_t>(r)], r);
  const size_t re = recvElems(ra_[static_cast<size_t>(r)], r);
  const Buffer& b = st.buf[static_cast<int>(rv.buffer)];
  for (size_t i = 0; i < re; ++i) {
    const Cell& got = b.cells[rv.offset + i];
    std::optional<Cell> want = expected(r, i);
    if (!want) want = initial_[static_cast<size_t>(r)][rv.offset + i];  // must be untouched
    if (!(got == *want)) {
      fail("rank %d recv[%zu] holds %s, expected %s", r, i, cellText(got).c_str(), cellText(*want).c_str());
      return;
    }
  }
}

}  // namespace strata::verify::detail
