// memplan: plans the memory of an ONNX model ahead of time.
#include <string>
#include <vector>

#include "allocator.h"
#include "memplan/cli/run.h"
#include "memplan/progress.h"

int main(int argc, char** argv) {
  const std::string allocator = memplan::cli::configure_allocator();
  memplan::enable_progress_line();
#if !defined(MEMPLAN_INSTRUMENTED)  // (under the sanitizers everything is freed, so that the leak check sees all)
  memplan::cli::set_process_ends_after_run(true);
#endif
  return memplan::cli::run(std::vector<std::string>(argv + 1, argv + argc), allocator);
}
