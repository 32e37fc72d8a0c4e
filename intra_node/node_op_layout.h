// The layout of a node op for one element size and slot size (intra_node/node_team.h runs it): how
// many rounds its pieces take, where every member's pieces lie in its slot, which members it waits
// for and reads from, whether the pieces fit the control segment's inline lines, and which kind of
// store moved its large pieces faster lately. Computed at the first call, kept on the (cached)
// description.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/common/status.h"
#include "kernels/plan/node_op_runner.h"

namespace strata {

// Tiny node ops (a one-shot allreduce of a few values) keep their pieces in cache lines that each
// carry the round number too (as NCCL's LL128 protocol does): the reader polls every line it needs
// at once, and a line whose round is current holds current data (the writer publishes each line's
// round after its data, with release order). One set of lines per slot parity.
constexpr size_t kInlineLines = 40;
constexpr size_t kLineData = 56;
constexpr size_t kInlineBytes = kInlineLines * kLineData;
constexpr size_t kMaxInlineMembers = 16;
constexpr size_t kSlotAlign = 64;  // every piece in a slot starts on a cache line

inline size_t alignUp(size_t x, size_t a) { return (x + a - 1) / a * a; }

// Part `c` of `count` elements cut into `C` nearly equal parts.
inline void partOf(size_t count, size_t C, size_t c, size_t* offset, size_t* n) {
  const size_t base = count / C, extra = count % C;
  *offset = c * base + std::min(c, extra);
  *n = base + (c < extra ? 1 : 0);
}

// Plain or streaming stores for a node op's large pieces, chosen by how fast each ran the op: the
// two kinds alternate for the first four runs (and until both have a time), then the faster runs
// and the other is retried, every 8th run at first. While each retry finds it clearly slower (by
// more than 1.25x) its retries grow twice as rare, up to every 64th run; a retry within 1.25x, or
// a change of which kind is faster, brings them back to every 8th. Each retry of the slower kind
// costs its difference: on the development VM, in a state where plain stores ran a 2-rank node op
// 1.7-2.4x slower than streaming ones (and minutes before, 5x), a retry every 8th run left the mean
// call of a 1 MiB broadcast or allgather 10-14% over the median. A run faster than its kind's
// figure replaces it, a slower one is averaged in: an op's first runs are cold (its slots' first
// touch, the caller's buffers just filled), and with plain's two tries first, both cold, and a
// running average that kept 3/4 of the old figure, streaming won and plain's retries took a
// hundred runs to win back (a 2-rank 256 KiB node reduce-scatter streamed at 25 us where plain
// stores ran it in 17 us).
// A run's time is the team's (NodeTeam::run): from the last member's start until every member has
// read the run's last round, which is known only later, so records may trail the runs by a few.
struct StoreChoice {
  static constexpr uint64_t kRetryFirst = 8, kRetryMost = 64;
  static constexpr double kClearlySlower = 1.25;
  double seconds[2] = {0, 0};  // per kind (0 plain, 1 streaming): the op's time as figured above
  bool tried[2] = {false, false};
  uint64_t runs = 0;
  uint64_t retryEvery = kRetryFirst, lastRetry = 0;

  // The kind of the next run: true for streaming stores.
  bool next() {
    const uint64_t r = runs++;
    if (r < 4 || !tried[0] || !tried[1]) return r % 2 == 1;
    const bool streamFaster = seconds[1] < seconds[0];
    if (r - lastRetry < retryEvery) return streamFaster;
    lastRetry = r;
    return !streamFaster;
  }
  // That run, of kind `stream`, took `t` seconds.
  void record(bool stream, double t) {
    const int k = stream ? 1 : 0;
    const bool bothBefore = tried[0] && tried[1], streamFasterBefore = seconds[1] < seconds[0];
    seconds[k] = !tried[k] || t < seconds[k] ? t : 0.5 * (seconds[k] + t);
    tried[k] = true;
    if (!tried[0] || !tried[1]) return;
    const bool streamFaster = seconds[1] < seconds[0];
    if (!bothBefore || streamFaster != streamFasterBefore) {  // the slower kind has just run
      retryEvery = kRetryFirst;
      lastRetry = runs;
    } else if (k != (streamFaster ? 1 : 0)) {  // a try of the slower kind
      retryEvery = seconds[k] > kClearlySlower * seconds[1 - k] ? std::min(2 * retryEvery, kRetryMost) : kRetryFirst;
    }
  }
};

// Runs of an op whose team time is not known yet: the last round each ran, its place in the team's
// count of node ops and its kind of store. The oldest drop out when more are waiting than it holds.
struct PendingStoreRuns {
  struct Run {
    uint64_t lastRound = 0;
    uint64_t op = 0;
    bool stream = false;
  };
  static constexpr size_t kHeld = 4;
  Run run[kHeld];
  size_t head = 0, count = 0;

  void push(const Run& r) {
    if (count == kHeld) head = (head + 1) % kHeld, --count;
    run[(head + count) % kHeld] = r;
    ++count;
  }
  const Run& oldest() const { return run[head]; }
  void pop() { head = (head + 1) % kHeld, --count; }
};

// What run() needs to know about a node op beyond its description, for one element size and slot
// size: computed on the first call, kept on the (cached) description.
struct NodeOpLayout {
  size_t elemSize = 0, slotBytes = 0;
  size_t rounds = 1;
  bool sharesAnything = false;
  bool inlined = false;  // one round whose pieces fit every member's inline lines
  std::vector<size_t> inlineLinesOf;  // per member: lines its pieces occupy
  std::vector<int> waitFor;   // members whose pieces I read (all others for a barrier)
  std::vector<int> readFrom;  // members whose slots I read
  // Single-round ops: offset of every member's shared pieces in its slot.
  std::vector<std::vector<size_t>> offsets;
  // Large pieces go into the slot with plain or with streaming stores, whichever ran this op faster
  // lately (copyIntoSlot says why it varies); the other kind is retried now and then.
  bool largePieces = false;
  StoreChoice stores;
  PendingStoreRuns pendingStores;
};

// The most bytes any member puts into its slot for the whole op (one round).
size_t maxSharedBytes(const NodeOpDesc& d, size_t elemSize);

// The layout for member `me` with slots of `slotBytes`; `device`: the pieces are device memory
// (never inline, never streamed). An error when the op's reads do not match its pieces.
Status buildNodeOpLayout(const NodeOpDesc& d, int me, size_t elemSize, size_t slotBytes, bool device, NodeOpLayout* out);

// Offsets of member j's shared parts in round c of C.
void layoutRound(const NodeOpDesc& d, int j, size_t C, size_t c, size_t es, std::vector<size_t>* offs);

}  // namespace strata
