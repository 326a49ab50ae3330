// The root of every chain of "this value lives in that one's memory" links (in-place outputs, views), computed
// once for all values: plan checks, layouts, reports and the replay all need it, and walking the links per value
// is quadratic on a long in-place chain.
#pragma once

#include <cstdint>
#include <vector>

namespace memplan {

inline constexpr int32_t kOnCycle = -2;

// roots[i] = the last index of the chain i -> parent[i] -> parent[parent[i]] -> ..., which ends at the first index
// whose parent is negative or out of range. An index on a cycle, or whose chain runs into one, gets kOnCycle.
// O(n) time and memory, whatever the chains' lengths.
std::vector<int32_t> chain_roots(const std::vector<int32_t>& parent);

}  // namespace memplan
