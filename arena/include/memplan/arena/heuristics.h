// The heuristics: buffers placed one at a time in some order, each in the best-fitting gap among the placed buffers
// it conflicts with (the one wasting least; ties to the lowest offset), or on top.
#pragma once

#include <vector>

#include "memplan/arena/problem.h"

namespace memplan::arena {

// Places the buffers in `order`. With `top_gap` the room between the highest conflicting buffer and the peak so far
// is one of the gaps, as in ORT's MemPatternPlanner. Near-linear in the buffers and the conflicts found: placed
// buffers are found by levels of time buckets (heuristics.cc), and buffers living for the whole run are kept as
// merged byte ranges (an arena of weights is a prefix sum).
Solution place_in_order(const Problem& problem, const std::vector<size_t>& order, const char* name, bool top_gap);
// ORT's memory pattern: allocation order (by start), with the top gap.
Solution best_fit(const Problem& problem);
// TFLite's greedy by size: decreasing size, then longer lifetime, then earlier start.
Solution greedy_size(const Problem& problem);

}  // namespace memplan::arena
