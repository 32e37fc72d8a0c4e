// Helpers shared by the compositions: the level groups and nested flat algorithms.
#include <limits>

#include "hierarchy/composition.h"

namespace strata {
namespace {

CollectiveArgs nestedArgs(const CollectiveArgs& outer, const NestedCall& call, int groupSize) {
  CollectiveArgs a;
  a.coll = call.coll;
  a.count = call.count;
  a.type = outer.type;
  a.op = outer.op;
  a.root = call.root;
  a.shift = 0;
  a.inPlace = call.inPlace;
  a.commSize = groupSize;
  a.counts = call.counts;
  a.displs = call.displs;
  a.sendCounts = call.sendCounts;
  a.sendDispls = call.sendDispls;
  return a;
}

}  // namespace

const FlatAlgorithm* levelAlgorithm(const CollectiveArgs& outer, const NestedCall& call, int groupSize, const LinkCost& c) {
  const CollectiveArgs nested = nestedArgs(outer, call, groupSize);
  const CollectiveArgs a = selectionArgs(nested);
  const std::vector<const FlatAlgorithm*> flats = flatAlgorithmsFor(call.coll);
  const size_t best = cheapest(
      flats.size(), [&](size_t i) { return flatAlgorithmPrice(*flats[i], nested, groupSize, c); },
      [&](size_t i) { return flats[i]->whyUnsupported(a, groupSize).empty() && flats[i]->automatic(a, groupSize); });
  return best < flats.size() ? flats[best] : nullptr;
}

double levelCost(const CollectiveArgs& outer, const NestedCall& call, int groupSize, const LinkCost& c) {
  const FlatAlgorithm* f = levelAlgorithm(outer, call, groupSize, c);
  return f == nullptr ? std::numeric_limits<double>::infinity()
                      : flatAlgorithmPrice(*f, nestedArgs(outer, call, groupSize), groupSize, c);
}

void buildLevel(PlanBuilder& b, const CollectiveArgs& outer, const NestedCall& call, const Group& g, Slice send,
                Slice recv, const LinkCost& c, int phaseBase) {
  const FlatAlgorithm* f = levelAlgorithm(outer, call, g.size(), c);
  if (f == nullptr) return;  // every level collective has an algorithm that serves any call
  BuildOptions opt;
  opt.link = c;
  b.pushView(send, recv, phaseBase);
  f->build(b, nestedArgs(outer, call, g.size()), g, opt);
  b.popView();
}

Group representatives(const Topology& t, int root) {
  Group g;
  const int rootNode = t.nodeOf[static_cast<size_t>(root)];
  for (int k = 0; k < t.numNodes(); ++k) {
    g.ranks.push_back(k == rootNode ? root : t.nodes[static_cast<size_t>(k)][0]);
  }
  g.me = 0;
  for (int k = 0; k < t.numNodes(); ++k) {
    if (g.ranks[static_cast<size_t>(k)] == t.rank) g.me = k;
  }
  return g;
}

bool isRepresentative(const Topology& t, int root) {
  const int node = t.myNode();
  return node == t.nodeOf[static_cast<size_t>(root)] ? t.rank == root : t.myLocalRank() == 0;
}

std::string needRegular(const Topology& t) { return t.regular() ? "" : "needs nodes of equal size"; }
std::string needConsecutive(const Topology& t) {
  return t.consecutive() ? "" : "needs every node's ranks to be consecutive";
}

}  // namespace strata
