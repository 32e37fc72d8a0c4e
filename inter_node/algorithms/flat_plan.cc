// A flat algorithm's plan for one rank, and its price: its cost formula and the rewrite its plan
// makes.
#include <algorithm>
#include <set>

#include "inter_node/algorithms/algorithm.h"
#include "kernels/plan/peer_reads.h"

namespace strata {

Plan buildFlatPlan(const FlatAlgorithm& f, const CollectiveArgs& args, int p, int rank, const BuildOptions& opt) {
  CollectiveArgs mine = args;
  if ((specOf(args.coll).rooted && rank != args.root) || args.coll == Collective::kBarrier) mine.inPlace = false;
  Plan plan;
  plan.algorithm = f.name;
  plan.divisor = p;
  PlanBuilder b(&plan);
  applyInPlaceAlias(b, mine, rank);
  f.build(b, mine, Group::world(p, rank), opt);
  b.finish();
  return plan;
}

RewrittenBytes flatRewrittenBytes(const FlatAlgorithm& f, const CollectiveArgs& args, int p, const LinkCost& c) {
  // Only what every rank of the call knows alike, as a choice must read: a rooted call may be in
  // place at its root alone (counted out of place), and the v-variants whose arrays are each
  // rank's own (gatherv, scatterv, alltoallv) are not counted.
  const Collective k = args.coll;
  if (p <= 1 || args.count == 0 || k == Collective::kGatherv || k == Collective::kScatterv ||
      k == Collective::kAllToAllv) {
    return {};
  }
  CollectiveArgs shared = args;
  const bool rooted = specOf(k).rooted;
  if (rooted) shared.inPlace = false;
  const int root = rooted ? std::clamp(args.root, 0, p - 1) : 0;
  BuildOptions opt;
  opt.link = c;
  const bool priced = c.pricesRewrites();
  RewrittenBytes most;
  for (int r : std::set<int>{0, std::min(1, p - 1), p / 2, p - 1, root}) {
    const RewrittenBytes b = rewrittenBytes(buildFlatPlan(f, shared, p, r, opt), args.elemSize());
    if (priced ? b.seconds(c) > most.seconds(c) : b.total() > most.total()) most = b;
  }
  return most;
}

double flatAlgorithmPrice(const FlatAlgorithm& f, const CollectiveArgs& args, int p, const LinkCost& c) {
  CollectiveArgs shared = selectionArgs(args);
  shared.inPlace = args.inPlace;  // a rooted call's is its root's (the others hold one of the two buffers)
  const double formula = f.cost(shared, p, c);
  return c.pricesRewrites() ? formula + flatRewrittenBytes(f, args, p, c).seconds(c) : formula;
}

}  // namespace strata
