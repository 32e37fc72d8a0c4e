// The peer collective kernel (kernels/cuda/peer_collectives.h says what it does), templated on the
// storage type and the operator like the reduce kernel, and built from the same vector machinery
// (device_ops.cuh): every phase is a block-wide reduceAsThread over the block's range, so peer reads
// are 16-byte loads whatever the alignment of the user's buffers.
#pragma once

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/device_ops.cuh"
#include "kernels/cuda/peer_collectives.h"

namespace strata::cuda {

// The kernel's parameter: the node, the call and its schedule (constant bank).
struct PeerKernelArgs {
  PeerNode node;
  PeerCall call;
  PeerSchedule schedule;
};

// A half begins with a 16-byte header holding where its data starts past the header (0 to 15: the
// writer places its data at the offset from a 16-byte boundary of the buffer its readers copy or
// reduce it into, so that with buffers at alike offsets on every rank, as cudaMalloc gives them,
// the reads over the links are aligned 16-byte loads, never shifted ones that load a granule
// twice). Each block writes it before its first barrier of a round; readers fetch every member's
// after that barrier into shared memory.
constexpr size_t kHalfHeaderBytes = 16;

// Inputs at the same offset in every member's half: src(k) = halves[k] + shift[k] + offset.
struct PeerInputs {
  char* const* halves;
  const uint32_t* shift;  // per member, in shared memory
  size_t offset;
  int n;
  size_t count;
  int divisor;
  void* dst0;
  void* dst1;
  __host__ __device__ __forceinline__ const void* src(int k) const { return halves[k] + shift[k] + offset; }
};

// One input (a copy: bytes, so any type's bits pass unchanged).
struct OneInput {
  const void* in;
  int n;
  size_t count;
  int divisor;
  void* dst0;
  void* dst1;
  __host__ __device__ __forceinline__ const void* src(int) const { return in; }
};

__device__ __forceinline__ ThreadIndex blockThreads() { return ThreadIndex{0, 1, threadIdx.x, blockDim.x}; }

__device__ __forceinline__ void blockCopy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  const OneInput a{src, 1, bytes, 0, dst, nullptr};
  reduceAsThread<uint8_t, DevSum>(a, splitForVectors<uint8_t>(a), blockThreads());
}

// Block b's part [*begin, *begin + *n) of a span of `len` elements cut into pieces of `piece`.
__host__ __device__ __forceinline__ void blockPart(size_t len, size_t piece, size_t b, size_t* begin, size_t* n) {
  *begin = b * piece;
  *n = *begin >= len ? 0 : (len - *begin < piece ? len - *begin : piece);
}

// Records the first failure of this member's kernels in the host-mapped status words: its code,
// and which block waited for which member at which barrier.
__device__ __forceinline__ void recordPeerStatus(const PeerNode& node, uint32_t code, uint32_t barrier, int member) {
  if (atomicCAS(node.status + kPeerStatusClaim, 0u, 1u) == 0u) {
    storeVolatileGlobal(static_cast<volatile uint32_t*>(node.status + kPeerStatusBarrier), barrier);
    storeVolatileGlobal(static_cast<volatile uint32_t*>(node.status + kPeerStatusMember), static_cast<uint32_t>(member));
    storeVolatileGlobal(static_cast<volatile uint32_t*>(node.status + kPeerStatusBlock), blockIdx.x);
    __threadfence_system();  // the record before its code
    storeVolatileGlobal(static_cast<volatile uint32_t*>(node.status + kPeerStatusCode), code);
  }
  __threadfence_system();
}

// Member j's stop records as this member's signal area holds them (peer_collectives.h).
__host__ __device__ __forceinline__ uint64_t* refusedRecord(const PeerNode& node, int holder, int j) {
  return reinterpret_cast<uint64_t*>(node.signals[holder] + kPeerRefusedLine * (128 / sizeof(uint32_t))) + j;
}
__host__ __device__ __forceinline__ uint32_t* failedRecord(const PeerNode& node, int holder, int j) {
  return node.signals[holder] + kPeerFailedLine * (128 / sizeof(uint32_t)) + j;
}

// Whether member p said it will not reach a barrier of call `seq` that it has not published: it
// refused that call, or it failed. 0: it did not; else the status code to record. A member that
// refused the call and failed after (its next call heard its peers fail) stopped for the refusal:
// the failed flag is read first, and a refusal written before it (on the stop stream, which every
// later kernel of that member waits for: PeerNodeTeam) is seen by the read after the fence.
__device__ __forceinline__ uint32_t memberStopped(const PeerNode& node, int p, uint64_t seq) {
  const bool failed = loadVolatileGlobal(static_cast<const volatile uint32_t*>(failedRecord(node, node.me, p))) != 0;
  __threadfence_system();  // orders the two loads
  const uint64_t refused = loadVolatileGlobal(static_cast<const volatile uint64_t*>(refusedRecord(node, node.me, p)));
  if (refused == seq) return uint32_t{kPeerRefused};
  return failed ? uint32_t{kPeerMemberFailed} : uint32_t{0};
}

// Block-level barrier with every peer's same-numbered block: thread p (< ranks, != me) publishes
// `value` in member p's flag for (this block, me), after a system-scope fence that orders the
// block's writes before it, then polls this member's flag for (this block, p), with a fence after
// (acquire). Returns false when the block stops instead: the communicator was aborted, a member
// it waits for stopped (refused the call or failed), or another thread of the block saw either;
// then it tells every other member that this one failed (it will publish no further barrier) and
// records why in the status words. Traps after the timeout, having written what it waited for into
// the host-mapped status words.
__device__ __forceinline__ bool peerBarrier(const PeerNode& node, uint64_t seq, uint32_t value, size_t half,
                                            uint32_t* shifts) {
  __shared__ int stopped;
  if (threadIdx.x == 0) stopped = 0;
  __syncthreads();  // the block's writes of the phase are issued, `stopped` is reset
  const int p = static_cast<int>(threadIdx.x);
  if (p < node.ranks && p != node.me) {
    const size_t line = static_cast<size_t>(blockIdx.x) * (128 / sizeof(uint32_t));
    __threadfence_system();
    storeVolatileGlobal(static_cast<volatile uint32_t*>(node.signals[p] + line + node.me), value);
    const volatile uint32_t* flag = node.signals[node.me] + line + p;
    const unsigned long long start = deviceTimerNs();
    for (unsigned polls = 1; static_cast<int32_t>(loadVolatileGlobal(flag) - value) < 0; ++polls) {
      if ((polls & 15u) == 0) {
        if (loadVolatileGlobal(node.abortWord) != 0) {
          recordPeerStatus(node, kPeerAborted, value, p);
          stopped = 1;
          break;
        }
        if (const uint32_t why = memberStopped(node, p, seq)) {
          recordPeerStatus(node, why, value, p);
          stopped = 1;
          break;
        }
        if (*static_cast<volatile int*>(&stopped) != 0) break;  // another thread's member stopped
        if (deviceTimerNs() - start > node.timeoutNs) {
          recordPeerStatus(node, kPeerTimedOut, value, p);
          __trap();
        }
      }
      __nanosleep(256);
    }
    __threadfence_system();
  }
  if (p < node.ranks) shifts[p] = loadGlobal(reinterpret_cast<const uint32_t*>(node.halves[p] + half));
  __syncthreads();
  if (stopped == 0) return true;
  if (p < node.ranks && p != node.me) storeVolatileGlobal(static_cast<volatile uint32_t*>(failedRecord(node, p, node.me)), 1u);
  return false;
}

// Where my data starts in my half (`half`: its offset from my first half), written by every block.
__device__ __forceinline__ char* placeData(const PeerNode& node, size_t half, uint32_t shift) {
  char* header = node.halves[node.me] + half;
  if (threadIdx.x == 0) storeGlobal(reinterpret_cast<uint32_t*>(header), shift);
  return header + kHalfHeaderBytes + shift;
}

__device__ __forceinline__ uint32_t alignmentOf(const void* p) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p) % kVectorBytes);
}

// Reduces `count` elements at `offset` past every member's data start (of the half at `half`).
template <typename T, typename Op>
__device__ __forceinline__ void blockReduceHalves(const PeerNode& node, const uint32_t* shifts, size_t half,
                                                  size_t offset, size_t count, int divisor, void* dst0, void* dst1) {
  if (count == 0) return;
  const PeerInputs a{node.halves, shifts, half + kHalfHeaderBytes + offset, node.ranks, count, divisor, dst0, dst1};
  reduceAsThread<T, Op>(a, splitForVectors<T>(a), blockThreads());
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kThreads, kPeerMinBlocksPerSm) peerCollectiveKernel(PeerKernelArgs args) {
  const PeerNode& node = args.node;
  const PeerCall& c = args.call;
  const PeerSchedule& s = args.schedule;
  constexpr size_t es = sizeof(T);
  const size_t b = blockIdx.x;
  const int n = node.ranks, me = node.me;
  const char* send = static_cast<const char*>(c.send);
  char* recv = static_cast<char*>(c.recv);
  __shared__ uint32_t shifts[kMaxPeerRanks];  // every member's data start in its half, this round
  uint32_t barrier = c.barriers;
  size_t done = 0;
  // Where member q's data starts in its half at `half` (after the barrier that published it).
  auto peerData = [&](int q, size_t half) -> const char* {
    return node.halves[q] + half + kHalfHeaderBytes + shifts[q];
  };
  for (uint64_t r = 0; r < s.rounds; ++r) {
    const size_t len = c.count - done < s.roundElems ? c.count - done : s.roundElems;
    const size_t half = static_cast<size_t>((c.rounds + r) & 1u) * node.halfStride;
    size_t lo = 0, m = 0;
    switch (c.algorithm) {
      case PeerAlgorithm::kAllReduceOneShot: {
        char* mine = placeData(node, half, alignmentOf(recv));
        blockPart(len, s.blockElems, b, &lo, &m);
        blockCopy(mine + lo * es, send + (done + lo) * es, m * es);
        if (!peerBarrier(node, c.seq, ++barrier, half, shifts)) return;
        blockReduceHalves<T, Op>(node, shifts, half, lo * es, m, c.divisor, recv + (done + lo) * es, nullptr);
        break;
      }
      case PeerAlgorithm::kAllReduceTwoShot: {
        // Chunk q of the round is [q * chunkElems, ...) of it; my chunk's reduction goes to my result
        // area (after the n chunks) and to my output.
        char* mine = placeData(node, half, alignmentOf(recv));
        for (int q = 0; q < n; ++q) {
          const size_t q0 = static_cast<size_t>(q) * s.chunkElems;
          blockPart(q0 >= len ? 0 : (len - q0 < s.chunkElems ? len - q0 : s.chunkElems), s.blockElems, b, &lo, &m);
          blockCopy(mine + (q0 + lo) * es, send + (done + q0 + lo) * es, m * es);
        }
        if (!peerBarrier(node, c.seq, ++barrier, half, shifts)) return;
        const size_t results = static_cast<size_t>(n) * s.chunkElems;
        const size_t m0 = static_cast<size_t>(me) * s.chunkElems;
        blockPart(m0 >= len ? 0 : (len - m0 < s.chunkElems ? len - m0 : s.chunkElems), s.blockElems, b, &lo, &m);
        char* result = mine + (results + lo) * es;
        char* out = recv + (done + m0 + lo) * es;
        const bool together = sharesVectorAlignment(result, out);
        blockReduceHalves<T, Op>(node, shifts, half, (m0 + lo) * es, m, c.divisor, result, together ? out : nullptr);
        if (!together) {
          __syncthreads();  // the block's reduction is in the result area
          blockCopy(out, result, m * es);
        }
        if (!peerBarrier(node, c.seq, ++barrier, half, shifts)) return;
        for (int q = 0; q < n; ++q) {
          if (q == me) continue;
          const size_t q0 = static_cast<size_t>(q) * s.chunkElems;
          blockPart(q0 >= len ? 0 : (len - q0 < s.chunkElems ? len - q0 : s.chunkElems), s.blockElems, b, &lo, &m);
          blockCopy(recv + (done + q0 + lo) * es, peerData(q, half) + (results + lo) * es, m * es);
        }
        break;
      }
      case PeerAlgorithm::kReduceScatter: {
        // My half holds the round's part of every member's block, at a stride of chunkElems, placed
        // for an output aligned like mine.
        char* mine = placeData(node, half, alignmentOf(recv));
        blockPart(len, s.blockElems, b, &lo, &m);
        for (int q = 0; q < n; ++q) {
          blockCopy(mine + (static_cast<size_t>(q) * s.chunkElems + lo) * es,
                    send + (static_cast<size_t>(q) * c.count + done + lo) * es, m * es);
        }
        if (!peerBarrier(node, c.seq, ++barrier, half, shifts)) return;
        blockReduceHalves<T, Op>(node, shifts, half, (static_cast<size_t>(me) * s.chunkElems + lo) * es, m,
                                 c.divisor, recv + (done + lo) * es, nullptr);
        break;
      }
      case PeerAlgorithm::kAllGather: {
        // My block lands at recv + me * count elsewhere: placed for that offset.
        char* mine = placeData(node, half, alignmentOf(recv + static_cast<size_t>(me) * c.count * es));
        blockPart(len, s.blockElems, b, &lo, &m);
        blockCopy(mine + lo * es, send + (done + lo) * es, m * es);
        if (!peerBarrier(node, c.seq, ++barrier, half, shifts)) return;
        for (int q = 0; q < n; ++q) {
          char* out = recv + (static_cast<size_t>(q) * c.count + done + lo) * es;
          blockCopy(out, q == me ? send + (done + lo) * es : peerData(q, half) + lo * es, m * es);
        }
        break;
      }
      case PeerAlgorithm::kBroadcast: {
        char* mine = placeData(node, half, alignmentOf(recv));
        blockPart(len, s.blockElems, b, &lo, &m);
        if (me == c.root) blockCopy(mine + lo * es, send + (done + lo) * es, m * es);
        if (!peerBarrier(node, c.seq, ++barrier, half, shifts)) return;
        blockCopy(recv + (done + lo) * es, me == c.root ? send + (done + lo) * es : peerData(c.root, half) + lo * es,
                  m * es);
        break;
      }
    }
    done += len;
  }
}

template <typename T, typename Op>
void launchPeerTyped(const PeerKernelArgs& a, cudaStream_t stream) {
  launchKernel("peerCollectiveKernel", peerCollectiveKernel<T, Op>, a.schedule.grid, kThreads, stream, a);
}

}  // namespace strata::cuda
