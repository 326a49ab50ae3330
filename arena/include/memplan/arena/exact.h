// The exact search: a branch and bound over "gravity-normalised" layouts in the spirit of MiniMalloc (Moffitt, ASPLOS
// 2024; our own code). Time is cut into sections at lifetime boundaries; buffers are placed in canonical order, each
// at its minimum offset, so every layout is reached once; dominance and section inference prune. Capacities are
// decided one at a time: the lower bound first, then a bisection between the best infeasible capacity known and the
// best layout.
#pragma once

#include <string>

#include "memplan/arena/problem.h"

namespace memplan::arena {

// Why the search should not run on `problem`, or "" when it may: more overlapping pairs than it can hold; under
// `automatic` (auto) also more buffers than a search can improve within a budget.
std::string exact_skip_reason(const Problem& problem, bool automatic);

// Improves `best`, a valid layout of `problem` (the best heuristic's), within `time_budget_s` seconds of work
// (work_budget.h; the same work on every machine): its offsets, peak, algorithm ("exact" when it found better),
// nodes_explored, work_seconds, and `optimal` when the peak is `bound` or every smaller capacity was proven
// infeasible. `show_progress`: a progress line on stderr, on terminals only.
void search_exact(const Problem& problem, uint64_t bound, double time_budget_s, bool show_progress, Solution& best);

}  // namespace memplan::arena
