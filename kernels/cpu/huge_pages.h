// Transparent huge pages for the fresh buffers pfft's CPU kernels write first.
//
// XLA:CPU maps every large buffer (>= 32 MiB with glibc's allocator) anew on each
// call; faulting it in 4 KiB at a time costs about as much as the FFT pass that
// first writes it. madvise(MADV_HUGEPAGE) on the whole 2 MiB pages inside the
// buffer lets Linux fault them in 2 MiB at a time (where THP is "madvise" or
// "always"). It is only advice: with THP off, or on an old kernel, nothing changes.
// pfft_cpu_set_hugepage_advice(0) turns it off (to measure what it gains): pfft's
// loader passes $PFFT_NO_HUGEPAGE_ADVICE (pfft/settings.py) when it loads the library.
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace pfft {

// whether AdviseHugePages advises (set by pfft_cpu_set_hugepage_advice)
inline std::atomic<bool> huge_page_advice{true};

inline void AdviseHugePages(void *ptr, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  if (!huge_page_advice.load(std::memory_order_relaxed) || bytes < 2 * kHuge) return;
  uintptr_t lo = (reinterpret_cast<uintptr_t>(ptr) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t hi = (reinterpret_cast<uintptr_t>(ptr) + bytes) & ~(kHuge - 1);
  if (hi > lo) madvise(reinterpret_cast<void *>(lo), hi - lo, MADV_HUGEPAGE);
}

}  // namespace pfft
