// Offsets for one device under an offload choice: one arena holding everything the device holds (weights,
// activations, outputs, bodies' workspaces), with a moved buffer placed once per residency (its staging region),
// and the loop that lowers the chooser's target until the arena, not only the live bytes, fits the budget.
#pragma once

#include <vector>

#include "memplan/arena/solve.h"
#include "memplan/offload/from_plan.h"

namespace memplan::offload {

struct DeviceLayout {
  arena::Problem problem;  // buffer ids: "B" or "B.R" (offload buffer B, residency R)
  arena::Solution solution;
  std::vector<int> buffer;     // per problem buffer: its offload buffer
  std::vector<int> residency;  // per problem buffer: its residency, -1 when on the device as planned
};

DeviceLayout lay_out_device(const Problem& problem, const Result& choice, uint64_t alignment,
                            const arena::SolveOptions& solve);

struct Fit {
  Result choice;
  DeviceLayout layout;
  uint64_t target = 0;  // the live-bytes budget the chooser was given last
  int rounds = 0;       // choices made
  bool fits = false;    // the arena is within problem.budget
};

// Chooses for problem.budget; while the arena exceeds it, chooses again with the target lowered by the excess
// (fragmentation: staging regions and what they split apart), at most `max_rounds` times.
Fit fit_device(Problem problem, uint64_t alignment, const arena::SolveOptions& solve, int max_rounds = 8);

// The smallest budget (to `granularity`) at which fit_device fits, by bisection up to the arena without offload.
uint64_t smallest_fitting_arena(Problem problem, uint64_t alignment, const arena::SolveOptions& solve,
                                uint64_t granularity = 1 << 20);

}  // namespace memplan::offload
