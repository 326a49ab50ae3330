// memplan: plans the memory of an ONNX model ahead of time.
#include <cstdlib>
#include <string>
#include <vector>

#include "memplan/cli/run.h"

#ifdef MEMPLAN_MIMALLOC
#include <mimalloc.h>
#endif

namespace {

std::string allocator() {
#ifdef MEMPLAN_MIMALLOC
  const int v = mi_version();  // e.g. 209 for 2.0.9
  return "mimalloc " + std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." + std::to_string(v % 10);
#else
  return "glibc malloc";
#endif
}

}  // namespace

int main(int argc, char** argv) {
#ifdef MEMPLAN_MIMALLOC
  // Memory in 2 MiB pages where the kernel offers them (transparent huge pages): a large model's load touches
  // hundreds of MB of fresh memory, and page faults were a fifth of `memplan plan`'s time on a 100k-node graph
  // (200k faults; 65k with large pages). Set before the first large allocation; the environment still overrides.
  if (!std::getenv("MIMALLOC_LARGE_OS_PAGES")) mi_option_enable(mi_option_large_os_pages);
#endif
#if !defined(MEMPLAN_INSTRUMENTED)  // (under the sanitizers everything is freed, so that the leak check sees all)
  memplan::cli::set_process_ends_after_run(true);
#endif
  return memplan::cli::run(std::vector<std::string>(argv + 1, argv + argc), allocator());
}
