// Fuzz target: any bytes as a MiniMalloc problem (CSV) for `memplan solve`, with each algorithm.
#include "support.h"

using namespace memplan::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string csv = write_scratch("problem.csv", data, size);
  static const char* const algorithms[] = {"auto", "best-fit", "greedy-size", "exact"};
  run_cli({"solve", csv, "--algorithm", algorithms[size % 4], "--time-budget", "0.05", "-o",
           scratch_dir() + "/solution.csv"});
  return 0;
}
