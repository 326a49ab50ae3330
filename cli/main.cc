// memplan: plans the memory of an ONNX model ahead of time.
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
#if !defined(__SANITIZE_ADDRESS__)  // (under AddressSanitizer everything is freed, so that its leak check sees all)
  memplan::cli::set_process_ends_after_run(true);
#endif
  return memplan::cli::run(std::vector<std::string>(argv + 1, argv + argc), allocator());
}
