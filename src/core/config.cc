#include "src/core/config.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "kernels/common/log.h"

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

// The variable's value, or nullptr when it is unset or empty.
const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// A whole number of bytes in [lo, hi] with an optional K, M or G suffix (binary units): 4096, 256K, 2M.
Status envBytes(const char* name, size_t lo, size_t hi, size_t* out) {
  const char* v = env(name);
  if (v == nullptr) return Status::Ok();
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v, &end, 10);
  unsigned shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10, ++end;
  else if (*end == 'M' || *end == 'm') shift = 20, ++end;
  else if (*end == 'G' || *end == 'g') shift = 30, ++end;
  // Digits first (strtoull would skip blanks and take "-1" as 2^64 - 1); at most `hi`, so the
  // callers' round-ups cannot wrap.
  if (!std::isdigit(static_cast<unsigned char>(*v)) || *end != '\0' || errno != 0 || n > (hi >> shift) ||
      (n << shift) < lo) {
    return makeStatus(strataInvalidArgument, "%s='%s': expected a number of bytes from %zu to %zu (suffix K, M or G allowed)",
                      name, v, lo, hi);
  }
  *out = static_cast<size_t>(n << shift);
  return Status::Ok();
}

// A whole number in [lo, hi].
Status envInt(const char* name, long lo, long hi, long* out) {
  const char* v = env(name);
  if (v == nullptr) return Status::Ok();
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || errno != 0 || n < lo || n > hi) {
    return makeStatus(strataInvalidArgument, "%s='%s': expected a whole number from %ld to %ld", name, v, lo, hi);
  }
  *out = n;
  return Status::Ok();
}

Status envFlag(const char* name, bool* out) {
  long v = *out ? 1 : 0;
  STRATA_CHECK(envInt(name, 0, 1, &v));
  *out = v == 1;
  return Status::Ok();
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
    STRATA_CHECK(parseNodeShape(env("STRATA_RANKS_PER_NODE"), &c.nodeShape));
  }
  // CUDA-aware MPI: the config field when not -1, else STRATA_CUDA_AWARE_MPI, else ask MPI.
  c.cudaAwareMpi = user != nullptr ? user->cudaAwareMpi : -1;
  if (c.cudaAwareMpi < -1 || c.cudaAwareMpi > 1) {
    return makeStatus(strataInvalidArgument, "config.cudaAwareMpi = %d (expected -1, 0 or 1)", c.cudaAwareMpi);
  }
  if (c.cudaAwareMpi == -1) {
    long v = -1;
    STRATA_CHECK(envInt("STRATA_CUDA_AWARE_MPI", -1, 1, &v));
    c.cudaAwareMpi = static_cast<int>(v);
  }
  // Timeout.
  if (user != nullptr && !(user->timeoutSeconds >= 0 && user->timeoutSeconds <= kMaxTimeoutSeconds)) {
    return makeStatus(strataInvalidArgument, "config.timeoutSeconds = %g (expected 0 for the default, or up to %g)",
                      user->timeoutSeconds, kMaxTimeoutSeconds);
  }
  if (user != nullptr && user->timeoutSeconds > 0) {
    c.timeoutSeconds = user->timeoutSeconds;
  } else if (const char* v = env("STRATA_TIMEOUT"); v != nullptr) {
    char* end = nullptr;
    const double t = std::strtod(v, &end);
    if (*end != '\0' || !(t > 0) || !(t <= kMaxTimeoutSeconds)) {
      return makeStatus(strataInvalidArgument, "STRATA_TIMEOUT='%s': expected seconds from 0 to %g", v, kMaxTimeoutSeconds);
    }
    c.timeoutSeconds = t;
  }
  // Algorithm.
  if (user != nullptr && (user->mpiNative < 0 || user->mpiNative > 1)) {
    return makeStatus(strataInvalidArgument, "config.mpiNative = %d (expected 0 or 1)", user->mpiNative);
  }
  c.mpiNative = user != nullptr && user->mpiNative == 1;
  if (!c.mpiNative) STRATA_CHECK(envFlag("STRATA_MPI_NATIVE", &c.mpiNative));
  if (user != nullptr && user->algorithm != nullptr) {
    STRATA_CHECK(parseAlgorithmSpec(user->algorithm, &c.forcedAlgorithm));
  } else {
    STRATA_CHECK(parseAlgorithmSpec(env("STRATA_ALGO"), &c.forcedAlgorithm));
  }
  // MPI counts are ints: a message longer than INT_MAX bytes travels in pieces of at most that.
  STRATA_CHECK(envBytes("STRATA_MAX_MESSAGE_BYTES", 1, static_cast<size_t>(INT_MAX), &c.maxMessageBytes));
  if (const char* v = env("STRATA_TOPO_FILE"); v != nullptr) c.topoFile = v;
  // Waits.
  if (const char* v = env("STRATA_WAIT_SPIN_US"); v != nullptr) {
    long us = 0;
    STRATA_CHECK(envInt("STRATA_WAIT_SPIN_US", 0, 60 * 1000 * 1000, &us));
    c.waitSpinSeconds = static_cast<double>(us) * 1e-6;
  }
  // The device path.
  STRATA_CHECK(envBytes("STRATA_STAGE_CHUNK", 4096, size_t{1} << 30, &c.stageChunkBytes));
  c.stageChunkBytes = (c.stageChunkBytes + 4095) & ~size_t{4095};
  long slots = c.stageSlots;
  STRATA_CHECK(envInt("STRATA_STAGE_SLOTS", 1, 1024, &slots));
  c.stageSlots = static_cast<int>(slots);
  STRATA_CHECK(envBytes("STRATA_DEVICE_SLOT", 4096, size_t{1} << 36, &c.deviceSlotBytes));
  c.deviceSlotBytes = (c.deviceSlotBytes + 255) & ~size_t{255};
  STRATA_CHECK(envBytes("STRATA_PEER_BUFFER", 0, size_t{1} << 34, &c.peerHalfBytes));
  if (c.peerHalfBytes != 0 && c.peerHalfBytes < 4096) {
    return makeStatus(strataInvalidArgument, "STRATA_PEER_BUFFER=%zu: 0 (off) or at least 4096 bytes", c.peerHalfBytes);
  }
  if (const char* v = env("STRATA_DEVICE_PARAMS"); v != nullptr) c.deviceParamsFile = v;
  if (env("STRATA_DEVICE_SYNC") != nullptr) {
    bool sync = false;
    STRATA_CHECK(envFlag("STRATA_DEVICE_SYNC", &sync));
    c.deviceSync = sync ? 1 : 0;
  }
  if (const char* v = env("STRATA_STREAM_GATE"); v != nullptr) {
    const std::string g = v;
    if (g == "value") c.streamGate = StreamGateMode::kWaitValue;
    else if (g == "kernel") c.streamGate = StreamGateMode::kKernel;
    else return makeStatus(strataInvalidArgument, "STRATA_STREAM_GATE='%s': expected value or kernel", v);
  }
  // A variable this version no longer reads is an error, not silently ignored.
  if (const char* v = env("STRATA_NODE_SPIN"); v != nullptr) {
    return makeStatus(strataInvalidArgument, "STRATA_NODE_SPIN='%s': replaced by STRATA_WAIT_SPIN_US (microseconds every "
                      "wait spins before it yields the core)", v);
  }
  // Logging is the process's: the last communicator created sets it.
  if (const char* v = env("STRATA_DEBUG"); v != nullptr) {
    LogLevel level = LogLevel::kNone;
    if (!parseLogLevel(v, &level)) {
      return makeStatus(strataInvalidArgument, "STRATA_DEBUG='%s': expected NONE, WARN, INFO or TRACE", v);
    }
    setLogLevel(level);
  }
  *out = std::move(c);
  return Status::Ok();
}

}  // namespace strata
