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

Result verifyFlat(const FlatAlgorithm& algo, const CollectiveArgs& args, int p, const BuildOptions& opt,
                  const std::vector<CollectiveArgs>& perRank) {
  Case c;
  c.args = args;
  c.args.commSize = p;
  c.p = p;
  c.perRank = perRank;
  for (auto& a : c.perRank) a.commSize = p;
  for (int r = 0; r < p; ++r) c.plans.push_back(buildFlatPlan(algo, c.argsOf(r), p, r, opt));
  return run(c);
}

Status topologyFor(const std::string& shape, int p, int rank, Topology* out) {
  if (shape.rfind("rr", 0) == 0) {
    const int nodes = std::stoi(shape.substr(2));
    std::vector<int> key(static_cast<size_t>(p));
    for (int r = 0; r < p; ++r) key[static_cast<size_t>(r)] = r % nodes;
    *out = Topology::fromNodeKeys(key, rank);
    return Status::Ok();
  }
  std::vector<int> sizes;
  size_t pos = 0;
  while (pos <= shape.size()) {
    const size_t next = shape.find(',', pos);
    sizes.push_back(std::stoi(shape.substr(pos, next == std::string::npos ? std::string::npos : next - pos)));
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return Topology::fromShape(sizes, p, rank, out);
}

Plan buildHierPlan(const HierAlgorithm& algo, const CollectiveArgs& args, const Topology& topo, const LevelCosts& costs) {
  Plan plan;
  plan.algorithm = algo.name;
  plan.divisor = topo.size;
  const CollectiveArgs ra = rankArgs(args, topo.rank);
  PlanBuilder b(&plan);
  applyInPlaceAlias(b, ra, topo.rank);
  algo.build(b, ra, topo, costs);
  b.finish();
  return plan;
}

Result verifyHier(const HierAlgorithm& algo, const CollectiveArgs& args, const std::string& shape, int p,
                  const LevelCosts& costs) {
  Case c;
  c.args = args;
  c.args.commSize = p;
  c.p = p;
  for (int r = 0; r < p; ++r) {
    Topology t;
    Status s = topologyFor(shape, p, r, &t);
    if (!s.ok()) {
      Result bad;
      bad.ok = false;
      bad.error = s.message();
      return bad;
    }
    c.plans.push_back(buildHierPlan(algo, c.args, t, costs));
  }
  return run(c);
}

namespace {

// Counts in 0..4 driven by a seed; block j of a receive side placed in reverse rank order with a
// gap of one element before each block.
std::vector<size_t> unevenCounts(int p, unsigned seed, int salt) {
  std::vector<size_t> c(static_cast<size_t>(p));
  for (int j = 0; j < p; ++j) c[static_cast<size_t>(j)] = (static_cast<unsigned>(j * 7 + salt * 3) + seed) % 5;
  return c;
}
std::vector<size_t> gappedReverseDispls(const std::vector<size_t>& counts) {
  std::vector<size_t> d(counts.size());
  size_t pos = 0;
  for (size_t j = counts.size(); j-- > 0;) {
    pos += 1;  // gap
    d[j] = pos;
    pos += counts[j];
  }
  return d;
}
std::vector<size_t> packedDispls(const std::vector<size_t>& counts) {
  std::vector<size_t> d(counts.size());
  size_t pos = 0;
  for (size_t j = 0; j < counts.size(); ++j) {
    d[j] = pos;
    pos += counts[j];
  }
  return d;
}

}  // namespace

std::vector<CollectiveArgs> irregularArgs(const CollectiveArgs& base, int p, unsigned seed) {
  std::vector<CollectiveArgs> out(static_cast<size_t>(p), base);
  const std::vector<size_t> counts = unevenCounts(p, seed, 0);
  // In place needs the rank's own block where the API puts it: keep those layouts packed.
  const std::vector<size_t> displs = base.inPlace ? packedDispls(counts) : gappedReverseDispls(counts);
  for (int r = 0; r < p; ++r) {
    CollectiveArgs& a = out[static_cast<size_t>(r)];
    switch (base.coll) {
      case Collective::kAllGatherv:
        a.counts = counts;
        a.displs = displs;
        a.count = counts[static_cast<size_t>(r)];
        break;
      case Collective::kGatherv:
        a.count = counts[static_cast<size_t>(r)];
        if (r == base.root) {
          a.counts = counts;
          a.displs = displs;
        }
        break;
      case Collective::kScatterv:
        a.count = counts[static_cast<size_t>(r)];
        if (r == base.root) {
          a.sendCounts = counts;
          a.sendDispls = displs;
        }
        break;
      case Collective::kReduceScatterv:
        a.counts = counts;
        a.count = counts[static_cast<size_t>(r)];
        break;
      case Collective::kAllToAllv: {
        // rank r sends f(r, j) to j and receives f(j, r); symmetric in place
        auto f = [&](int from, int to) {
          const int x = base.inPlace ? std::min(from, to) * 3 + std::max(from, to) : from * 3 + to * 5;
          return static_cast<size_t>((static_cast<unsigned>(x) + seed) % 4);
        };
        a.sendCounts.resize(static_cast<size_t>(p));
        a.counts.resize(static_cast<size_t>(p));
        for (int j = 0; j < p; ++j) {
          a.sendCounts[static_cast<size_t>(j)] = f(r, j);
          a.counts[static_cast<size_t>(j)] = f(j, r);
        }
        a.displs = base.inPlace ? packedDispls(a.counts) : gappedReverseDispls(a.counts);
        a.sendDispls = base.inPlace ? a.displs : packedDispls(a.sendCounts);
        a.count = 0;
        break;
      }
      default: break;
    }
  }
  return out;
}

}  // namespace strata::verify
