// The independent check of a layout, used by tests, `memplan validate` and `memplan solve`.
#pragma once

#include <string>
#include <vector>

#include "memplan/arena/problem.h"

namespace memplan::arena {

// Every pair of conflicting buffers is disjoint in memory, offsets aligned, everything inside the peak. Returns a
// message for the first fault, "" if none.
std::string check_solution(const Problem& problem, const std::vector<uint64_t>& offsets, uint64_t peak);

}  // namespace memplan::arena
