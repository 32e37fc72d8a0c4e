// Pipeline block counts of the tree algorithms, from the pipelining lemma (002, "Pipelined binary
// tree"): a binary tree delivers its first block to the deepest leaf after k = 2 * depth rounds and
// a new block every s = 2 rounds.
#pragma once

#include "inter_node/algorithms/algorithm.h"

namespace strata {

inline size_t treePipelineBlocks(const CollectiveArgs& a, double bytes, int depth, const BuildOptions& opt) {
  const size_t bySize = std::max<size_t>(1, static_cast<size_t>(bytes / static_cast<double>(opt.minPipelineBytes)));
  const size_t cap = std::min({opt.maxPipelineBlocks, bySize, std::max<size_t>(1, a.count)});
  return pipelineBlocks(2 * depth, 2, opt.link, bytes, cap);
}

inline double treePipelineTime(double bytes, int depth, const LinkCost& c, size_t blocks) {
  return depth == 0 ? 0.0 : pipelineTime(2 * depth, 2, c, bytes, blocks);
}

}  // namespace strata
