#include "perf/option_values.h"

#include <cmath>
#include <cstdlib>

namespace strata::perf {

bool parseByteSize(const char* text, size_t* out) {
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (end == text || !(v >= 0) || !std::isfinite(v)) return false;
  if (*end == 'K' || *end == 'k') v *= 1024.0, ++end;
  else if (*end == 'M' || *end == 'm') v *= 1024.0 * 1024, ++end;
  else if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024 * 1024, ++end;
  if (*end != '\0') return false;
  *out = static_cast<size_t>(v);
  return true;
}

bool parseNonNegative(const char* text, double* out) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= 0) || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t pos = s.find(',', start);
    out.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return out;
}

}  // namespace strata::perf
