// The tests of a host out of memory: the process's global operator new replaced (failing_new.cc),
// so that while armed, C++ allocations throw std::bad_alloc as they do where the host's memory is
// exhausted. Every C++ allocation of the process goes through it (the test's, Strata's, the MPI
// face's); MPI's own C allocations do not.
#pragma once

#include <cstddef>

namespace strata::test {

// From now on, every allocation of at least `minBytes` bytes fails (0: every allocation; a large
// value: only the large ones, as where one buffer does not fit). Process-wide, every thread.
void failAllocationsFrom(size_t minBytes);
// Allocations succeed again.
void allowAllocations();
// How many allocations have failed since the process started.
long failedAllocations();

}  // namespace strata::test
