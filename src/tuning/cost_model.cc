#include "src/tuning/cost_model.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace strata {

CostParams defaultCostParams() {
  // Defaults for a shared-memory MPI on one host, measured on a 2-core development machine with
  // Open MPI 4.1: about 1.5 us per message, 5 GB/s per stream, 4 GB/s reduction of one input.
  // Calibrate on the target machine with `strata-perf --calibrate`.
  CostParams p;
  p.flat = LinkCost{1.5e-6, 1.0 / 5e9, 1.0 / 4e9};
  p.node = LinkCost{0.5e-6, 1.0 / 8e9, 1.0 / 4e9};
  p.lane = p.flat;
  return p;
}

Status loadCostParams(const std::string& path, CostParams* out) {
  std::ifstream in(path);
  STRATA_REQUIRE(in.good(), strataInvalidArgument, "cannot read the cost file '%s'", path.c_str());
  CostParams p = defaultCostParams();
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string key;
    double value = 0;
    if (!(fields >> key >> value) || !(value >= 0)) {
      return makeStatus(strataInvalidArgument, "%s:%d: expected 'key value', got '%s'", path.c_str(), lineNo, line.c_str());
    }
    LinkCost* level = nullptr;
    if (key.rfind("flat.", 0) == 0) level = &p.flat;
    else if (key.rfind("node.", 0) == 0) level = &p.node;
    else if (key.rfind("lane.", 0) == 0) level = &p.lane;
    const std::string field = level ? key.substr(5) : key;
    if (level && field == "alpha") level->alpha = value;
    else if (level && field == "beta") level->beta = value;
    else if (level && field == "gamma") level->gamma = value;
    else return makeStatus(strataInvalidArgument, "%s:%d: unknown key '%s'", path.c_str(), lineNo, key.c_str());
  }
  p.source = path;
  *out = p;
  return Status::Ok();
}

Status saveCostParams(const std::string& path, const CostParams& params) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  STRATA_REQUIRE(f != nullptr, strataSystemError, "cannot write the cost file '%s'", path.c_str());
  std::fprintf(f, "# Strata cost parameters: alpha (s per message), beta (s per byte), gamma (s per byte reduced)\n");
  const struct {
    const char* name;
    const LinkCost* c;
  } levels[] = {{"flat", &params.flat}, {"node", &params.node}, {"lane", &params.lane}};
  for (const auto& l : levels) {
    std::fprintf(f, "%s.alpha %.6e\n%s.beta %.6e\n%s.gamma %.6e\n", l.name, l.c->alpha, l.name, l.c->beta, l.name,
                 l.c->gamma);
  }
  std::fclose(f);
  return Status::Ok();
}

}  // namespace strata
