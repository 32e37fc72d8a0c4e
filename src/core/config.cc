#include "src/core/config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace strata {
namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    parts.push_back(trim(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start)));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return parts;
}

}  // namespace

std::string Config::forcedFor(Collective c) const {
  auto it = forcedAlgorithm.find(collectiveName(c));
  if (it != forcedAlgorithm.end()) return it->second;
  it = forcedAlgorithm.find("");
  return it != forcedAlgorithm.end() ? it->second : std::string();
}

Status parseNodeShape(const char* text, std::vector<int>* out) {
  out->clear();
  if (text == nullptr || *text == '\0') return Status::Ok();
  for (const std::string& part : split(text, ',')) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || errno != 0 || v < 0 || v > 1 << 24) {
      return makeStatus(strataInvalidArgument, "ranks per node '%s': expected a count or a list like 3,5", text);
    }
    out->push_back(static_cast<int>(v));
  }
  if (out->size() == 1 && (*out)[0] == 0) out->clear();  // 0: discover
  for (int v : *out) {
    if (v == 0) return makeStatus(strataInvalidArgument, "ranks per node '%s': a node of 0 ranks", text);
  }
  return Status::Ok();
}

Status parseAlgorithmSpec(const char* text, std::map<std::string, std::string>* out) {
  out->clear();
  if (text == nullptr || *text == '\0') return Status::Ok();
  for (const std::string& part : split(text, ',')) {
    if (part.empty()) continue;
    const size_t sep = part.find_first_of("=:");
    if (sep == std::string::npos) {
      (*out)[""] = part;
      continue;
    }
    const std::string coll = trim(part.substr(0, sep));
    const std::string algo = trim(part.substr(sep + 1));
    Collective c;
    if (!parseCollective(coll.c_str(), &c)) {
      return makeStatus(strataInvalidArgument, "algorithm choice '%s': unknown collective '%s'", text, coll.c_str());
    }
    if (algo.empty()) return makeStatus(strataInvalidArgument, "algorithm choice '%s': no algorithm for '%s'", text, coll.c_str());
    (*out)[collectiveName(c)] = algo;
  }
  return Status::Ok();
}

Status resolveConfig(const strataConfig_t* user, Config* out) {
  Config c;
  // Node shape: the config field, else STRATA_RANKS_PER_NODE.
  if (user != nullptr && user->ranksPerNode < 0) {
    return makeStatus(strataInvalidArgument, "config.ranksPerNode = %d (expected 0 to discover, or k > 0)",
                      user->ranksPerNode);
  }
  if (user != nullptr && user->ranksPerNode > 0) {
    c.nodeShape = {user->ranksPerNode};
  } else {
    STRATA_CHECK(parseNodeShape(std::getenv("STRATA_RANKS_PER_NODE"), &c.nodeShape));
  }
  // CUDA-aware MPI: the config field when not -1, else STRATA_CUDA_AWARE_MPI, else ask MPI.
  c.cudaAwareMpi = user != nullptr ? user->cudaAwareMpi : -1;
  if (c.cudaAwareMpi < -1 || c.cudaAwareMpi > 1) {
    return makeStatus(strataInvalidArgument, "config.cudaAwareMpi = %d (expected -1, 0 or 1)", c.cudaAwareMpi);
  }
  if (c.cudaAwareMpi == -1) {
    if (const char* env = std::getenv("STRATA_CUDA_AWARE_MPI"); env != nullptr && *env != '\0') {
      c.cudaAwareMpi = std::atoi(env) > 0 ? 1 : (std::strcmp(env, "-1") == 0 ? -1 : 0);
    }
  }
  // Timeout.
  if (user != nullptr && !(user->timeoutSeconds >= 0)) {
    return makeStatus(strataInvalidArgument, "config.timeoutSeconds = %g (expected >= 0)", user->timeoutSeconds);
  }
  if (user != nullptr && user->timeoutSeconds > 0) {
    c.timeoutSeconds = user->timeoutSeconds;
  } else if (const char* env = std::getenv("STRATA_TIMEOUT"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const double t = std::strtod(env, &end);
    if (*end != '\0' || !(t > 0)) return makeStatus(strataInvalidArgument, "STRATA_TIMEOUT='%s' (expected seconds > 0)", env);
    c.timeoutSeconds = t;
  }
  // Algorithm.
  c.mpiNative = user != nullptr && user->mpiNative == 1;
  if (!c.mpiNative) {
    const char* env = std::getenv("STRATA_MPI_NATIVE");
    c.mpiNative = env != nullptr && std::atoi(env) > 0;
  }
  if (user != nullptr && user->algorithm != nullptr) {
    STRATA_CHECK(parseAlgorithmSpec(user->algorithm, &c.forcedAlgorithm));
  } else {
    STRATA_CHECK(parseAlgorithmSpec(std::getenv("STRATA_ALGO"), &c.forcedAlgorithm));
  }
  if (const char* env = std::getenv("STRATA_MAX_MESSAGE_BYTES"); env != nullptr && *env != '\0') {
    const long long v = std::atoll(env);
    if (v <= 0) return makeStatus(strataInvalidArgument, "STRATA_MAX_MESSAGE_BYTES='%s' (expected > 0)", env);
    c.maxMessageBytes = static_cast<size_t>(v);
  }
  if (const char* env = std::getenv("STRATA_TOPO_FILE"); env != nullptr) c.topoFile = env;
  *out = std::move(c);
  return Status::Ok();
}

}  // namespace strata
