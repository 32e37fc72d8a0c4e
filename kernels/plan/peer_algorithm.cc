#include "kernels/plan/peer_algorithm.h"

namespace strata {

const char* peerAlgorithmName(PeerAlgorithm a) {
  switch (a) {
    case PeerAlgorithm::kAllReduceOneShot: return "peer_oneshot";
    case PeerAlgorithm::kAllReduceTwoShot: return "peer_twoshot";
    case PeerAlgorithm::kReduceScatter: return "peer_reducescatter";
    case PeerAlgorithm::kAllGather: return "peer_allgather";
    case PeerAlgorithm::kBroadcast: return "peer_broadcast";
  }
  return "?";
}

Collective peerCollective(PeerAlgorithm a) {
  switch (a) {
    case PeerAlgorithm::kAllReduceOneShot:
    case PeerAlgorithm::kAllReduceTwoShot: return Collective::kAllReduce;
    case PeerAlgorithm::kReduceScatter: return Collective::kReduceScatter;
    case PeerAlgorithm::kAllGather: return Collective::kAllGather;
    case PeerAlgorithm::kBroadcast: return Collective::kBroadcast;
  }
  return Collective::kAllReduce;
}

bool peerAlgorithmNamed(Collective c, const std::string& name, PeerAlgorithm* out) {
  for (int i = 0; i < kNumPeerAlgorithms; ++i) {
    const auto a = static_cast<PeerAlgorithm>(i);
    if (peerCollective(a) == c && name == peerAlgorithmName(a)) {
      *out = a;
      return true;
    }
  }
  return false;
}

}  // namespace strata
