// Logging at STRATA_DEBUG levels (as NCCL_DEBUG): NONE, WARN, INFO, TRACE. Lines carry the host,
// the process and the rank, so interleaved output from many ranks can be told apart.
#pragma once

#include <string>

namespace strata {

enum class LogLevel : int { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

LogLevel logLevel();
void setLogLevel(LogLevel level);
// The rank shown in log lines of this process (set when a communicator is created).
void setLogRank(int rank);
bool parseLogLevel(const char* text, LogLevel* out);
void logMessage(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace strata

#define STRATA_LOG(level, ...)                                                           \
  do {                                                                                   \
    if (static_cast<int>(::strata::logLevel()) >= static_cast<int>(::strata::LogLevel::level)) \
      ::strata::logMessage(::strata::LogLevel::level, __VA_ARGS__);                      \
  } while (0)
#define STRATA_WARN(...) STRATA_LOG(kWarn, __VA_ARGS__)
#define STRATA_INFO(...) STRATA_LOG(kInfo, __VA_ARGS__)
#define STRATA_TRACE(...) STRATA_LOG(kTrace, __VA_ARGS__)
