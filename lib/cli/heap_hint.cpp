#include "cli/heap_hint.hpp"

#include <cstdint>
#include <cstdlib>

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace sia::cli {

void prefer_huge_page_heap() {
#if defined(__linux__) && defined(__GLIBC__)
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  // Keep every allocation below 32 MiB on the heap (so it lies in the advised range),
  // never give memory back, and grow the heap 64 MiB past any request.
  if (!mallopt(M_MMAP_THRESHOLD, 32 << 20) || !mallopt(M_TRIM_THRESHOLD, 256 << 20) ||
      !mallopt(M_TOP_PAD, 64 << 20)) {
    return;
  }
  // One allocation larger than what the heap has free makes it grow now, by the pad.
  void* probe = std::malloc(std::size_t{8} << 20);
  if (!probe) return;
  auto lo = (reinterpret_cast<std::uintptr_t>(probe) + kHuge - 1) & ~(kHuge - 1);
  auto hi = reinterpret_cast<std::uintptr_t>(::sbrk(0)) & ~(kHuge - 1);
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
  std::free(probe);
#endif
}

}  // namespace sia::cli
