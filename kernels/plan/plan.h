// The plan IR: what one rank does in one collective, as a small DAG of steps over slices of the
// user's buffers and a scratch buffer.
//
// Algorithms are data. An algorithm builds a Plan once per (collective, count, type, op, root,
// in-place) on a communicator; the executor runs it over MPI and a compute backend, the symbolic
// verifier proves it correct for many rank counts and node shapes, and the cost model prices it.
// Plans never hold pointers: slices name a buffer (send, recv, scratch) and an element range, and
// the executor binds them to the call's pointers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/datatype.h"

namespace strata {

enum class BufferId : uint8_t { kSend = 0, kRecv = 1, kScratch = 2 };
constexpr int kNumBufferIds = 3;
const char* bufferName(BufferId b);

// An element range of one buffer (elements of the call's datatype).
struct Slice {
  BufferId buffer = BufferId::kRecv;
  size_t offset = 0;
  size_t count = 0;

  size_t end() const { return offset + count; }
  // The sub-range [offset + off, offset + off + n).
  Slice sub(size_t off, size_t n) const { return Slice{buffer, offset + off, n}; }
  bool operator==(const Slice& o) const { return buffer == o.buffer && offset == o.offset && count == o.count; }
  bool overlaps(const Slice& o) const {
    return buffer == o.buffer && count != 0 && o.count != 0 && offset < o.end() && o.offset < end();
  }
};

enum class StepKind : uint8_t {
  kSend,    // MPI send of `src` to `peer`
  kRecv,    // MPI receive into `dst` from `peer`
  kReduce,  // dst = op(inputs...), 1..kMaxReduceInputs inputs
  kCopy,    // dst = src
  kDivide,  // dst = dst / plan.divisor (the end of strataAvg)
  kNodeOp,  // an intra-node collective over the node team's shared memory (see NodeOpDesc)
};
const char* stepKindName(StepKind k);

using StepId = uint32_t;
constexpr StepId kNoStep = UINT32_MAX;

struct Step {
  StepKind kind = StepKind::kCopy;
  int peer = -1;  // communicator rank, for send and recv
  int tag = 0;    // message tag, unique per ordered pair of ranks within the plan
  Slice dst;      // written by recv, reduce, copy, divide
  Slice src;      // read by send, copy
  uint32_t inputBegin = 0, inputCount = 0;  // reduce inputs: Plan::inputs[inputBegin, +inputCount)
  uint32_t depBegin = 0, depCount = 0;      // predecessors: Plan::deps[depBegin, +depCount)
  uint32_t nodeOp = 0;                      // Plan::nodeOps index, for kNodeOp
  const char* what = "";                    // the algorithm's name for this phase, for messages
  int round = 0;                            // the algorithm's round (or chunk) number, for messages
};

// A node op: an intra-node collective step over the node team's shared memory. Every member of the
// team runs the matching node op (the k-th of each member's plan belong together). A member puts
// its "writes" (pieces of its own buffers) into its slots of the shared segment; each of its
// "reads" forms one of its output slices as a copy of one piece or the reduction of several, in the
// order listed (member order, so members reducing the same pieces get the same bits). A piece is
// named by (member, index of that member's write); a member's own pieces are read from its private
// buffer and go through the segment only when another member reads them. This one form covers
// reduce-scatter, allgather, broadcast, reduce, gather, scatter, alltoall, the one-shot allreduce,
// scan and the strided layouts of the hierarchical compositions.
struct NodePiece {
  uint32_t member;  // team index
  uint32_t index;   // that member's write
};

struct NodeRead {
  Slice dst;                       // in my buffers
  std::vector<NodePiece> sources;  // one: copy; several: reduce in this order
};

struct NodeOpDesc {
  const char* what = "node-op";
  std::vector<int> members;                       // communicator ranks of the team, in team order
  int me = 0;                                     // my team index
  std::vector<Slice> writes;                      // my pieces, in index order
  std::vector<NodeRead> reads;                    // my outputs
  std::vector<std::vector<size_t>> writeCounts;   // every member's piece sizes (elements)
  std::vector<std::vector<uint8_t>> writeShared;  // every member's pieces read by another member
  bool fullSync = false;                          // every member waits for every other (barrier)
  // The runner's precomputed layout for this op (rounds, offsets, whom to wait for), valid for one
  // element size and slot size; plans are cached, so a repeated call reuses it.
  mutable std::shared_ptr<void> runnerState;
};

struct Plan {
  std::string algorithm;            // the name the tuner or STRATA_ALGO chose
  std::vector<Step> steps;
  std::vector<Slice> inputs;        // reduce inputs
  std::vector<StepId> deps;         // predecessors, CSR by Step::depBegin
  std::vector<uint32_t> succBegin;  // successors CSR: succ[succBegin[i], succBegin[i+1])
  std::vector<StepId> succ;
  std::vector<NodeOpDesc> nodeOps;
  size_t scratchCount = 0;          // elements of scratch the plan uses
  int divisor = 1;                  // strataAvg's divisor
  int phases = 0;                   // number of tag phases used

  size_t size() const { return steps.size(); }
  const Slice* reduceInputs(const Step& s) const { return inputs.data() + s.inputBegin; }
  // A one-line description of a step, for error messages and dumps.
  std::string describe(StepId id, DataType type) const;
  // The whole plan, one step a line.
  std::string dump(DataType type) const;
};

}  // namespace strata
