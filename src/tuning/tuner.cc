#include "src/tuning/tuner.h"

#include <algorithm>

#include "hierarchy/composition.h"
#include "inter_node/algorithms/algorithm.h"

namespace strata {

std::vector<std::string> algorithmNames(Collective c) {
  std::vector<std::string> names;
  for (const FlatAlgorithm* a : flatAlgorithmsFor(c)) names.push_back(a->name);
  for (const HierAlgorithm* h : hierAlgorithmsFor(c)) names.push_back(h->name);
  return names;
}

namespace {

// The collective whose measured times price a v-variant.
Collective regularOf(Collective c) {
  switch (c) {
    case Collective::kAllGatherv: return Collective::kAllGather;
    case Collective::kGatherv: return Collective::kGather;
    case Collective::kScatterv: return Collective::kScatter;
    case Collective::kAllToAllv: return Collective::kAllToAll;
    case Collective::kReduceScatterv: return Collective::kReduceScatter;
    default: return c;
  }
}

// The cheapest prediction among the automatic flat candidates of `c` in `candidates`, or -1.
double bestFlat(const std::vector<Candidate>& candidates, Collective c) {
  const std::vector<const FlatAlgorithm*> flats = flatAlgorithmsFor(c);
  double best = -1;
  for (const Candidate& cand : candidates) {
    const bool flat =
        std::any_of(flats.begin(), flats.end(), [&](const FlatAlgorithm* f) { return cand.name == f->name; });
    if (flat && cand.automatic && (best < 0 || cand.predictedSeconds < best)) best = cand.predictedSeconds;
  }
  return best;
}

}  // namespace

std::vector<Candidate> candidatesFor(const TunerInput& in, std::vector<std::string>* rejected) {
  const CollectiveArgs& args = *in.args;
  const CollectiveArgs global = selectionArgs(args);
  const int p = in.topology->size;
  // The parameters for this call's working set (agreed on every rank: hostProcesses is the job's
  // largest host, and the arguments are the rank-independent ones).
  const LevelCosts costs = callCosts(*in.costs, global, in.hostProcesses);
  // This rank's call as made (Candidate::calledSeconds): in place, the formulas without the copies
  // it leaves out, at the out-of-place call's working set (where calibration keys the calls it
  // times in place: perf/calibrate.cc, measure) or its own smaller one, whichever's per-byte costs
  // are cheaper (LevelCosts::forWorkingSet).
  CollectiveArgs called = global;
  called.inPlace = args.inPlace;
  const LevelCosts calledCosts = args.inPlace ? callCosts(*in.costs, called, in.hostProcesses) : costs;
  std::vector<Candidate> out;
  for (const FlatAlgorithm* algo : flatAlgorithmsFor(args.coll)) {
    const std::string why = algo->whyUnsupported(global, p);
    if (!why.empty()) {
      if (rejected) rejected->push_back(std::string(algo->name) + ": " + why);
      continue;
    }
    Candidate c;
    c.name = algo->name;
    c.predictedSeconds = p == 1 ? oneRankCopyBytes(args) * costs.flat.copy : flatAlgorithmPrice(*algo, global, p, costs.flat);
    c.calledSeconds = p == 1 || !args.inPlace ? c.predictedSeconds : flatAlgorithmPrice(*algo, called, p, calledCosts.flat);
    c.automatic = algo->automatic(global, p);
    const Group world = Group::world(p, in.topology->rank);
    BuildOptions opt;
    opt.link = costs.flat;
    c.build = [algo, args, world, opt](PlanBuilder& b) { algo->build(b, args, world, opt); };
    out.push_back(std::move(c));
  }
  for (const HierAlgorithm* h : hierAlgorithmsFor(args.coll)) {
    std::string why = in.nodeTeam ? h->whyUnsupported(global, *in.topology) : "no node team (shared memory unavailable)";
    if (!why.empty()) {
      if (rejected) rejected->push_back(std::string(h->name) + ": " + why);
      continue;
    }
    Candidate c;
    c.name = h->name;
    c.predictedSeconds = h->cost(global, *in.topology, costs);
    c.calledSeconds = args.inPlace ? h->cost(called, *in.topology, calledCosts) : c.predictedSeconds;
    const Topology topo = *in.topology;
    c.build = [h, args, topo, costs](PlanBuilder& b) { h->build(b, args, topo, costs); };
    out.push_back(std::move(c));
  }
  if (in.native) {
    // The MPI library's collective as calibration measured it (the v-variants priced as their
    // regular collective of the same bytes per rank); without a measurement on this many ranks,
    // as the best of Strata's flat algorithms on the flat level (the MPI library runs flat
    // algorithms over the same network). Either way it wins every tie: it has no plan to run.
    double best = in.nativeTimes != nullptr ? in.nativeTimes->predict(regularOf(args.coll), callBytes(global), p) : -1;
    if (best < 0) best = bestFlat(out, args.coll);
    if (best >= 0) {
      Candidate c;
      c.name = kNativeAlgorithm;
      c.predictedSeconds = c.calledSeconds = best;  // measured out of place; the library's own in place unknown
      c.build = [](PlanBuilder&) {};
      out.insert(out.begin(), std::move(c));  // first: the selection keeps the first of equals
    } else if (rejected) {
      rejected->push_back(std::string(kNativeAlgorithm) + ": no flat algorithm to price it by");
    }
  } else if (rejected) {
    rejected->push_back(std::string(kNativeAlgorithm) +
                        ": not enabled (STRATA_MPI_NATIVE), device buffers, or a type, op or collective MPI lacks");
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
  const size_t best = cheapest(
      candidates.size(), [&](size_t i) { return candidates[i].predictedSeconds; },
      [&](size_t i) { return candidates[i].automatic; });
  STRATA_REQUIRE(best < candidates.size(), strataInternalError, "no algorithm can serve %s", collectiveName(args.coll));
  *out = std::move(candidates[best]);
  return Status::Ok();
}

}  // namespace strata
