// Sizes read from the environment, in one spelling everywhere: a number of bytes with an optional
// K or M suffix (binary units), for example STRATA_STAGE_CHUNK=256K.
#pragma once

#include <cstddef>

namespace strata {

// 0 when `name` is unset, empty or not a positive number.
size_t envBytes(const char* name);

}  // namespace strata
