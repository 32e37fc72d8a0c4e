// The single-kernel node collectives over peer GPU memory (kernels/cuda/peer_collectives.h runs
// them): their names, for selection, the cost model and introspection, in builds with and without
// CUDA.
#pragma once

#include "kernels/plan/collective.h"

namespace strata {

enum class PeerAlgorithm : int { kAllReduceOneShot, kAllReduceTwoShot, kReduceScatter, kAllGather, kBroadcast };
constexpr int kNumPeerAlgorithms = 5;

// "peer_oneshot", "peer_twoshot", "peer_reducescatter", "peer_allgather", "peer_broadcast".
const char* peerAlgorithmName(PeerAlgorithm a);
// The collective a peer algorithm serves.
Collective peerCollective(PeerAlgorithm a);
// The peer algorithm named `name` for `c`; false when there is none of that name (or for c).
bool peerAlgorithmNamed(Collective c, const std::string& name, PeerAlgorithm* out);

}  // namespace strata
