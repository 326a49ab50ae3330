// The memplan executable's allocator (cli/allocator.cc), in a test binary set up as the executable is, run once with
// each page size (ctest sets MIMALLOC_LARGE_OS_PAGES): with 2 MiB pages, mimalloc's segments and huge objects are
// advised for them; with 4 KiB pages, mimalloc takes its memory from one region whose commits are made present at
// once; with either, a child's memory limit still holds for what it allocates.
#define CATCH_CONFIG_RUNNER
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "allocator.h"
#include "memplan/error.h"
#include "memplan/isolated.h"

namespace {

std::string g_allocator;      // configure_allocator()'s name for what it set up
std::vector<char*> g_blocks;  // (kept where the compiler must assume they are read, so no new is elided)

// Allocates until the memory limit stops it, where no exception can leave (as inside libonnx's inference).
void exhaust_memory() noexcept {
  for (;;) {
    char* block = new char[4 << 20];  // (under 8 MiB: committed in the region, populated)
    block[0] = 1;
    g_blocks.push_back(block);
  }
}

bool resident(const void* p) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  unsigned char v = 0;
  void* start = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(p) & ~(page - 1));
  return ::mincore(start, page, &v) == 0 && (v & 1);
}

// The VmFlags of the mapping that holds `p` (/proc/self/smaps), or "" when none does.
std::string vm_flags_of(const void* p) {
  std::FILE* smaps = std::fopen("/proc/self/smaps", "r");
  if (!smaps) return "";
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  bool holds = false;
  std::string flags;
  char line[512];
  while (flags.empty() && std::fgets(line, sizeof line, smaps)) {
    unsigned long long start = 0, end = 0;
    if (std::sscanf(line, "%llx-%llx ", &start, &end) == 2 && std::strchr(line, ' ') < std::strchr(line, '\n'))
      holds = start <= at && at < end;
    else if (holds && std::strncmp(line, "VmFlags:", 8) == 0)
      flags = line + 8;
  }
  std::fclose(smaps);
  return flags;
}

bool advised_for_large_pages(const void* p) {
  return vm_flags_of(p).find(" hg") != std::string::npos;
}

}  // namespace

TEST_CASE("allocator: with 2 MiB pages, segments and huge objects are advised for them", "[allocator][2m-pages]") {
  REQUIRE_THAT(g_allocator, Catch::Contains("2 MiB pages"));
  // A small object, 1 MiB blocks and a huge object (a segment of its own): each lies in a mapping advised for 2 MiB
  // pages (by mimalloc in its large-page mode, or by the set-up: the segment made before main(), huge objects).
  auto small = std::make_unique_for_overwrite<char[]>(64);
  CHECK(advised_for_large_pages(small.get()));
  std::vector<std::unique_ptr<char[]>> blocks;
  for (int i = 0; i < 64; ++i) blocks.push_back(std::make_unique_for_overwrite<char[]>(1 << 20));
  CHECK(advised_for_large_pages(blocks.back().get()));
  auto huge = std::make_unique_for_overwrite<char[]>((24 << 20) + 12345);
  CHECK(advised_for_large_pages(huge.get() + (12 << 20)));
}

TEST_CASE("allocator: memory comes from the heap region, its pages present before they are written",
          "[allocator][4k-pages]") {
  REQUIRE_THAT(g_allocator, Catch::Contains("4 KiB pages"));
  // The first allocations fill the segment mimalloc made before main(); then the region.
  std::vector<std::unique_ptr<char[]>> blocks;
  while (blocks.size() < 200 && (blocks.empty() || !memplan::cli::in_heap_region(blocks.back().get())))
    blocks.push_back(std::make_unique_for_overwrite<char[]>(1 << 20));
  const char* block = blocks.back().get();
  REQUIRE(memplan::cli::in_heap_region(block));
  // Nothing of the block was written: without populating, its last page would be absent.
  CHECK(resident(block + (1 << 20) - 1));
  // What mimalloc takes as zeroed fresh memory is zero.
  auto* zeroed = static_cast<unsigned char*>(std::calloc(6 << 20, 1));
  REQUIRE(zeroed != nullptr);
  bool all_zero = true;
  for (std::size_t i = 0; i < (6u << 20); i += 4093) all_zero = all_zero && zeroed[i] == 0;
  CHECK(all_zero);
  std::free(zeroed);
}

TEST_CASE("allocator: a child's memory limit holds for what it allocates", "[allocator]") {
  memplan::IsolationLimits limits;
  limits.memory_bytes = 256ULL << 20;
  try {
    memplan::run_isolated(
        []() -> std::string {
          exhaust_memory();
          return "";
        },
        "big.onnx", "ONNX's shape inference", limits);
    FAIL("a child out of memory was not reported");
  } catch (const memplan::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("ran out of memory on this model (more than 256 MiB)"));
  }
}

int main(int argc, char** argv) {
  g_allocator = memplan::cli::configure_allocator();  // first, as the executable's main() does
  return Catch::Session().run(argc, argv);
}
