#include "tests/verifier/plan_factory.h"

#include "src/core/collective_runner.h"

namespace strata::verify {

BuildOptions manyBlocksOptions() {
  BuildOptions opt;
  opt.link = LinkCost{1e-9, 1e-6, 1e-9};  // messages nearly free: the lemma asks for many blocks
  opt.minPipelineBytes = 1;
  opt.maxPipelineBlocks = 64;
  return opt;
}

Plan buildFlatPlan(const FlatAlgorithm& algo, const CollectiveArgs& args, int p, int rank, const BuildOptions& opt) {
  Plan plan;
  plan.algorithm = algo.name;
  plan.divisor = p;
  const CollectiveArgs ra = rankArgs(args, rank);
  PlanBuilder b(&plan);
  applyInPlaceAlias(b, ra, rank);
  algo.build(b, ra, Group::world(p, rank), opt);
  b.finish();
  return plan;
}

Result verifyFlat(const FlatAlgorithm& algo, const CollectiveArgs& args, int p, const BuildOptions& opt) {
  Case c;
  c.args = args;
  c.args.commSize = p;
  c.p = p;
  for (int r = 0; r < p; ++r) c.plans.push_back(buildFlatPlan(algo, c.args, p, r, opt));
  return run(c);
}

}  // namespace strata::verify
