#include "allocator.h"

#ifdef MEMPLAN_MIMALLOC
#include <mimalloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <new>
#include <utility>

#include "memplan/isolated.h"
#endif

// Why: memplan's time on a large model is much of it fresh memory. mimalloc keeps what is freed (nothing handed back
// and faulted in again). Which page size costs less for fresh memory depends on the machine and, on a virtual
// machine, on the hour: on the CI VM a fresh 4 KiB page costs ~6 us even when made present in advance (its first
// touch traps to the host), while a fresh 2 MiB page costs ~0.5 ms (0.26 us per 4 KiB of it) when the host has backed
// that memory and several milliseconds when it has not. Rounds measured either way round (docs/benchmarks.md, "At
// scale"), so each process measures both once at start-up (below, ~2 ms) and takes the cheaper: 2 MiB pages
// (transparent huge pages, each thread's segments committed whole, the segment made before main() and each huge
// object's own segment advised too), or 4 KiB pages whose commits are made present in one call each rather than faulted
// in one by one. MIMALLOC_LARGE_OS_PAGES=1 or 0 in the environment chooses instead.

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

// Fresh memory made present as mimalloc takes it. mimalloc "commits" the parts of its segments it comes to need
// with mprotect, 1 MiB or more at a time (with eager commit off); each such commit of up to 8 MiB is made present at
// once with MADV_POPULATE_WRITE. On the CI VM a page faulted in on first touch costs ~6 us in the guest kernel, one
// populated ~0.6 us: `plan` of a 100k-node graph spent a third of its CPU time in page faults (docs/benchmarks.md, "At
// scale"). Larger commits are huge objects' (a vector's reserve, a hash table's buckets), more often left partly
// unused: populated too, they raised `plan`'s peak memory by a third at 100k nodes (with 8 MiB, by 2-4%), so their
// pages fault in as they are written. A commit in a child is of pages absent in the parent, fresh in the child. Commits
// are populated where mimalloc's segments are known to be: a region of address space it takes all its segments
// from (mapped at start-up without access, no memory of its own), and the segment it made before main().
constexpr std::uintptr_t kRegionAlign = 64u << 20;  // above mimalloc 2.0's 32 MiB segment alignment
constexpr std::uintptr_t kSegment = 32u << 20;      // mimalloc 2.0's segment size and alignment
constexpr std::size_t kLargestPopulated = 8u << 20;

// Set once, before any thread starts.
std::uintptr_t region_start = 0, region_end = 0;
std::uintptr_t first_segment_start = 0, first_segment_end = 0;

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL and pages fault in as before
#endif

// The region: as large as the machine's memory (at most 64 GiB) of address space. Where it cannot be had (a limit
// on address space) mimalloc maps from the OS as before.
void map_heap_region() {
  const unsigned long long ram = memplan::physical_memory_bytes();
  const std::uintptr_t bytes = std::min<unsigned long long>(ram ? ram : 8ULL << 30, 64ULL << 30) & ~(kRegionAlign - 1);
  if (bytes == 0) return;
  void* raw = ::mmap(nullptr, bytes + kRegionAlign, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return;
  const auto at = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t start = (at + kRegionAlign - 1) & ~(kRegionAlign - 1);
  if (start > at) ::munmap(raw, start - at);
  if (at + kRegionAlign > start) ::munmap(reinterpret_cast<void*>(start + bytes), at + kRegionAlign - start);
  if (!mi_manage_os_memory(reinterpret_cast<void*>(start), bytes, /*is_committed=*/false, /*is_large=*/false,
                           /*is_zero=*/true, /*numa_node=*/-1)) {
    ::munmap(reinterpret_cast<void*>(start), bytes);
    return;
  }
  region_start = start;
  region_end = start + bytes;
}

// A child's memory limit (memplan/isolated.h) is one on address space (RLIMIT_AS), and the region is address space
// already mapped: commits in it are counted here against the same limit, less the region, so that a runaway
// allocation in a child still fails (a bad_alloc the child reports) rather than filling the machine's memory.
std::atomic<std::size_t> region_committed{0};
std::atomic<pid_t> region_committed_by{0};

bool within_address_space_limit(std::size_t len) {
  struct rlimit as {};
  if (::getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY) return true;
  const pid_t self = ::getpid();
  if (region_committed_by.exchange(self) != self) region_committed = 0;  // a child counts its own commits
  const std::uintptr_t region = region_end - region_start;
  const std::size_t budget = as.rlim_cur > region ? as.rlim_cur - region : 0;
  return region_committed.fetch_add(len) + len <= budget;
}

// Whether [at, at + len) lies inside [start, end).
bool inside(std::uintptr_t at, std::size_t len, std::uintptr_t start, std::uintptr_t end) {
  return at >= start && at < end && len <= end - at;
}

bool in_region(std::uintptr_t at, std::size_t len) {
  return inside(at, len, region_start, region_end);
}

bool populated_on_commit(std::uintptr_t at, std::size_t len) {
  return len <= kLargestPopulated && (in_region(at, len) || inside(at, len, first_segment_start, first_segment_end));
}

double seconds_now() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The seconds per 4 KiB of fresh memory, made present and then written, in `bytes` of 4 KiB pages or of one 2 MiB
// page (transparent huge pages, where the system gives them): a sample of what the process is about to pay.
double fresh_memory_cost(std::size_t bytes, bool huge) {
  const std::size_t mapped = bytes + (huge ? kLargePage : 0);
  void* raw = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return -1;
  auto* p = static_cast<char*>(raw);
  if (huge) {
    p = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(raw) + kLargePage - 1) & ~(kLargePage - 1));
    ::madvise(p, bytes, MADV_HUGEPAGE);
  }
  const double start = seconds_now();
  const bool populated = ::madvise(p, bytes, MADV_POPULATE_WRITE) == 0;
  for (std::size_t i = 0; i < bytes; i += 4096) static_cast<volatile char*>(p)[i] = 1;
  const double cost = (seconds_now() - start) / static_cast<double>(bytes / 4096);
  ::munmap(raw, mapped);
  return populated ? cost : -1;
}

// Whether fresh memory costs less in 2 MiB pages than in 4 KiB pages here, now: one 2 MiB page against 64 small
// ones, each made present and written as mimalloc's commits are (~2 ms in all). 4 KiB pages cost more afterwards
// too (a TLB miss on most accesses to a large table: with them `plan` took 1.9-2.1x the user time, at 100k and at
// 1M nodes), so 2 MiB pages are kept unless they cost more than twice as much per 4 KiB, twice in a row (a single
// huge page the host had not backed, or one the kernel could not give whole, chose 4 KiB pages for a whole run).
bool large_pages_cheaper() {
  const double small = fresh_memory_cost(64 * 4096, /*huge=*/false);
  if (small <= 0) return false;
  for (int sample = 0; sample < 2; ++sample) {
    const double large = fresh_memory_cost(kLargePage, /*huge=*/true);
    if (large > 0 && large < 2 * small) return true;
  }
  return false;
}

// mimalloc's own mi_new, built as C, aborts when memory runs out: these keep C++'s contract (the new handler, then
// std::bad_alloc), which an isolated child's out-of-memory report relies on (memplan/isolated.h).
void* allocate(std::size_t n) {
  for (;;) {
    if (void* p = mi_malloc(n)) return p;
    const std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}
void* allocate_or_null(std::size_t n) noexcept {
  try {
    return allocate(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

}  // namespace

// Replacing these in the executable replaces them for every library of the process (libonnx's, protobuf's):
// the matching operator delete stays mimalloc's, which frees what these allocated (mi_malloc).
void* operator new(std::size_t n) {
  return advised(allocate(n), n);
}
void* operator new[](std::size_t n) {
  return advised(allocate(n), n);
}
// simdjson allocates its buffers (for a 1M-value plan, a structural index of hundreds of MB) with these.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return advised(allocate_or_null(n), n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return advised(allocate_or_null(n), n);
}

// mimalloc commits memory with mprotect (mimalloc 2.0, os.c); this definition in the executable comes before libc's
// for every library of the process (exported for them: the build hides symbols by default). Elsewhere it only passes
// the call on.
extern "C" __attribute__((visibility("default"))) int mprotect(void* addr, std::size_t len, int prot) noexcept {
  if ((prot & PROT_WRITE) && in_region(reinterpret_cast<std::uintptr_t>(addr), len) &&
      !within_address_space_limit(len)) {
    errno = ENOMEM;
    return -1;
  }
  const long r = ::syscall(SYS_mprotect, addr, len, prot);
  if (r == 0 && prot == (PROT_READ | PROT_WRITE) && populated_on_commit(reinterpret_cast<std::uintptr_t>(addr), len))
    (void)::madvise(addr, len, MADV_POPULATE_WRITE);
  return static_cast<int>(r);
}
#endif

namespace memplan::cli {

std::string configure_allocator() {
#ifdef MEMPLAN_MIMALLOC
  // Each setting only where the environment leaves it alone (MIMALLOC_... variables still override).
  large_pages =
      std::getenv("MIMALLOC_LARGE_OS_PAGES") ? mi_option_is_enabled(mi_option_large_os_pages) : large_pages_cheaper();
  mi_option_set_enabled(mi_option_large_os_pages, large_pages);
  if (large_pages) {
    void* probe = mi_malloc(16);  // in the segment made before main()
    advise_mapping_of(probe);
    mi_free(probe);
  }
  // Memory freed is kept rather than handed back to be faulted in again: a run is short, and its peak is what it
  // keeps. With large pages, each thread's segments are committed whole (never 4 KiB at a time, so never in large
  // pages); otherwise mimalloc commits what it needs as it goes, each commit populated (above).
  if (!std::getenv("MIMALLOC_EAGER_COMMIT_DELAY")) mi_option_set(mi_option_eager_commit_delay, 0);
  if (!std::getenv("MIMALLOC_ALLOW_DECOMMIT")) mi_option_disable(mi_option_allow_decommit);
  // MEMPLAN_NO_POPULATE=1: pages fault in as before (for comparing: docs/benchmarks.md, "At scale").
  // (Not with eager commit asked for: mimalloc then commits a segment's arena blocks without checking the result, and
  // a child's limit, above, would fail it.)
  if (!large_pages && !std::getenv("MEMPLAN_NO_POPULATE") && !std::getenv("MIMALLOC_EAGER_COMMIT")) {
    map_heap_region();
    mi_option_disable(mi_option_eager_commit);
    void* probe = mi_malloc(16);  // in the segment made before main()
    first_segment_start = reinterpret_cast<std::uintptr_t>(probe) & ~(kSegment - 1);
    first_segment_end = first_segment_start + kSegment;
    mi_free(probe);
  }
  const int v = mi_version();  // e.g. 209 for 2.0.9
  return "mimalloc " + std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." + std::to_string(v % 10) +
         (large_pages ? ", 2 MiB pages" : ", 4 KiB pages");
#else
  return "glibc malloc";
#endif
}

bool in_heap_region(const void* p) {
#ifdef MEMPLAN_MIMALLOC
  return in_region(reinterpret_cast<std::uintptr_t>(p), 1);
#else
  (void)p;
  return false;
#endif
}

}  // namespace memplan::cli
