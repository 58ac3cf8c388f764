// Transparent huge pages for the fresh buffers pfft's CPU kernels write first.
//
// XLA:CPU maps every large buffer (>= 32 MiB with glibc's allocator) anew on each
// call; faulting it in 4 KiB at a time costs about as much as the FFT pass that
// first writes it. madvise(MADV_HUGEPAGE) on the whole 2 MiB pages inside the
// buffer lets Linux fault them in 2 MiB at a time (where THP is "madvise" or
// "always"). It is only advice: with THP off, or on an old kernel, nothing changes.
// PFFT_NO_HUGEPAGE_ADVICE=1 turns it off (to measure what it gains).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace pfft {

inline void AdviseHugePages(void *ptr, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  static const bool off = std::getenv("PFFT_NO_HUGEPAGE_ADVICE") != nullptr;
  if (off || bytes < 2 * kHuge) return;
  uintptr_t lo = (reinterpret_cast<uintptr_t>(ptr) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t hi = (reinterpret_cast<uintptr_t>(ptr) + bytes) & ~(kHuge - 1);
  if (hi > lo) madvise(reinterpret_cast<void *>(lo), hi - lo, MADV_HUGEPAGE);
}

}  // namespace pfft
