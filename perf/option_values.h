// Option values the perf tools share: sizes in bytes with K, M or G suffixes (powers of 1024) and
// non-negative numbers. Each returns false for text that is not one (the tool names the option).
#pragma once

#include <cstddef>

namespace strata::perf {

bool parseByteSize(const char* text, size_t* out);
bool parseNonNegative(const char* text, double* out);

}  // namespace strata::perf
