#include "src/tuning/cost_model.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace strata {

CostParams defaultCostParams() {
  // Defaults: `strata-perf --calibrate` with 2 ranks on the 2-core VM the project is developed on
  // (Open MPI 4.1, shared memory; 2026-11-25, perf/machines/dev_vm_2ranks.machine, three of its
  // points, rounded): a message costs about 0.76 us over MPI and 0.55 us through the node team;
  // data moves at 16-17 GB/s over MPI while the host's working set is 1.5 MB, at 8 GB/s at 12 MB
  // and at 3.5 GB/s at 200 MB. Calibrate on the target machine.
  CostParams p;
  p.flat = LinkCost{0.76e-6, 5.7e-11, 1.8e-11};
  p.flat.curve = BandwidthCurve::of({{1.5e6, 5.7e-11, 1.8e-11}, {12.6e6, 1.3e-10, 6.4e-11}, {201e6, 2.8e-10, 1.2e-10}});
  p.node = LinkCost{0.55e-6, 6.3e-11, 0};
  p.node.curve = BandwidthCurve::of({{1.5e6, 6.3e-11, 0}, {12.6e6, 8.6e-11, 5.6e-12}, {201e6, 1.3e-10, 2.0e-11}});
  p.lane = p.flat;
  return p;
}

LevelCosts deviceCostParams(const LevelCosts& host) {
  LevelCosts d = host;
  // The host's caches do not hold device data, nor do the host's cores run the copies and
  // reductions: the host's curves and shares do not apply.
  for (LinkCost* c : {&d.flat, &d.node, &d.lane}) c->curve = BandwidthCurve{}, c->alone = HostShare{};
  // A node round: the member's copies, a wait for them, the handshake, the reads, a wait: two
  // device synchronisations of about 5-10 us each. Bytes move at about 1 TB/s in and out of the
  // slots of one GPU (a third of HBM3's 3 TB/s: every byte is read and written, and ranks on one
  // GPU time-slice), and are reduced at 1.5 TB/s.
  d.node = LinkCost{15e-6, 1.0 / 1.0e12, 1.0 / 1.5e12};
  // A staged message adds a copy to the host and one back (the chunks overlap, so about one
  // PCIe transfer's time per byte beyond the network's) and two copy launches.
  const double pcie = 1.0 / 50e9;
  auto staged = [&](LinkCost c) { return LinkCost{c.alpha + 20e-6, c.beta + pcie, d.node.gamma}; };
  d.flat = staged(host.flat);
  d.lane = staged(host.lane);
  return d;
}

double NativeTimes::predict(Collective c, double bytes, int p) const {
  if (p != ranks) return -1;
  const auto it = points.find(c);
  if (it == points.end() || it->second.empty()) return -1;
  const std::vector<std::pair<double, double>>& v = it->second;
  if (v.size() == 1 || bytes <= v.front().first) return v.front().second;
  size_t k = 1;
  while (k + 1 < v.size() && v[k].first < bytes) ++k;
  const auto [x0, y0] = v[k - 1];
  const auto [x1, y1] = v[k];
  const double t = y0 + (y1 - y0) * (bytes - x0) / (x1 - x0);
  return std::max(t, 0.0);
}

namespace {

// "native.allreduce.65536" -> (allreduce, 65536); false when it is not such a key.
bool nativeKey(const std::string& key, Collective* c, double* bytes) {
  const size_t dot = key.rfind('.');
  if (key.rfind("native.", 0) != 0 || dot <= 7) return false;
  const std::string name = key.substr(7, dot - 7);
  char* end = nullptr;
  *bytes = std::strtod(key.c_str() + dot + 1, &end);
  if (end == nullptr || *end != '\0' || *bytes < 0) return false;
  for (int k = 0; k < kNumCollectives; ++k) {
    if (name == collectiveName(static_cast<Collective>(k))) {
      *c = static_cast<Collective>(k);
      return true;
    }
  }
  return false;
}

}  // namespace

namespace {

// "beta@1048576" -> ("beta", 1048576); ws < 0 when the field has no "@".
std::string splitAt(const std::string& field, double* ws) {
  const size_t at = field.find('@');
  *ws = -1;
  if (at == std::string::npos) return field;
  char* end = nullptr;
  const double v = std::strtod(field.c_str() + at + 1, &end);
  if (end != nullptr && *end == '\0' && v > 0) *ws = v;
  else *ws = 0;  // present but not a positive number: the caller names the key
  return field.substr(0, at);
}

}  // namespace

Status loadCostParams(const std::string& path, CostParams* out) {
  std::ifstream in(path);
  STRATA_REQUIRE(in.good(), strataInvalidArgument, "cannot read the cost file '%s'", path.c_str());
  CostParams p = defaultCostParams();
  std::string line;
  int lineNo = 0;
  std::set<std::string> levelsSet;  // levels the file names: the defaults' curves do not apply
  // Per level: working set -> its point (beta, gamma, alpha, copy, rewrites), each seen or not.
  std::map<std::string, std::map<double, BandwidthCurve::Point>> curves;
  std::map<std::string, std::map<double, int>> curveSeen;  // bit 1 beta, 2 gamma, 4 alpha, 8 copy, 16 rewrite, 32 copy_rewrite
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string key;
    double value = 0;
    if (!(fields >> key >> value) || !(value >= 0)) {
      return makeStatus(strataInvalidArgument, "%s:%d: expected 'key value', got '%s'", path.c_str(), lineNo, line.c_str());
    }
    if (key.rfind("machine.", 0) == 0) continue;  // strata-model's machine (perf/machine_model.h)
    if (key == "cache_bytes" || key.find("_mem") != std::string::npos) {
      return makeStatus(strataInvalidArgument,
                        "%s:%d: '%s' is no longer read: beta and gamma are now curves over the working set "
                        "(LEVEL.beta@BYTES, LEVEL.gamma@BYTES); calibrate again (strata-perf --calibrate)",
                        path.c_str(), lineNo, key.c_str());
    }
    if (key == "native.ranks") {
      p.native.ranks = static_cast<int>(value);
      continue;
    }
    Collective nativeColl;
    double nativeBytes = 0;
    if (nativeKey(key, &nativeColl, &nativeBytes)) {
      p.native.points[nativeColl].push_back({nativeBytes, value});
      continue;
    }
    LinkCost* level = nullptr;
    std::string name;
    if (key.rfind("flat.", 0) == 0) level = &p.flat, name = "flat";
    else if (key.rfind("node.", 0) == 0) level = &p.node, name = "node";
    else if (key.rfind("lane.", 0) == 0) level = &p.lane, name = "lane";
    double ws = -1;
    const std::string field = level ? splitAt(key.substr(5), &ws) : key;
    if (level) levelsSet.insert(name);
    if (level && ws == 0) {
      return makeStatus(strataInvalidArgument, "%s:%d: '%s': the working set after '@' must be a positive number of bytes",
                        path.c_str(), lineNo, key.c_str());
    }
    if (level && ws > 0 &&
        (field == "beta" || field == "gamma" || field == "alpha" || field == "copy" || field == "rewrite" || field == "copy_rewrite" ||
         field == "alone_beta" || field == "alone_gamma" || field == "alone_alpha")) {
      const std::string curve = field.rfind("alone_", 0) == 0 ? name + ".alone" : name;
      const bool isBeta = field == "beta" || field == "alone_beta", isAlpha = field == "alpha" || field == "alone_alpha";
      const bool isCopy = field == "copy";
      BandwidthCurve::Point& pt = curves[curve][ws];
      if (field == "rewrite" || field == "copy_rewrite") {
        (field == "rewrite" ? pt.rewrite : pt.copyRewrite) = value;
        curveSeen[curve][ws] |= field == "rewrite" ? 16 : 32;
        continue;
      }
      (isCopy ? pt.copy : isAlpha ? pt.alpha : isBeta ? pt.beta : pt.gamma) = value;
      curveSeen[curve][ws] |= isCopy ? 8 : isAlpha ? 4 : isBeta ? 1 : 2;
    } else if (level && ws < 0 && field == "alpha") level->alpha = value;
    else if (level && ws < 0 && field == "rewrite") level->rewrite = value;
    else if (level && ws < 0 && field == "copy_rewrite") level->copyRewrite = value;
    else if (level && ws < 0 && field == "beta") level->beta = value;
    else if (level && ws < 0 && field == "gamma") level->gamma = value;
    else if (level && ws < 0 && field == "round_bytes" && value >= 1) level->roundBytes = value;
    else if (level && ws < 0 && field == "alone_share" && value > 0 && value <= 1) level->alone.share = value;
    else if (level && ws < 0 && field == "alone_alpha" && value > 0) level->alone.alpha = value;
    else if (level && ws < 0 && field == "alone_cores_shared" && (value == 0 || value == 1)) level->alone.coresShared = value == 1;
    else return makeStatus(strataInvalidArgument, "%s:%d: unknown key '%s' (or a value out of its range)", path.c_str(), lineNo, key.c_str());
  }
  // A level the file names has the file's curve (none, if it gives no points), not the defaults'.
  for (auto [name, level] : {std::pair<std::string, LinkCost*>{"flat", &p.flat}, {"node", &p.node}, {"lane", &p.lane}}) {
    if (!levelsSet.count(name)) continue;
    for (auto [curveName, curve] : {std::pair<std::string, BandwidthCurve*>{name, &level->curve},
                                    {name + ".alone", &level->alone.ratios}}) {
      *curve = BandwidthCurve{};
      const std::string prefix = curveName == name ? name + "." : name + ".alone_";
      const int firstSeen = curves[curveName].empty() ? 0 : curveSeen[curveName].begin()->second;
      for (auto [ws, pt] : curves[curveName]) {
        const int seen = curveSeen[curveName][ws];
        STRATA_REQUIRE((seen & 3) == 3, strataInvalidArgument, "%s: %sbeta@%.0f and %sgamma@%.0f come in pairs",
                       path.c_str(), prefix.c_str(), ws, prefix.c_str(), ws);
        const int differ = seen ^ firstSeen;
        const char* field = (differ & 4) ? "alpha" : (differ & 8) ? "copy" : (differ & 16) ? "rewrite" : "copy_rewrite";
        STRATA_REQUIRE(seen == firstSeen, strataInvalidArgument,
                       "%s: %s%s@ is given at every point of the curve or at none (the point at %.0f differs from the "
                       "first)",
                       path.c_str(), prefix.c_str(), field, ws);
        pt.workingSet = ws;
        STRATA_REQUIRE(curve->add(pt), strataInvalidArgument, "%s: more than %zu points of %sbeta@", path.c_str(),
                       BandwidthCurve::kMaxPoints, prefix.c_str());
      }
    }
  }
  for (auto& [coll, v] : p.native.points) std::sort(v.begin(), v.end());
  p.source = path;
  *out = p;
  return Status::Ok();
}

Status saveCostParams(const std::string& path, const CostParams& params) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  STRATA_REQUIRE(f != nullptr, strataSystemError, "cannot write the cost file '%s'", path.c_str());
  std::fprintf(f,
               "# Strata cost parameters: alpha (s per message), beta (s per byte), gamma (s per byte reduced);\n"
               "# LEVEL.beta@W and LEVEL.gamma@W: beta and gamma when the host's processes' send and receive buffers\n"
               "# add up to W bytes (interpolated in log W between points; LEVEL.alpha@W, at every point or at none:\n"
               "# alpha there, where calibration could tell it from beta; LEVEL.copy@W likewise: a copy within a\n"
               "# rank, s per byte, where calibration timed an allgather's own copy beside it); LEVEL.alone_*: the\n"
               "# costs when only the share alone_share of the host's processes is busy, as fractions of the costs\n"
               "# with all of them busy (alone_beta@W, alone_gamma@W and alone_alpha@W per working set as above;\n"
               "# alone_cores_shared 1: measured where the processes outnumber the cores, 0: each had its own);\n"
               "# LEVEL.rewrite@W (or LEVEL.rewrite without a curve): seconds per byte a reduction writes where a peer\n"
               "# read it; LEVEL.copy_rewrite@W likewise for a copy or a message received (without it, rewrite's)\n");
  const struct {
    const char* name;
    const LinkCost* c;
  } levels[] = {{"flat", &params.flat}, {"node", &params.node}, {"lane", &params.lane}};
  for (const auto& l : levels) {
    std::fprintf(f, "%s.alpha %.6e\n%s.beta %.6e\n%s.gamma %.6e\n", l.name, l.c->alpha, l.name, l.c->beta, l.name,
                 l.c->gamma);
    if (l.c->roundBytes != LinkCost{}.roundBytes) std::fprintf(f, "%s.round_bytes %.0f\n", l.name, l.c->roundBytes);
    const bool rewrites = std::any_of(l.c->curve.begin(), l.c->curve.end(), [](const BandwidthCurve::Point& pt) { return pt.rewrite > 0; });
    for (const BandwidthCurve::Point& pt : l.c->curve) {
      std::fprintf(f, "%s.beta@%.0f %.6e\n%s.gamma@%.0f %.6e\n", l.name, pt.workingSet, pt.beta, l.name, pt.workingSet,
                   pt.gamma);
      if (l.c->curve.carriesAlpha()) std::fprintf(f, "%s.alpha@%.0f %.6e\n", l.name, pt.workingSet, pt.alpha);
      if (l.c->curve.carriesCopy()) std::fprintf(f, "%s.copy@%.0f %.6e\n", l.name, pt.workingSet, pt.copy);
      if (rewrites) std::fprintf(f, "%s.rewrite@%.0f %.6e\n", l.name, pt.workingSet, pt.rewrite);
      if (l.c->curve.carriesCopyRewrite()) std::fprintf(f, "%s.copy_rewrite@%.0f %.6e\n", l.name, pt.workingSet, pt.copyRewrite);
    }
    if (l.c->curve.empty() && l.c->rewrite > 0) std::fprintf(f, "%s.rewrite %.6e\n", l.name, l.c->rewrite);
    if (l.c->curve.empty() && l.c->copyRewrite >= 0) std::fprintf(f, "%s.copy_rewrite %.6e\n", l.name, l.c->copyRewrite);
    if (l.c->alone.share < 1) {
      std::fprintf(f, "%s.alone_share %.6f\n%s.alone_alpha %.6f\n%s.alone_cores_shared %d\n", l.name, l.c->alone.share,
                   l.name, l.c->alone.alpha, l.name, l.c->alone.coresShared ? 1 : 0);
      for (const BandwidthCurve::Point& pt : l.c->alone.ratios) {
        std::fprintf(f, "%s.alone_beta@%.0f %.6f\n%s.alone_gamma@%.0f %.6f\n", l.name, pt.workingSet, pt.beta, l.name,
                     pt.workingSet, pt.gamma);
        if (l.c->alone.ratios.carriesAlpha()) std::fprintf(f, "%s.alone_alpha@%.0f %.6f\n", l.name, pt.workingSet, pt.alpha);
      }
    }
  }
  if (params.native.ranks > 0) {
    std::fprintf(f, "# the MPI library's own collectives (native): seconds at each size (callBytes), on native.ranks ranks\n");
    std::fprintf(f, "native.ranks %d\n", params.native.ranks);
    for (const auto& [coll, v] : params.native.points) {
      for (const auto& [bytes, seconds] : v) std::fprintf(f, "native.%s.%.0f %.6e\n", collectiveName(coll), bytes, seconds);
    }
  }
  std::fclose(f);
  return Status::Ok();
}

}  // namespace strata
