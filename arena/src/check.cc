// The independent check of a layout (tests, `memplan validate`, `memplan solve`).
#include "memplan/arena/check.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>

namespace memplan::arena {

std::string check_solution(const Problem& p, const std::vector<uint64_t>& offsets, uint64_t peak) {
  const size_t n = p.buffers.size();
  if (offsets.size() != n)
    return "the solution has " + std::to_string(offsets.size()) + " offsets for " + std::to_string(n) + " buffers";
  for (size_t i = 0; i < n; ++i) {
    const Buffer& b = p.buffers[i];
    if (offsets[i] % std::max<uint64_t>(1, b.alignment)) return "buffer " + b.id + " is misaligned";
    if (offsets[i] + b.size > peak) return "buffer " + b.id + " ends past the arena";
  }
  // Sweep over time; buffers live together must be disjoint in memory (sorted by offset, each must end
  // before the next starts). Extra conflicts are checked pair by pair.
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return p.buffers[a].lower < p.buffers[b].lower; });
  std::multimap<uint64_t, size_t> by_offset;  // live buffers
  std::multimap<int64_t, size_t> by_end;
  for (size_t i : idx) {
    const Buffer& b = p.buffers[i];
    if (b.size == 0 || b.upper <= b.lower) continue;
    while (!by_end.empty() && by_end.begin()->first <= b.lower) {
      size_t gone = by_end.begin()->second;
      by_end.erase(by_end.begin());
      for (auto it = by_offset.lower_bound(offsets[gone]); it != by_offset.end(); ++it)
        if (it->second == gone) {
          by_offset.erase(it);
          break;
        }
    }
    auto it = by_offset.upper_bound(offsets[i]);
    if (it != by_offset.end() && it->first < offsets[i] + b.size)
      return "buffers " + b.id + " and " + p.buffers[it->second].id + " overlap in memory and time";
    if (it != by_offset.begin()) {
      auto prev = std::prev(it);
      if (offsets[prev->second] + p.buffers[prev->second].size > offsets[i])
        return "buffers " + b.id + " and " + p.buffers[prev->second].id + " overlap in memory and time";
    }
    by_offset.emplace(offsets[i], i);
    by_end.emplace(b.upper, i);
  }
  for (size_t i = 0; i < p.extra_conflicts.size(); ++i)
    for (int j : p.extra_conflicts[i]) {
      uint64_t a0 = offsets[i], a1 = a0 + p.buffers[i].size, b0 = offsets[j], b1 = b0 + p.buffers[j].size;
      if (p.buffers[i].size && p.buffers[j].size && a0 < b1 && b0 < a1)
        return "buffers " + p.buffers[i].id + " and " + p.buffers[j].id +
               " are not ordered by synchronisation but overlap in memory";
    }
  return "";
}

}  // namespace memplan::arena
