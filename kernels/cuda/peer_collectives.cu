// The peer collectives' schedule (how a call cuts its message into rounds, chunks and block
// ranges) and their launch.
#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/peer_collectives.h"
#include "kernels/cuda/reduce_kernels.cuh"

namespace strata::cuda {
namespace {

size_t roundDown(size_t x, size_t a) { return x / a * a; }
size_t roundUp(size_t x, size_t a) { return (x + a - 1) / a * a; }
size_t ceilDiv(size_t x, size_t a) { return (x + a - 1) / a; }

// Bytes per block and phase below which a call uses fewer blocks: each block pays a barrier with
// every peer per phase, which a small range does not amortise.
constexpr size_t kBytesPerBlock = 64 << 10;

// One thread per other member: this member's stop record in that member's signal area, each a
// word written whole (the refused call's number, or the failed flag).
__global__ void peerStopKernel(PeerNode node, uint64_t seq, bool failed) {
  const int p = static_cast<int>(threadIdx.x);
  if (p >= node.ranks || p == node.me) return;
  if (failed) storeVolatileGlobal(static_cast<volatile uint32_t*>(failedRecord(node, p, node.me)), 1u);
  else storeVolatileGlobal(static_cast<volatile uint64_t*>(refusedRecord(node, p, node.me)), seq);
  __threadfence_system();
}

}  // namespace

PeerSchedule peerSchedule(const PeerNode& node, const PeerCall& call, size_t elemSize) {
  PeerSchedule s;
  const size_t vec = kVectorBytes / elemSize;  // elements per 16-byte vector
  // A half's header and the data's start past it (placeData in peer_kernels.cuh) take 32 bytes.
  const size_t half = node.halfBytes > 32 ? (node.halfBytes - 32) / elemSize : 0;
  const size_t n = static_cast<size_t>(node.ranks);
  if (call.count == 0 || n == 0) return s;
  size_t span = 0;  // elements a phase cuts into block ranges
  size_t perRank = 0;  // bytes a member moves per round and phase
  switch (call.algorithm) {
    case PeerAlgorithm::kAllReduceTwoShot: {
      // Input area of n chunks, then my chunk's result: (n + 1) chunks per half. Rounds of equal
      // size, so that every member reduces about as much in the last round as in the others (a
      // short last round would leave the members owning its later chunks with nothing to do).
      const size_t chunkCap = roundDown(half / (n + 1), vec);
      if (chunkCap == 0) return s;
      const size_t rounds = ceilDiv(call.count, n * chunkCap);
      s.chunkElems = roundUp(ceilDiv(ceilDiv(call.count, rounds), n), vec);
      s.roundElems = std::min(call.count, n * s.chunkElems);
      span = s.chunkElems;
      perRank = s.roundElems * elemSize;
      break;
    }
    case PeerAlgorithm::kReduceScatter: {
      // The round's part of every member's block, each at a 16-byte aligned stride.
      s.roundElems = std::min(call.count, roundDown(half / n, vec));
      s.chunkElems = roundUp(s.roundElems, vec);
      span = s.roundElems;
      perRank = n * s.roundElems * elemSize;
      break;
    }
    default:
      s.roundElems = std::min(call.count, roundDown(half, vec));
      span = s.roundElems;
      perRank = s.roundElems * elemSize;
      break;
  }
  if (s.roundElems == 0) return s;  // a half too small for one vector per chunk: refused by the caller
  s.grid = static_cast<unsigned>(std::clamp<size_t>(ceilDiv(perRank, kBytesPerBlock), 1, kMaxPeerBlocks));
  s.blockElems = roundUp(ceilDiv(span, s.grid), vec);
  s.rounds = ceilDiv(call.count, s.roundElems);
  s.barriers = static_cast<uint32_t>(s.rounds * (call.algorithm == PeerAlgorithm::kAllReduceTwoShot ? 2 : 1));
  return s;
}

Status launchPeerCollective(const PeerNode& node, const PeerCall& call, DataType type, RedOp op, cudaStream_t stream) {
  STRATA_REQUIRE(node.ranks >= 1 && node.ranks <= kMaxPeerRanks && node.me >= 0 && node.me < node.ranks,
                 strataInternalError, "peer collective: member %d of %d (at most %d)", node.me, node.ranks,
                 kMaxPeerRanks);
  STRATA_REQUIRE(isValidRedOp(op), strataInternalError, "peer collective: invalid op %d", static_cast<int>(op));
  PeerKernelArgs a;
  a.node = node;
  a.call = call;
  a.schedule = peerSchedule(node, call, dataTypeSize(type));
  if (a.schedule.rounds == 0) {
    STRATA_REQUIRE(call.count == 0, strataInternalError, "peer collective: a half of %zu bytes holds no round",
                   node.halfBytes);
    return Status::Ok();
  }
  TypedLaunch launch;
  launch.peer = &a;
  launch.op = op;
  launch.stream = stream;
  STRATA_REQUIRE(launchAnyType(launch, type), strataInternalError, "peer collective: invalid datatype %d",
                 static_cast<int>(type));
  return cudaCheck(cudaGetLastError(), "cudaGetLastError", STRATA_WHERE).withContext("launching the peer collective kernel");
}

Status launchPeerStop(const PeerNode& node, uint64_t seq, bool failed, cudaStream_t stream) {
  if (node.ranks <= 1) return Status::Ok();
  launchKernel("peerStopKernel", peerStopKernel, 1, kMaxPeerRanks, stream, node, seq, failed);
  return cudaCheck(cudaGetLastError(), "cudaGetLastError", STRATA_WHERE).withContext("launching the peer stop kernel");
}

const void* peerStopKernelAddress() { return reinterpret_cast<const void*>(peerStopKernel); }

}  // namespace strata::cuda
