// The replaceable global allocation functions (C++17 [new.delete]): the plain and the aligned
// forms of new, new[], and every delete that frees what they return. The nothrow forms of the
// standard library call these, so they fail alike.
#include "tests/mpi/failing_new.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

constexpr size_t kNever = ~size_t{0};
std::atomic<size_t> gFailFrom{kNever};
std::atomic<long> gFailed{0};

void* allocate(size_t bytes, size_t alignment) {
  if (bytes >= gFailFrom.load(std::memory_order_relaxed)) {
    gFailed.fetch_add(1, std::memory_order_relaxed);
    throw std::bad_alloc();
  }
  if (bytes == 0) bytes = 1;
  void* p = nullptr;
  if (alignment <= alignof(std::max_align_t)) {
    p = std::malloc(bytes);
  } else if (posix_memalign(&p, alignment, bytes) != 0) {
    p = nullptr;
  }
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

namespace strata::test {

void failAllocationsFrom(size_t minBytes) { gFailFrom.store(minBytes); }
void allowAllocations() { gFailFrom.store(kNever); }
long failedAllocations() { return gFailed.load(); }

}  // namespace strata::test

void* operator new(size_t bytes) { return allocate(bytes, 0); }
void* operator new[](size_t bytes) { return allocate(bytes, 0); }
void* operator new(size_t bytes, std::align_val_t a) { return allocate(bytes, static_cast<size_t>(a)); }
void* operator new[](size_t bytes, std::align_val_t a) { return allocate(bytes, static_cast<size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
