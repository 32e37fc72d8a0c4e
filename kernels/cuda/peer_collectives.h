// Intra-node collectives as single kernels over peer GPU memory (CUDA IPC), synchronised through
// flags in device memory: no host round trip, no progress thread. For a node whose ranks each have
// their own GPU (ranks sharing a GPU must not wait in a kernel for another process's kernel, which
// time-slicing may not have scheduled: they keep the host-mediated rounds of intra_node/).
//
// Every member owns a peer buffer: a signal area and two halves of `halfBytes`, mapped into every
// other member. A call moves its message in rounds of at most a half; consecutive rounds (and
// calls) alternate halves, so a call never waits for its predecessor's readers. In each round:
//
//   one-shot allreduce   copy my input into my half | barrier | reduce every member's half into
//                        my output (the whole message read from every peer: (n-1) m over links)
//   two-shot allreduce   copy in | barrier | reduce my n-th of every member's half into my
//                        result area and output | barrier | copy every member's reduced n-th into
//                        my output (2 (n-1)/n m over links: the bound)
//   reduce-scatter       copy in my blocks | barrier | reduce my block of every member's half
//   allgather            copy in my block  | barrier | copy every member's block
//   broadcast            the root copies in | barrier | copy the root's half
//
// A barrier is per block: block b writes its sequence number into block b's flag at every peer,
// then waits for every peer's block b. Blocks therefore own the same byte ranges of the halves in
// every phase and round of a call, and the stream order of consecutive kernels (plus the
// barriers) keeps a half from being refilled before every member is done reading it. Every wait
// is bounded: on timeout the kernel records which block waited for which member at which barrier
// in host-mapped words and traps (the stream must not run on with a partial result); a nonzero
// abort word (strataCommAbort) makes it return at its next poll. So do the stop records of the
// members it waits for, which no host message could reach in time: a member that refuses call s
// writes s into every other member's signal area (their kernels of call s stop waiting for it);
// a member whose communicator failed or was aborted writes that it failed, once its own kernels
// have ended (so earlier calls, which it completed, complete everywhere); and a kernel that stops
// (its abort word, a stop record) writes the same from the kernel, since the barriers it did not
// reach will never be published (their other members' kernels stop in turn instead of waiting out
// their bound and trapping, which ends a process's GPU context). A stopped kernel leaves its call's
// output undefined and says why in the status words; the communicator's next call reports it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/datatype.h"
#include "kernels/common/status.h"
#include "kernels/plan/peer_algorithm.h"

namespace strata::cuda {

constexpr int kMaxPeerRanks = 16;
constexpr int kMaxPeerBlocks = 32;
// The launch geometry: at most kMaxPeerBlocks blocks of kThreads (kernels/cuda/cuda_kernels.h),
// fewer than any GPU has multiprocessors, so one resident block per multiprocessor is all a
// launch needs (and up to 128 registers a thread; tests/compiler checks there are no spills).
constexpr unsigned kPeerMinBlocksPerSm = 1;
// Per member: one 32-bit flag per (block, sender), on its own 128-byte line per block; then the
// stop records, on two lines: the call each sender refused last (64-bit, 0: none; calls are
// numbered from 1), and whether each sender failed (32-bit, nonzero: failed). Two words that are
// each written whole, so neither kind of record can overwrite the other.
constexpr size_t kPeerRefusedLine = kMaxPeerBlocks;
constexpr size_t kPeerFailedLine = kMaxPeerBlocks + 1;
constexpr size_t kPeerSignalBytes = (size_t{kMaxPeerBlocks} + 2) * 128;
static_assert(kMaxPeerRanks * sizeof(uint64_t) <= 128);

// Words of host-mapped memory the kernels report through (PeerNode::status).
// kPeerStatusClaim: taken by the first block that records (the code is stored last, after the
// others, so a host that reads a code reads the rest of that record: strataCommGetAsyncError polls).
enum PeerStatusWord : int {
  kPeerStatusCode, kPeerStatusBarrier, kPeerStatusMember, kPeerStatusBlock, kPeerStatusClaim, kPeerStatusWords
};
// kPeerRefused: a member refused the call; kPeerMemberFailed: a member failed, was aborted or
// stopped; kPeerAborted: this member's communicator was aborted.
enum PeerStatusCode : uint32_t { kPeerOk = 0, kPeerTimedOut = 1, kPeerAborted = 2, kPeerRefused = 3, kPeerMemberFailed = 4 };

// What a member's kernels see of the node: every member's signal area and halves, mapped here.
struct PeerNode {
  uint32_t* signals[kMaxPeerRanks] = {};  // member j's signal area
  char* halves[kMaxPeerRanks] = {};       // member j's first half; the second follows at +halfStride
  size_t halfBytes = 0;                   // usable bytes of a half (a multiple of 16)
  size_t halfStride = 0;
  int ranks = 0;
  int me = 0;
  const volatile uint32_t* abortWord = nullptr;  // host-mapped: nonzero aborts
  uint32_t* status = nullptr;                    // host-mapped: kPeerStatusWords words
  unsigned long long timeoutNs = 0;
};

// One call. Counts are in elements: allreduce and broadcast, the message; reduce-scatter, the block
// each member receives; allgather, the block each member sends.
struct PeerCall {
  PeerAlgorithm algorithm = PeerAlgorithm::kAllReduceOneShot;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
  int root = 0;
  int divisor = 0;          // strataAvg: the member count, fused into the reduction
  uint64_t seq = 0;         // the call's number (from 1): a member's refusal of it stops the kernel
  uint32_t barriers = 0;    // barriers this node's peer kernels completed before the call
  uint64_t rounds = 0;      // rounds completed before the call (the first round's half)
};

// How a call cuts its message: elements per round (per block of the message for reduce-scatter and
// allgather), the chunk of a two-shot round each member reduces, the range of a chunk (or round)
// each kernel block owns, the grid, and the rounds and barriers the call takes. The same on every
// member (it depends only on the call and the node).
struct PeerSchedule {
  size_t roundElems = 0;
  size_t chunkElems = 0;  // two-shot: each member's share of a round
  size_t blockElems = 0;  // per kernel block, within a chunk (or round)
  unsigned grid = 1;
  uint64_t rounds = 0;
  uint32_t barriers = 0;
};
PeerSchedule peerSchedule(const PeerNode& node, const PeerCall& call, size_t elemSize);

// Enqueues the call's kernel on `stream` (after what the stream holds). The schedule's rounds and
// barriers are what the caller adds to its counters for the next call.
Status launchPeerCollective(const PeerNode& node, const PeerCall& call, DataType type, RedOp op, cudaStream_t stream);

// Enqueues on `stream` this member's stop record in every other member's signal area: it refused
// call `seq` (their kernels of that call stop waiting for it), or with `failed` it failed (their
// kernels stop waiting for any barrier of it not yet published: `stream` must run it after this
// member's last kernel). The kernels that stop record it in their status words, with the member and
// the barrier.
Status launchPeerStop(const PeerNode& node, uint64_t seq, bool failed, cudaStream_t stream);
// The stop kernel, for preloadKernels.
const void* peerStopKernelAddress();

}  // namespace strata::cuda
