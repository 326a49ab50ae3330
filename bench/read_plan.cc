// memplan-bench-read PLAN: the seconds it takes to read and check a plan file, as the memplan executable reads it
// (the same reader and the same allocator set-up): the floor scripts/bench-scale puts beside validate, inspect, diff
// and corrupt.
#include <chrono>
#include <cstdio>
#include <exception>

#include "allocator.h"
#include "memplan/plan_doc/plan_doc.h"

int main(int argc, char** argv) {
  memplan::cli::configure_allocator();
  if (argc != 2) {
    std::fprintf(stderr, "usage: memplan-bench-read PLAN\n");
    return 2;
  }
  try {
    const auto start = std::chrono::steady_clock::now();
    const memplan::plan_doc::PlanDoc plan = memplan::plan_doc::read_plan_file(argv[1]);
    std::printf("%.3f\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return plan.values.empty() ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memplan-bench-read: %s\n", e.what());
    return 1;
  }
}
