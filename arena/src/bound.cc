// The lower bound every layout is judged against.
#include "memplan/arena/bound.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

namespace memplan::arena {

uint64_t lower_bound(const Problem& p) {
  check_total_size(p);
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, +size / -size); ends sort before starts
  for (const Buffer& b : p.buffers) {
    if (b.upper <= b.lower || b.size == 0) continue;
    events.push_back({b.lower, static_cast<int64_t>(aligned_size(b))});
    events.push_back({b.upper, -static_cast<int64_t>(aligned_size(b))});
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, best = 0;
  for (auto [t, d] : events) {
    live += d;
    best = std::max(best, live);
  }
  if (p.intervals_only() || p.buffers.size() > kCliqueBoundMaxBuffers) return static_cast<uint64_t>(best);
  // With extra conflicts (several streams) a set of pairwise-conflicting buffers may weigh more than any
  // moment's live set: grow cliques greedily from the largest buffers, by decreasing size.
  std::vector<size_t> by_size(p.buffers.size());
  std::iota(by_size.begin(), by_size.end(), 0);
  std::sort(by_size.begin(), by_size.end(),
            [&](size_t a, size_t b) { return aligned_size(p.buffers[a]) > aligned_size(p.buffers[b]); });
  const size_t seeds = std::min<size_t>(by_size.size(), 64);
  for (size_t s = 0; s < seeds; ++s) {
    std::vector<size_t> clique{by_size[s]};
    uint64_t weight = aligned_size(p.buffers[by_size[s]]);
    for (size_t j : by_size) {
      if (j == by_size[s] || p.buffers[j].size == 0) continue;
      if (std::all_of(clique.begin(), clique.end(), [&](size_t c) { return p.conflict(c, j); })) {
        clique.push_back(j);
        weight += aligned_size(p.buffers[j]);
      }
    }
    best = std::max(best, static_cast<int64_t>(weight));
  }
  return static_cast<uint64_t>(best);
}

}  // namespace memplan::arena
