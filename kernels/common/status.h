// Status: a result code plus a message that says what failed and where.
//
// Every internal function that can fail returns a Status; the public API returns its code and
// stores its message for strataGetLastError. Codes are never remapped on the way up: the first
// error keeps its code and gains context.
#pragma once

#include <strata/strata.h>

#include <cstdarg>
#include <string>
#include <utility>

namespace strata {

// printf-style formatting into a std::string.
std::string strformat(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string vstrformat(const char* fmt, va_list args);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(strataResult_t code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == strataSuccess; }
  strataResult_t code() const { return code_; }
  const std::string& message() const { return message_; }

  // Keep the first error: an error already held is not overwritten by a later one.
  void update(const Status& other) {
    if (ok() && !other.ok()) *this = other;
  }
  // Prefix the message with context ("allreduce #3: ..."), keeping the code.
  Status& withContext(const std::string& context) {
    if (!ok()) message_ = context + ": " + message_;
    return *this;
  }

 private:
  strataResult_t code_ = strataSuccess;
  std::string message_;
};

Status makeStatus(strataResult_t code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// The error string of a result code, as strataGetErrorString returns it.
const char* resultString(strataResult_t code);
// The enum's name: "strataInvalidArgument".
const char* resultName(strataResult_t code);

}  // namespace strata

#define STRATA_STRINGIFY_IMPL(x) #x
#define STRATA_STRINGIFY(x) STRATA_STRINGIFY_IMPL(x)
#define STRATA_WHERE __FILE__ ":" STRATA_STRINGIFY(__LINE__)

// Return early with the Status of `expr` if it is an error.
#define STRATA_CHECK(expr)                        \
  do {                                            \
    ::strata::Status strata_check_s_ = (expr);    \
    if (!strata_check_s_.ok()) return strata_check_s_; \
  } while (0)

// Store the first error of `expr` into `status` and jump to `label` (cleanup paths).
#define STRATA_CHECK_GOTO(expr, status, label)    \
  do {                                            \
    ::strata::Status strata_check_s_ = (expr);    \
    if (!strata_check_s_.ok()) {                  \
      (status).update(strata_check_s_);           \
      goto label;                                 \
    }                                             \
  } while (0)

// Return an error Status when `cond` does not hold.
#define STRATA_REQUIRE(cond, code, ...)                    \
  do {                                                     \
    if (!(cond)) return ::strata::makeStatus((code), __VA_ARGS__); \
  } while (0)
