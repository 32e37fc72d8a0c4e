#include "kernels/common/env.h"

#include <cstdlib>

namespace strata {

size_t envBytes(const char* name) {
  const char* e = std::getenv(name);
  if (e == nullptr || *e == '\0') return 0;
  char* end = nullptr;
  double v = std::strtod(e, &end);
  if (end != nullptr && (*end == 'K' || *end == 'k')) v *= 1024;
  if (end != nullptr && (*end == 'M' || *end == 'm')) v *= 1024 * 1024;
  return v > 0 ? static_cast<size_t>(v) : 0;
}

}  // namespace strata
