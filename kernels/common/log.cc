#include "kernels/common/log.h"

#include <strings.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "kernels/common/status.h"

namespace strata {
namespace {

std::atomic<int> gRank{-1};

// Set from STRATA_DEBUG when a communicator is created (src/core/config.cc); silent until then.
std::atomic<int>& levelStorage() {
  static std::atomic<int> level{static_cast<int>(LogLevel::kNone)};
  return level;
}

}  // namespace

LogLevel logLevel() { return static_cast<LogLevel>(levelStorage().load(std::memory_order_relaxed)); }
void setLogLevel(LogLevel level) { levelStorage().store(static_cast<int>(level)); }
void setLogRank(int rank) { gRank.store(rank); }

bool parseLogLevel(const char* text, LogLevel* out) {
  if (text == nullptr) return false;
  if (strcasecmp(text, "NONE") == 0 || strcasecmp(text, "VERSION") == 0) return *out = LogLevel::kNone, true;
  if (strcasecmp(text, "WARN") == 0) return *out = LogLevel::kWarn, true;
  if (strcasecmp(text, "INFO") == 0) return *out = LogLevel::kInfo, true;
  if (strcasecmp(text, "TRACE") == 0) return *out = LogLevel::kTrace, true;
  return false;
}

void logMessage(LogLevel level, const char* fmt, ...) {
  static const char* kNames[] = {"NONE", "WARN", "INFO", "TRACE"};
  char host[64] = "?";
  gethostname(host, sizeof(host) - 1);
  va_list args;
  va_start(args, fmt);
  const std::string text = vstrformat(fmt, args);
  va_end(args);
  std::fprintf(stderr, "%s:%d:%d [strata] %s %s\n", host, static_cast<int>(getpid()), gRank.load(),
               kNames[static_cast<int>(level)], text.c_str());
}

}  // namespace strata
