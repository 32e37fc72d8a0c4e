// The alpha-beta-gamma cost model's vocabulary (002, "Linear transmission cost model"): sending m
// bytes costs alpha + beta * m, reducing m bytes costs gamma * m. Each level of the machine (the
// flat communicator, the node, the lanes) has its own parameters.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace strata {

struct LinkCost {
  double alpha = 2e-6;        // seconds per message
  double beta = 1.0 / 4e9;    // seconds per byte moved
  double gamma = 1.0 / 4e9;   // seconds per byte reduced (per input)
  // The node level: bytes a node step moves per round, each round paying alpha (the host
  // segment's 256 KiB slots; a GPU node's peer buffers are larger).
  double roundBytes = 256 << 10;
};

// Memory hierarchy: a host moves and reduces data that fits its last-level cache faster than data
// that streams from DRAM (on the 2-core EPYC VM, 2x between a 4 MiB and a 16 MiB allgather). Beta
// and gamma are blended between the cached and the streaming values by the share of the call's
// working set (every process of the host: send and receive buffers) that fits the cache.
struct MemoryCosts {
  double betaMem = 0;   // 0: as beta (the plain alpha-beta-gamma model)
  double gammaMem = 0;  // 0: as gamma
};
inline double cachedShare(double workingSetBytes, double cacheBytes) {
  if (cacheBytes <= 0 || workingSetBytes <= cacheBytes) return 1.0;
  return cacheBytes / workingSetBytes;
}
inline LinkCost forWorkingSet(const LinkCost& c, const MemoryCosts& m, double workingSetBytes, double cacheBytes) {
  const double f = cachedShare(workingSetBytes, cacheBytes);
  LinkCost out = c;
  if (m.betaMem > 0) out.beta = f * c.beta + (1 - f) * m.betaMem;
  if (m.gammaMem > 0) out.gamma = f * c.gamma + (1 - f) * m.gammaMem;
  return out;
}

inline int ceilLog2(int p) {
  int k = 0;
  while ((1 << k) < p) ++k;
  return k;
}
inline int floorPow2(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

// The levels of the machine: the flat communicator (any two ranks over MPI), the node (its shared
// memory or peer GPU memory) and a lane between nodes (MPI, all lanes busy at once).
struct LevelCosts {
  LinkCost flat;
  LinkCost node{0.5e-6, 1.0 / 8e9, 1.0 / 4e9};
  LinkCost lane;
  // Streaming (out of cache) beta and gamma per level, and the cache they stream past (0: none).
  double cacheBytes = 0;
  MemoryCosts flatMem, nodeMem, laneMem;

  // The parameters for a call whose host-wide working set is `workingSetBytes`.
  LevelCosts forWorkingSet(double workingSetBytes) const {
    LevelCosts out = *this;
    out.flat = strata::forWorkingSet(flat, flatMem, workingSetBytes, cacheBytes);
    out.node = strata::forWorkingSet(node, nodeMem, workingSetBytes, cacheBytes);
    out.lane = strata::forWorkingSet(lane, laneMem, workingSetBytes, cacheBytes);
    return out;
  }
};

// The pipelining lemma (002, "The power of pipelining"): with a latency of k rounds to deliver the
// first block and a new block every s rounds, cutting m bytes into M blocks takes
// (k + s(M-1))(alpha + beta m / M), minimised at M* = sqrt((k - s) beta m / (s alpha)).
inline size_t pipelineBlocks(int k, int s, const LinkCost& c, double bytes, size_t maxBlocks) {
  if (k <= s || bytes <= 0 || maxBlocks <= 1) return 1;
  const double best = std::sqrt((k - s) * c.beta * bytes / (s * c.alpha));
  const double clamped = std::clamp(best, 1.0, static_cast<double>(maxBlocks));
  return static_cast<size_t>(std::llround(clamped));
}
inline double pipelineTime(int k, int s, const LinkCost& c, double bytes, size_t blocks) {
  const double M = static_cast<double>(blocks);
  return (k + s * (M - 1)) * (c.alpha + c.beta * bytes / M);
}

}  // namespace strata
