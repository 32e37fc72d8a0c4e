#include "kernels/common/status.h"

#include <cstdio>
#include <vector>

namespace strata {

std::string vstrformat(const char* fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  char small[256];
  int n = std::vsnprintf(small, sizeof(small), fmt, copy);
  va_end(copy);
  if (n < 0) return std::string(fmt);
  if (static_cast<size_t>(n) < sizeof(small)) return std::string(small, static_cast<size_t>(n));
  std::vector<char> big(static_cast<size_t>(n) + 1);
  std::vsnprintf(big.data(), big.size(), fmt, args);
  return std::string(big.data(), static_cast<size_t>(n));
}

std::string strformat(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string s = vstrformat(fmt, args);
  va_end(args);
  return s;
}

Status makeStatus(strataResult_t code, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string s = vstrformat(fmt, args);
  va_end(args);
  return Status(code, std::move(s));
}

const char* resultString(strataResult_t code) {
  switch (code) {
    case strataSuccess: return "no error";
    case strataUnhandledCudaError: return "unhandled cuda error (run with STRATA_DEBUG=INFO for details)";
    case strataSystemError: return "unhandled system error (run with STRATA_DEBUG=INFO for details)";
    case strataInternalError: return "internal error - please report this issue to the Strata developers";
    case strataInvalidArgument: return "invalid argument (run with STRATA_DEBUG=WARN for details)";
    case strataInvalidUsage: return "invalid usage (run with STRATA_DEBUG=WARN for details)";
    case strataRemoteError: return "remote process exited or there was a network error";
    case strataInProgress: return "Strata operation in progress";
    case strataTimeout: return "a wait timed out (see strataGetLastError for what it waited for)";
  }
  return "unknown result code";
}

const char* resultName(strataResult_t code) {
  switch (code) {
    case strataSuccess: return "strataSuccess";
    case strataUnhandledCudaError: return "strataUnhandledCudaError";
    case strataSystemError: return "strataSystemError";
    case strataInternalError: return "strataInternalError";
    case strataInvalidArgument: return "strataInvalidArgument";
    case strataInvalidUsage: return "strataInvalidUsage";
    case strataRemoteError: return "strataRemoteError";
    case strataInProgress: return "strataInProgress";
    case strataTimeout: return "strataTimeout";
  }
  return "strataUnknownResult";
}

}  // namespace strata
