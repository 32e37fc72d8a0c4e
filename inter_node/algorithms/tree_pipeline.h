// Pipeline block counts of the tree algorithms, from the pipelining lemma (002, "Pipelined binary
// tree"): a binary tree delivers its first block to the deepest leaf after k = 2 * depth rounds and
// a new block every s = 2 rounds.
#pragma once

#include "inter_node/algorithms/algorithm.h"

namespace strata {

// A block leaves a node for each of its children in turn: `fanout` rounds per block, and
// fanout * depth rounds to the deepest leaf. A heap tree of p ranks has nodes of two children
// from p = 3 on; of 2 ranks, one child (a chain of two, a round per block).
inline int heapTreeFanout(int p) { return p > 2 ? 2 : 1; }

// The blocks of a pipeline of latency k rounds and a block every s rounds, capped by the build
// options (no block under opt.minPipelineBytes, at most opt.maxPipelineBlocks, none empty).
inline size_t cappedPipelineBlocks(const CollectiveArgs& a, double bytes, int k, int s, const BuildOptions& opt) {
  const size_t bySize = std::max<size_t>(1, static_cast<size_t>(bytes / static_cast<double>(opt.minPipelineBytes)));
  const size_t cap = std::min({opt.maxPipelineBlocks, bySize, std::max<size_t>(1, a.count)});
  return pipelineBlocks(k, s, opt.link, bytes, cap);
}

inline size_t treePipelineBlocks(const CollectiveArgs& a, double bytes, int depth, const BuildOptions& opt,
                                 int fanout = 2) {
  return cappedPipelineBlocks(a, bytes, fanout * depth, fanout, opt);
}

inline double treePipelineTime(double bytes, int depth, const LinkCost& c, size_t blocks, int fanout = 2) {
  return depth == 0 ? 0.0 : pipelineTime(fanout * depth, fanout, c, bytes, blocks);
}

}  // namespace strata
