// Option values the perf tools share: sizes in bytes with K, M or G suffixes (powers of 1024),
// non-negative numbers and comma-separated lists. The parsers return false for text that is not
// one (the tool names the option).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace strata::perf {

bool parseByteSize(const char* text, size_t* out);
bool parseNonNegative(const char* text, double* out);
// "a,b,c" -> {"a", "b", "c"}; empty items are kept ("a,,b" has three).
std::vector<std::string> splitList(const std::string& s);

}  // namespace strata::perf
