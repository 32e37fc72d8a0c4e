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
  Slice dst;      // written by recv, reduce, copy, divide; the output of a node op
  Slice src;      // read by send, copy; the input of a node op
  uint32_t inputBegin = 0, inputCount = 0;  // reduce inputs: Plan::inputs[inputBegin, +inputCount)
  uint32_t depBegin = 0, depCount = 0;      // predecessors: Plan::deps[depBegin, +depCount)
  uint32_t nodeOp = 0;                      // Plan::nodeOps index, for kNodeOp
  const char* what = "";                    // the algorithm's name for this phase, for messages
  int round = 0;                            // the algorithm's round (or chunk) number, for messages
};

// Intra-node collectives that a node op step performs over the node team. All members of the team
// execute matching node ops in the same order. Blocks are per member, in team order.
enum class NodeOpKind : uint8_t {
  kAllReduce,      // out = reduce over members of their in (same count everywhere)
  kReduceScatter,  // out = reduce over members of block[me] of their in
  kAllGather,      // block[j] of out = member j's in
  kBroadcast,      // out = root's in
  kReduce,         // root's out = reduce over members' in
  kGather,         // root's block[j] of out = member j's in
  kScatter,        // my out = root's block[me] of in
  kAllToAll,       // block[j] of my out = block[me] of member j's in (uses both layouts)
  kBarrier,        // no data
};
const char* nodeOpName(NodeOpKind k);

struct NodeOpDesc {
  NodeOpKind kind = NodeOpKind::kBarrier;
  int root = 0;                      // team index of the root, for rooted kinds
  std::vector<int> members;          // communicator ranks of the node team, in team order
  int me = 0;                        // my team index
  std::vector<size_t> blockOffset;   // per member, relative to the op's block-structured slice
  std::vector<size_t> blockCount;    // per member
  std::vector<size_t> inBlockOffset; // alltoall: per member, blocks of the input
  std::vector<size_t> inBlockCount;
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
