#include "kernels/plan/topology.h"

#include <algorithm>
#include <map>

namespace strata {

int Topology::maxNodeSize() const {
  int m = 0;
  for (const auto& n : nodes) m = std::max(m, static_cast<int>(n.size()));
  return m;
}

bool Topology::regular() const {
  for (const auto& n : nodes) {
    if (n.size() != nodes.front().size()) return false;
  }
  return true;
}

bool Topology::consecutive() const {
  int next = 0;
  for (const auto& n : nodes) {
    for (int r : n) {
      if (r != next++) return false;
    }
  }
  return true;
}

Group Topology::nodeGroup(int r) const {
  Group g;
  g.ranks = nodes[static_cast<size_t>(nodeOf[static_cast<size_t>(r)])];
  g.me = localRankOf[static_cast<size_t>(r)];
  return g;
}

std::vector<int> Topology::laneMembers(int localRank) const {
  std::vector<int> lane;
  for (const auto& n : nodes) {
    if (localRank < static_cast<int>(n.size())) lane.push_back(n[static_cast<size_t>(localRank)]);
  }
  return lane;
}

Group Topology::laneGroup(int r) const {
  Group g;
  g.ranks = laneMembers(localRankOf[static_cast<size_t>(r)]);
  g.me = static_cast<int>(std::find(g.ranks.begin(), g.ranks.end(), r) - g.ranks.begin());
  return g;
}

std::string Topology::shapeText() const {
  if (regular()) return strformat("%dx%d", numNodes(), nodes.empty() ? 0 : static_cast<int>(nodes.front().size()));
  std::string s;
  for (const auto& n : nodes) {
    if (!s.empty()) s.push_back('+');
    s.append(std::to_string(n.size()));
  }
  return s;
}

Topology Topology::fromNodeKeys(const std::vector<int>& key, int rank) {
  Topology t;
  t.size = static_cast<int>(key.size());
  t.rank = rank;
  t.nodeOf.assign(key.size(), -1);
  t.localRankOf.assign(key.size(), -1);
  std::map<int, int> nodeOfKey;
  for (int r = 0; r < t.size; ++r) {
    auto it = nodeOfKey.find(key[static_cast<size_t>(r)]);
    if (it == nodeOfKey.end()) {
      it = nodeOfKey.emplace(key[static_cast<size_t>(r)], static_cast<int>(t.nodes.size())).first;
      t.nodes.emplace_back();
    }
    const int node = it->second;
    t.nodeOf[static_cast<size_t>(r)] = node;
    t.localRankOf[static_cast<size_t>(r)] = static_cast<int>(t.nodes[static_cast<size_t>(node)].size());
    t.nodes[static_cast<size_t>(node)].push_back(r);
  }
  return t;
}

Status Topology::fromShape(const std::vector<int>& shape, int size, int rank, Topology* out) {
  std::vector<int> key(static_cast<size_t>(size));
  if (shape.size() == 1) {
    const int k = shape[0];
    STRATA_REQUIRE(k > 0, strataInvalidArgument, "virtual nodes of %d ranks", k);
    for (int r = 0; r < size; ++r) key[static_cast<size_t>(r)] = r / k;
  } else {
    int total = 0;
    for (int s : shape) total += s;
    STRATA_REQUIRE(total == size, strataInvalidArgument,
                   "virtual node sizes add up to %d ranks but the communicator has %d", total, size);
    int r = 0;
    for (size_t node = 0; node < shape.size(); ++node) {
      for (int i = 0; i < shape[node]; ++i) key[static_cast<size_t>(r++)] = static_cast<int>(node);
    }
  }
  *out = fromNodeKeys(key, rank);
  out->virtualNodes = true;
  return Status::Ok();
}

}  // namespace strata
