// The symbolic verifier's simulator (tests/verifier/symbolic_verifier.h runs it): every rank's plan
// executed on symbolic cells, in an order the executor may run it. Its concerns are in their own
// files: scheduling steps and matching messages (simulator.cc), hazard tracking on every read and
// write (hazards.cc), node ops as a team meets in them (simulated_node_ops.cc), and the oracle of
// what every output must hold (oracle.cc: independent of the collective table, which it checks).
#pragma once

#include "tests/verifier/symbolic_verifier.h"

#include <deque>
#include <map>
#include <optional>
#include <tuple>

#include "kernels/common/status.h"

namespace strata::verify::detail {


// One element: the ranks whose input it combines, the input element it derives from, and
// whether strataAvg's division was applied.
struct Cell {
  uint64_t mask = 0;
  int64_t elem = -1;  // -1: undefined
  bool divided = false;
  bool defined() const { return elem >= 0; }
  bool operator==(const Cell& o) const { return mask == o.mask && elem == o.elem && divided == o.divided; }
};

inline std::string maskText(uint64_t m) {
  std::string s = "{";
  bool first = true;
  for (int i = 0; i < 64; ++i) {
    if (m & (uint64_t{1} << i)) {
      int j = i;
      while (j + 1 < 64 && (m & (uint64_t{1} << (j + 1)))) ++j;
      s += (first ? "" : ",") + (j > i ? strformat("%d..%d", i, j) : strformat("%d", i));
      first = false;
      i = j;
    }
  }
  return s + "}";
}

inline std::string cellText(const Cell& c) {
  if (!c.defined()) return "undefined";
  return strformat("ranks %s of element %lld%s", maskText(c.mask).c_str(), static_cast<long long>(c.elem),
                   c.divided ? " (divided)" : "");
}

inline uint64_t allRanks(int p) { return p >= 64 ? ~uint64_t{0} : (uint64_t{1} << p) - 1; }

struct Buffer {
  std::vector<Cell> cells;
  std::vector<StepId> lastWriter;            // kNoStep: the initial contents
  std::vector<std::vector<StepId>> readers;  // since the last write
  void resize(size_t n) {
    cells.assign(n, Cell{});
    lastWriter.assign(n, kNoStep);
    readers.assign(n, {});
  }
};

struct RankState {
  const Plan* plan = nullptr;
  Buffer buf[kNumBufferIds];
  std::vector<uint32_t> remaining;
  std::vector<uint8_t> state;  // 0 waiting, 1 started, 2 done
  std::vector<uint64_t> know;  // per step: ranks this step causally follows (for barrier)
  std::vector<std::vector<uint64_t>> ancestors;
  std::deque<StepId> ready;
  size_t done = 0;
  // Elements of kSend that the call may write (in-place outputs that live in the send buffer).
  size_t sendWritableBegin = 0, sendWritableEnd = 0;
  // Node ops, as the executor runs them: entered one at a time, only when no other step is ready
  // to start, and nothing else starts until the whole team has arrived and the op is done.
  bool blocked = false;
  std::deque<StepId> pendingNodeOps;
  std::map<std::string, int> nodeOpsEntered;  // per team
};

struct NodeRendezvous {
  std::vector<std::pair<int, StepId>> arrived;  // (rank, step)
};

struct PostedSend {
  int rank;
  StepId step;
  std::vector<Cell> data;
  uint64_t know;
};
struct PostedRecv {
  int rank;
  StepId step;
};

using ChannelKey = std::tuple<int, int, int>;  // source, destination, tag
class Simulator {
 public:
  explicit Simulator(const Case& c) : c_(c), a_(c.args), p_(c.p) {
    for (int r = 0; r < p_; ++r) ra_.push_back(rankArgs(c.argsOf(r), r));
  }

  Result run();

 private:
  template <typename... Args>
  Result fail(const char* fmt, Args... args) {
    if (result_.ok) {
      result_.ok = false;
      result_.error = strformat(fmt, args...);
    }
    return result_;
  }

  bool init(int r);

  bool isAncestor(const RankState& st, StepId a, StepId b) const;

  Buffer* bufferFor(int r, StepId s, const Slice& slice, bool write);

  bool read(int r, StepId s, const Slice& slice, std::vector<Cell>* out);

  bool write(int r, StepId s, const Slice& slice, const std::vector<Cell>& data);

  void complete(int r, StepId s);

  void start(int r, StepId s);

  static std::string teamKey(const std::vector<int>& members);

  void enterNodeOp(int r, StepId s);

  void executeNodeOp(const std::vector<int>& members, const NodeRendezvous& rv);

  void match(const ChannelKey& key);

  std::optional<Cell> expected(int r, size_t i) const;

  void checkOutput(int r);

  const Case& c_;
  const CollectiveArgs& a_;
  int p_;
  std::vector<CollectiveArgs> ra_;  // each rank's arguments
  std::vector<RankState> ranks_;
  std::vector<std::vector<Cell>> initial_;
  std::map<ChannelKey, std::deque<PostedSend>> sends_;
  std::map<ChannelKey, std::deque<PostedRecv>> recvs_;
  std::map<std::pair<std::string, int>, NodeRendezvous> rendezvous_;
  Result result_;
};

}  // namespace strata::verify::detail
