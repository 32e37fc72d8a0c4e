#include "intra_node/slot_copies.h"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace strata {

void copyLines(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    uint64_t v[8];
    std::memcpy(v, s + i, 64);
    std::memcpy(d + i, v, 64);
  }
  if (i < bytes) std::memcpy(d + i, s + i, bytes - i);
}

void copyIntoSlot(void* dst, const void* src, size_t bytes, bool stream) {
#if defined(__SSE2__)
  if (stream && bytes >= kStreamMinBytes && reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
    auto* d = static_cast<__m128i*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    const size_t lines = bytes / 64;
    for (size_t k = 0; k < lines; ++k) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 64 * k));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 64 * k + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 64 * k + 32));
      const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 64 * k + 48));
      _mm_stream_si128(d + 4 * k, a);
      _mm_stream_si128(d + 4 * k + 1, b);
      _mm_stream_si128(d + 4 * k + 2, c);
      _mm_stream_si128(d + 4 * k + 3, e);
    }
    if (lines * 64 < bytes) std::memcpy(reinterpret_cast<char*>(dst) + lines * 64, s + lines * 64, bytes - lines * 64);
    _mm_sfence();  // streaming stores are weakly ordered: drain them before the round is published
    return;
  }
#else
  (void)stream;
#endif
  copyLines(dst, src, bytes);
}


}  // namespace strata
