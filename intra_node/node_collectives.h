// Intra-node algorithms over the node team's shared segment, as node-op descriptions: every member
// loads what it needs directly from the other members' slots (a one-step, "direct" algorithm; the
// shared segment makes the node fully connected). Each builder returns this member's node op;
// pieces are described by slices of this member's buffers, with the same layout on every member.
#pragma once

#include <vector>

#include "kernels/plan/cost.h"
#include "kernels/plan/group.h"
#include "kernels/plan/plan.h"

namespace strata {

// Reduce-scatter: member j ends with the reduction over all members of their block j, in member
// order. `blocks[k]` is block k of my input; `result` receives my block's reduction. Blocks may be
// any slices (strided layouts included) as long as block k has the same size on every member.
NodeOpDesc nodeReduceScatter(const Group& team, const std::vector<Slice>& blocks, Slice result);
// Reduce-scatter where member k's result consists of several pieces (blocks[k][t] is piece t of
// member k's share): strided layouts of the hierarchical reduce-scatter.
NodeOpDesc nodeReduceScatterPieces(const Group& team, const std::vector<std::vector<Slice>>& blocks,
                                   const std::vector<Slice>& results);
// Allgather in place: member k owns pieces[k] (already in its buffer); every member gets them all.
NodeOpDesc nodeAllGather(const Group& team, const std::vector<std::vector<Slice>>& pieces);
// Broadcast from member `root`: `in` at the root, `out` everywhere (the root copies if they differ).
NodeOpDesc nodeBroadcast(const Group& team, int root, Slice in, Slice out);
// Reduce to member `root`: out = reduction of every member's `in`, in member order.
NodeOpDesc nodeReduce(const Group& team, int root, Slice in, Slice out);
// One-shot allreduce: every member reduces every member's `in` into its `out`, all in member order,
// so every member holds the same bits.
NodeOpDesc nodeAllReduce(const Group& team, Slice in, Slice out);
// Gather to `root`: member k's pieces[k] (slices in its buffer) land in the root's outPieces[k].
NodeOpDesc nodeGather(const Group& team, int root, const std::vector<std::vector<Slice>>& inPieces,
                      const std::vector<std::vector<Slice>>& outPieces);
// Scatter from `root`: the root's inPieces[k] land in member k's outPieces[k].
NodeOpDesc nodeScatter(const Group& team, int root, const std::vector<std::vector<Slice>>& inPieces,
                       const std::vector<std::vector<Slice>>& outPieces);
// Alltoall: my `in[k]` goes to member k's `out[me]`.
NodeOpDesc nodeAllToAll(const Group& team, const std::vector<Slice>& in, const std::vector<Slice>& out);
// Alltoall with lists of pieces: my inPieces[k] (a list) go to member k's outPieces[me] (a list of
// the same sizes on every member).
NodeOpDesc nodeAllToAllPieces(const Group& team, const std::vector<std::vector<Slice>>& inPieces,
                              const std::vector<std::vector<Slice>>& outPieces);
// Scan over the team in member order: out = in_0 op ... op in_me (exclusive: up to in_{me-1}; member
// 0 then writes nothing).
NodeOpDesc nodeScan(const Group& team, Slice in, Slice out, bool exclusive);
// Barrier: a round with no data in which everyone waits for everyone.
NodeOpDesc nodeBarrier(const Group& team);

}  // namespace strata
