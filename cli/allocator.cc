#include "allocator.h"

#ifdef MEMPLAN_MIMALLOC
#include <mimalloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#endif

// Why: memplan's time on a large model is much of it fresh memory: every new page is a fault and a page cleared by
// the kernel. mimalloc keeps what is freed (nothing handed back and faulted in again) and commits a segment whole.
// 2 MiB pages (transparent huge pages) take one fault where 4 KiB pages take 512, but on virtual machines a fresh
// 2 MiB page is often memory the host has not backed yet, and clearing it then costs milliseconds: on the CI VM,
// `plan` of a 1M-node model spent 9-24 s in the kernel with them and 2-3 s without (wall 26 s -> 13 s), and at 100k
// nodes they made the median run slower, only the fastest faster. So they are opt-in: MIMALLOC_LARGE_OS_PAGES=1 asks
// for them, and then the segment made before main() ran and each huge object's own segment (whose size is no
// multiple of 2 MiB, so mimalloc does not advise it) are advised too. Figures: README, "Scale".

#ifdef MEMPLAN_MIMALLOC
namespace {

constexpr std::uintptr_t kLargePage = 2u << 20;

// Set once by configure_allocator(), before any thread starts.
bool large_pages = false;

// Advises the 2 MiB pages that lie wholly inside [start, end).
void advise_large_pages(std::uintptr_t start, std::uintptr_t end) {
  start = (start + kLargePage - 1) & ~(kLargePage - 1);
  end &= ~(kLargePage - 1);
  if (end > start) ::madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE);
}

// The mapping that holds `p` (from /proc/self/maps), advised whole.
void advise_mapping_of(const void* p) {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (!maps) return;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  unsigned long long start = 0, end = 0;
  char line[512];
  while (std::fgets(line, sizeof line, maps))
    if (std::sscanf(line, "%llx-%llx", &start, &end) == 2 && start <= at && at < end) {
      advise_large_pages(static_cast<std::uintptr_t>(start), static_cast<std::uintptr_t>(end));
      break;
    }
  std::fclose(maps);
}

// Objects this large get a segment of their own from mimalloc.
constexpr std::size_t kAdvisedObject = 8u << 20;

void* advised(void* p, std::size_t n) {
  if (large_pages && p && n >= kAdvisedObject)
    advise_large_pages(reinterpret_cast<std::uintptr_t>(p), reinterpret_cast<std::uintptr_t>(p) + n);
  return p;
}

}  // namespace

// Replacing these in the executable replaces them for every library of the process (libonnx's, protobuf's):
// the matching operator delete stays mimalloc's, which frees what mi_new allocated.
void* operator new(std::size_t n) {
  return advised(mi_new(n), n);
}
void* operator new[](std::size_t n) {
  return advised(mi_new(n), n);
}
// simdjson allocates its buffers (for a 1M-value plan, a structural index of hundreds of MB) with these.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return advised(mi_new_nothrow(n), n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return advised(mi_new_nothrow(n), n);
}
#endif

namespace memplan::cli {

std::string configure_allocator() {
#ifdef MEMPLAN_MIMALLOC
  // Each setting only where the environment leaves it alone (MIMALLOC_... variables still override).
  // mimalloc reads MIMALLOC_LARGE_OS_PAGES itself (off unless set).
  large_pages = mi_option_is_enabled(mi_option_large_os_pages);
  if (large_pages) {
    void* probe = mi_malloc(16);  // in the segment made before main()
    advise_mapping_of(probe);
    mi_free(probe);
  }
  // No segment of a thread is committed piecemeal (4 KiB at a time, so never in large pages), and memory freed is
  // kept rather than handed back to be faulted in again: a run is short, and its peak is what it keeps.
  if (!std::getenv("MIMALLOC_EAGER_COMMIT_DELAY")) mi_option_set(mi_option_eager_commit_delay, 0);
  if (!std::getenv("MIMALLOC_ALLOW_DECOMMIT")) mi_option_disable(mi_option_allow_decommit);
  const int v = mi_version();  // e.g. 209 for 2.0.9
  return "mimalloc " + std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." + std::to_string(v % 10);
#else
  return "glibc malloc";
#endif
}

}  // namespace memplan::cli
