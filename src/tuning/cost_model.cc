#include "src/tuning/cost_model.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace strata {

CostParams defaultCostParams() {
  // Defaults: `strata-perf --calibrate` with 2 ranks on the 2-core EPYC VM the project is developed
  // on (Open MPI 4.1, shared memory), fitted to the current formulas (2026-11-22): a message costs
  // about 1.4 us over MPI and 1.1 us through the node team; data in cache moves at 5.1 GB/s over
  // MPI and 10.3 GB/s through the node's segment, data streaming from DRAM at 2.3 and 5.3 GB/s.
  // The node's gamma fitted to zero: its reductions hide under the copies the betas already
  // price. Calibrate on the target machine.
  CostParams p;
  p.flat = LinkCost{1.40e-6, 1.95e-10, 6.2e-11};
  p.flatMem = MemoryCosts{4.43e-10, 1.15e-10};
  p.node = LinkCost{1.11e-6, 9.73e-11, 0.0};
  p.nodeMem = MemoryCosts{1.87e-10, 0.0};
  p.lane = p.flat;
  p.laneMem = p.flatMem;
  p.cacheBytes = lastLevelCacheBytes();
  return p;
}

LevelCosts deviceCostParams(const LevelCosts& host) {
  LevelCosts d = host;
  d.cacheBytes = 0;  // the host's cache does not hold device data
  d.flatMem = d.nodeMem = d.laneMem = MemoryCosts{};
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

double lastLevelCacheBytes() {
  // sysfs first: in a VM the C library may report the whole host's cache (256 MiB where the CPU
  // sees 32 on the development VM).
  double best = 0;
  int bestLevel = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream levelFile(dir + "level"), sizeFile(dir + "size");
    int level = 0;
    std::string size;
    if (!(levelFile >> level) || !(sizeFile >> size) || size.empty()) continue;
    double bytes = std::atof(size.c_str());
    if (size.back() == 'K') bytes *= 1024;
    else if (size.back() == 'M') bytes *= 1024 * 1024;
    if (level > bestLevel) best = bytes, bestLevel = level;
  }
  if (best > 0) return best;
#ifdef _SC_LEVEL3_CACHE_SIZE
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long v = sysconf(name);
    if (v > 0) return static_cast<double>(v);
  }
#endif
  return 0;
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

Status loadCostParams(const std::string& path, CostParams* out) {
  std::ifstream in(path);
  STRATA_REQUIRE(in.good(), strataInvalidArgument, "cannot read the cost file '%s'", path.c_str());
  CostParams p = defaultCostParams();
  std::string line;
  int lineNo = 0;
  std::set<std::string> seen;
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
    if (key == "cache_bytes") {
      p.cacheBytes = value;
      continue;
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
    MemoryCosts* mem = nullptr;
    if (key.rfind("flat.", 0) == 0) level = &p.flat, mem = &p.flatMem;
    else if (key.rfind("node.", 0) == 0) level = &p.node, mem = &p.nodeMem;
    else if (key.rfind("lane.", 0) == 0) level = &p.lane, mem = &p.laneMem;
    const std::string field = level ? key.substr(5) : key;
    seen.insert(key);
    if (level && field == "alpha") level->alpha = value;
    else if (level && field == "beta") level->beta = value;
    else if (level && field == "gamma") level->gamma = value;
    else if (level && field == "round_bytes" && value >= 1) level->roundBytes = value;
    else if (level && field == "beta_mem") mem->betaMem = value;
    else if (level && field == "gamma_mem") mem->gammaMem = value;
    else return makeStatus(strataInvalidArgument, "%s:%d: unknown key '%s'", path.c_str(), lineNo, key.c_str());
  }
  // A file that sets a level's beta (gamma) without its streaming value means the plain model there.
  for (auto [name, mem] : {std::pair<const char*, MemoryCosts*>{"flat", &p.flatMem}, {"node", &p.nodeMem}, {"lane", &p.laneMem}}) {
    const std::string level = name;
    if (seen.count(level + ".beta") && !seen.count(level + ".beta_mem")) mem->betaMem = 0;
    if (seen.count(level + ".gamma") && !seen.count(level + ".gamma_mem")) mem->gammaMem = 0;
  }
  for (auto& [coll, v] : p.native.points) std::sort(v.begin(), v.end());
  p.source = path;
  *out = p;
  return Status::Ok();
}

Status saveCostParams(const std::string& path, const CostParams& params) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  STRATA_REQUIRE(f != nullptr, strataSystemError, "cannot write the cost file '%s'", path.c_str());
  std::fprintf(f, "# Strata cost parameters: alpha (s per message), beta (s per byte), gamma (s per byte reduced);\n"
                 "# beta_mem and gamma_mem for working sets past cache_bytes (the host's send and receive buffers)\n");
  std::fprintf(f, "cache_bytes %.0f\n", params.cacheBytes);
  const struct {
    const char* name;
    const LinkCost* c;
    const MemoryCosts* m;
  } levels[] = {{"flat", &params.flat, &params.flatMem}, {"node", &params.node, &params.nodeMem}, {"lane", &params.lane, &params.laneMem}};
  for (const auto& l : levels) {
    std::fprintf(f, "%s.alpha %.6e\n%s.beta %.6e\n%s.gamma %.6e\n%s.beta_mem %.6e\n%s.gamma_mem %.6e\n", l.name, l.c->alpha,
                 l.name, l.c->beta, l.name, l.c->gamma, l.name, l.m->betaMem, l.name, l.m->gammaMem);
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
