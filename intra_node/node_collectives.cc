#include "intra_node/node_collectives.h"

#include <algorithm>
#include <cmath>

namespace strata {
namespace {

NodeOpDesc emptyDesc(const Group& team, const char* what) {
  NodeOpDesc d;
  d.what = what;
  d.members = team.ranks;
  d.me = team.me;
  const size_t n = team.ranks.size();
  d.writeCounts.assign(n, {});
  d.writeShared.assign(n, {});
  return d;
}

uint32_t u(int x) { return static_cast<uint32_t>(x); }

}  // namespace

NodeOpDesc nodeReduceScatter(const Group& team, const std::vector<Slice>& blocks, Slice result) {
  std::vector<std::vector<Slice>> perMember(blocks.size());
  for (size_t k = 0; k < blocks.size(); ++k) perMember[k] = {blocks[k]};
  NodeOpDesc d = nodeReduceScatterPieces(team, perMember, {result});
  d.what = "node-reduce-scatter";
  return d;
}

NodeOpDesc nodeReduceScatterPieces(const Group& team, const std::vector<std::vector<Slice>>& blocks,
                                   const std::vector<Slice>& results) {
  NodeOpDesc d = emptyDesc(team, "node-reduce-scatter");
  const int n = team.size();
  // Every member writes every piece of every member's share, in order; the pieces of member k's own
  // share are read by k alone.
  for (int j = 0; j < n; ++j) {
    for (int k = 0; k < n; ++k) {
      for (const Slice& piece : blocks[static_cast<size_t>(k)]) {
        d.writeCounts[static_cast<size_t>(j)].push_back(piece.count);
        d.writeShared[static_cast<size_t>(j)].push_back(k != j ? 1 : 0);
        if (j == team.me) d.writes.push_back(piece);
      }
    }
  }
  // My share's pieces: index of piece t of member me's share within every member's writes.
  uint32_t first = 0;
  for (int k = 0; k < team.me; ++k) first += u(static_cast<int>(blocks[static_cast<size_t>(k)].size()));
  const auto& mine = blocks[static_cast<size_t>(team.me)];
  for (size_t t = 0; t < mine.size(); ++t) {
    NodeRead r;
    r.dst = results[t];
    for (int j = 0; j < n; ++j) r.sources.push_back({u(j), first + u(static_cast<int>(t))});
    if (r.dst.count) d.reads.push_back(r);
  }
  return d;
}

NodeOpDesc nodeAllGather(const Group& team, const std::vector<std::vector<Slice>>& pieces) {
  NodeOpDesc d = emptyDesc(team, "node-allgather");
  const int n = team.size();
  for (int j = 0; j < n; ++j) {
    for (const Slice& p : pieces[static_cast<size_t>(j)]) {
      d.writeCounts[static_cast<size_t>(j)].push_back(p.count);
      d.writeShared[static_cast<size_t>(j)].push_back(n > 1 ? 1 : 0);
    }
  }
  d.writes = pieces[static_cast<size_t>(team.me)];
  for (int j = 0; j < n; ++j) {
    if (j == team.me) continue;
    const auto& pj = pieces[static_cast<size_t>(j)];
    for (size_t t = 0; t < pj.size(); ++t) {
      if (pj[t].count) d.reads.push_back({pj[t], {{u(j), u(static_cast<int>(t))}}});
    }
  }
  return d;
}

NodeOpDesc nodeBroadcast(const Group& team, int root, Slice in, Slice out) {
  NodeOpDesc d = emptyDesc(team, "node-broadcast");
  d.writeCounts[static_cast<size_t>(root)] = {out.count};
  d.writeShared[static_cast<size_t>(root)] = {static_cast<uint8_t>(team.size() > 1 ? 1 : 0)};
  if (team.me == root) d.writes = {in};
  if (out.count) d.reads.push_back({out, {{u(root), 0}}});
  return d;
}

NodeOpDesc nodeReduce(const Group& team, int root, Slice in, Slice out) {
  NodeOpDesc d = emptyDesc(team, "node-reduce");
  const int n = team.size();
  for (int j = 0; j < n; ++j) {
    d.writeCounts[static_cast<size_t>(j)] = {in.count};
    d.writeShared[static_cast<size_t>(j)] = {static_cast<uint8_t>(j != root ? 1 : 0)};
  }
  d.writes = {in};
  if (team.me == root && out.count) {
    NodeRead r;
    r.dst = out;
    for (int j = 0; j < n; ++j) r.sources.push_back({u(j), 0});
    d.reads.push_back(r);
  }
  return d;
}

NodeOpDesc nodeAllReduce(const Group& team, Slice in, Slice out) {
  NodeOpDesc d = emptyDesc(team, "node-allreduce");
  const int n = team.size();
  for (int j = 0; j < n; ++j) {
    d.writeCounts[static_cast<size_t>(j)] = {in.count};
    d.writeShared[static_cast<size_t>(j)] = {static_cast<uint8_t>(n > 1 ? 1 : 0)};
  }
  d.writes = {in};
  if (out.count) {
    NodeRead r;
    r.dst = out;
    for (int j = 0; j < n; ++j) r.sources.push_back({u(j), 0});
    d.reads.push_back(r);
  }
  return d;
}

NodeOpDesc nodeGather(const Group& team, int root, const std::vector<std::vector<Slice>>& inPieces,
                      const std::vector<std::vector<Slice>>& outPieces) {
  NodeOpDesc d = emptyDesc(team, "node-gather");
  const int n = team.size();
  for (int j = 0; j < n; ++j) {
    for (const Slice& p : inPieces[static_cast<size_t>(j)]) {
      d.writeCounts[static_cast<size_t>(j)].push_back(p.count);
      d.writeShared[static_cast<size_t>(j)].push_back(j != root ? 1 : 0);
    }
  }
  d.writes = inPieces[static_cast<size_t>(team.me)];
  if (team.me == root) {
    for (int j = 0; j < n; ++j) {
      const auto& out = outPieces[static_cast<size_t>(j)];
      for (size_t t = 0; t < out.size(); ++t) {
        if (out[t].count) d.reads.push_back({out[t], {{u(j), u(static_cast<int>(t))}}});
      }
    }
  }
  return d;
}

NodeOpDesc nodeScatter(const Group& team, int root, const std::vector<std::vector<Slice>>& inPieces,
                       const std::vector<std::vector<Slice>>& outPieces) {
  NodeOpDesc d = emptyDesc(team, "node-scatter");
  const int n = team.size();
  for (int k = 0; k < n; ++k) {
    for (const Slice& p : inPieces[static_cast<size_t>(k)]) {
      d.writeCounts[static_cast<size_t>(root)].push_back(p.count);
      d.writeShared[static_cast<size_t>(root)].push_back(k != root ? 1 : 0);
    }
  }
  if (team.me == root) {
    for (int k = 0; k < n; ++k) {
      for (const Slice& p : inPieces[static_cast<size_t>(k)]) d.writes.push_back(p);
    }
  }
  uint32_t first = 0;
  for (int k = 0; k < team.me; ++k) first += u(static_cast<int>(inPieces[static_cast<size_t>(k)].size()));
  const auto& out = outPieces[static_cast<size_t>(team.me)];
  for (size_t t = 0; t < out.size(); ++t) {
    if (out[t].count) d.reads.push_back({out[t], {{u(root), first + u(static_cast<int>(t))}}});
  }
  return d;
}

NodeOpDesc nodeAllToAll(const Group& team, const std::vector<Slice>& in, const std::vector<Slice>& out) {
  NodeOpDesc d = emptyDesc(team, "node-alltoall");
  const int n = team.size();
  for (int j = 0; j < n; ++j) {
    for (int k = 0; k < n; ++k) {
      d.writeCounts[static_cast<size_t>(j)].push_back(in[static_cast<size_t>(k)].count);
      d.writeShared[static_cast<size_t>(j)].push_back(k != j ? 1 : 0);
    }
  }
  d.writes = in;
  for (int j = 0; j < n; ++j) {
    if (out[static_cast<size_t>(j)].count) d.reads.push_back({out[static_cast<size_t>(j)], {{u(j), u(team.me)}}});
  }
  return d;
}

NodeOpDesc nodeAllToAllPieces(const Group& team, const std::vector<std::vector<Slice>>& inPieces,
                              const std::vector<std::vector<Slice>>& outPieces) {
  NodeOpDesc d = emptyDesc(team, "node-alltoall");
  const int n = team.size();
  for (int j = 0; j < n; ++j) {
    for (int k = 0; k < n; ++k) {
      for (const Slice& p : inPieces[static_cast<size_t>(k)]) {
        d.writeCounts[static_cast<size_t>(j)].push_back(p.count);
        d.writeShared[static_cast<size_t>(j)].push_back(k != j ? 1 : 0);
      }
    }
  }
  for (int k = 0; k < n; ++k) {
    for (const Slice& p : inPieces[static_cast<size_t>(k)]) d.writes.push_back(p);
  }
  uint32_t first = 0;  // index of the pieces every member sends to me
  for (int k = 0; k < team.me; ++k) first += u(static_cast<int>(inPieces[static_cast<size_t>(k)].size()));
  for (int j = 0; j < n; ++j) {
    const auto& out = outPieces[static_cast<size_t>(j)];
    for (size_t t = 0; t < out.size(); ++t) {
      if (out[t].count) d.reads.push_back({out[t], {{u(j), first + u(static_cast<int>(t))}}});
    }
  }
  return d;
}

NodeOpDesc nodeScan(const Group& team, Slice in, Slice out, bool exclusive) {
  NodeOpDesc d = emptyDesc(team, exclusive ? "node-exscan" : "node-scan");
  const int n = team.size();
  for (int j = 0; j < n; ++j) {
    d.writeCounts[static_cast<size_t>(j)] = {in.count};
    // read by the members after j
    d.writeShared[static_cast<size_t>(j)] = {static_cast<uint8_t>(j < n - 1 ? 1 : 0)};
  }
  d.writes = {in};
  const int last = exclusive ? team.me - 1 : team.me;
  if (last >= 0 && out.count) {
    NodeRead r;
    r.dst = out;
    for (int j = 0; j <= last; ++j) r.sources.push_back({u(j), 0});
    d.reads.push_back(r);
  }
  return d;
}

NodeOpDesc nodeBarrier(const Group& team) {
  NodeOpDesc d = emptyDesc(team, "node-barrier");
  d.fullSync = true;
  return d;
}

}  // namespace strata
