#include "src/tuning/tuner.h"

#include "inter_node/algorithms/algorithm.h"

namespace strata {

std::vector<std::string> algorithmNames(Collective c) {
  std::vector<std::string> names;
  for (const FlatAlgorithm* a : flatAlgorithmsFor(c)) names.push_back(a->name);
  return names;
}

CollectiveArgs rankIndependentArgs(const CollectiveArgs& args) {
  CollectiveArgs a = args;
  a.inPlace = false;
  switch (args.coll) {
    case Collective::kAllGatherv:
    case Collective::kReduceScatterv: {
      size_t total = 0;
      for (size_t c : args.counts) total += c;
      a.count = args.counts.empty() ? 0 : total / args.counts.size();
      break;
    }
    case Collective::kGatherv:
    case Collective::kScatterv:
    case Collective::kAllToAllv: a.count = 0; break;
    default: break;
  }
  return a;
}

std::vector<Candidate> candidatesFor(const TunerInput& in, std::vector<std::string>* rejected) {
  const CollectiveArgs& args = *in.args;
  const CollectiveArgs global = rankIndependentArgs(args);
  const int p = in.topology->size;
  std::vector<Candidate> out;
  for (const FlatAlgorithm* algo : flatAlgorithmsFor(args.coll)) {
    const std::string why = algo->unsupported(global, p);
    if (!why.empty()) {
      if (rejected) rejected->push_back(std::string(algo->name) + ": " + why);
      continue;
    }
    Candidate c;
    c.name = algo->name;
    c.predictedSeconds = algo->cost(global, p, in.costs->flat);
    c.automatic = algo->notAutomatic == nullptr || algo->notAutomatic(global, p).empty();
    const Group world = Group::world(p, in.topology->rank);
    BuildOptions opt;
    opt.link = in.costs->flat;
    c.build = [algo, args, world, opt](PlanBuilder& b) { algo->build(b, args, world, opt); };
    out.push_back(std::move(c));
  }
  return out;
}

Status selectAlgorithm(const TunerInput& in, Candidate* out) {
  const CollectiveArgs& args = *in.args;
  std::vector<std::string> rejected;
  std::vector<Candidate> candidates = candidatesFor(in, &rejected);
  const std::string forced = in.config->forcedFor(args.coll);
  if (!forced.empty() && forced != "auto") {
    for (Candidate& c : candidates) {
      if (c.name == forced) {
        *out = std::move(c);
        return Status::Ok();
      }
    }
    for (const std::string& r : rejected) {
      if (r.rfind(forced + ": ", 0) == 0) {
        return makeStatus(strataInvalidUsage, "%s algorithm %s cannot serve this call", collectiveName(args.coll),
                          r.c_str());
      }
    }
    std::string known;
    for (const std::string& n : algorithmNames(args.coll)) known += (known.empty() ? "" : ", ") + n;
    return makeStatus(strataInvalidArgument, "no %s algorithm named '%s' (STRATA_ALGO); %s has: %s",
                      collectiveName(args.coll), forced.c_str(), collectiveName(args.coll),
                      known.empty() ? "none" : known.c_str());
  }
  size_t best = candidates.size();
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!candidates[i].automatic) continue;
    if (best == candidates.size() || candidates[i].predictedSeconds < candidates[best].predictedSeconds) best = i;
  }
  STRATA_REQUIRE(best < candidates.size(), strataInternalError, "no algorithm can serve %s", collectiveName(args.coll));
  *out = std::move(candidates[best]);
  return Status::Ok();
}

}  // namespace strata
