// The arena problem (dynamic storage allocation): buffers with sizes and lifetimes to place in one arena so that
// buffers whose lifetimes overlap never share bytes; and a solution, an offset per buffer. Exactly the content of
// MiniMalloc's CSV (id, lower, upper, size[, alignment]), shared by `memplan solve`, the plan's layout and offload.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace memplan::arena {

struct Buffer {
  std::string id;     // as given (MiniMalloc's ids may be names); a value index for plan arenas
  int64_t lower = 0;  // lifetime [lower, upper): half-open
  int64_t upper = 0;
  uint64_t size = 0;
  uint64_t alignment = 1;  // the offset must be a multiple of it
};

// Buffers whose lifetimes overlap conflict. Multi-stream arenas add conflicts between buffers whose
// intervals (in one legal interleaving) are disjoint but which no synchronisation orders: `extra_conflicts`.
struct Problem {
  std::vector<Buffer> buffers;
  std::vector<std::vector<int>> extra_conflicts;  // per buffer index, sorted; may be empty (intervals only)
  bool conflict(size_t i, size_t j) const;
  bool intervals_only() const;
};

struct Solution {
  std::vector<uint64_t> offsets;  // per buffer
  uint64_t peak = 0;              // arena size
  uint64_t lower_bound = 0;       // the largest total size live at one moment (aligned sizes)
  bool optimal = false;           // peak == lower bound, or proven by exhaustive search
  std::string algorithm;          // which one produced it
  double seconds = 0;
  uint64_t nodes_explored = 0;  // exact search
  double work_seconds = 0;      // the exact search's work, in seconds of --time-budget (work_budget.h)
  std::string note;             // why a phase did not run (the exact search skipped), if one did not
};

// Size as placed: rounded up to the buffer's alignment.
uint64_t aligned_size(const Buffer& b);

// How long the buffer lives (upper - lower; 0 if it never does), exact over the whole int64 range of times.
inline uint64_t lifetime(const Buffer& b) {
  return b.upper > b.lower ? static_cast<uint64_t>(b.upper) - static_cast<uint64_t>(b.lower) : 0;
}

inline uint64_t align_up(uint64_t value, uint64_t alignment) {
  alignment = std::max<uint64_t>(1, alignment);
  return (value + alignment - 1) / alignment * alignment;
}

// Every sum of sizes and every offset the algorithms compute fits in 63 bits when the buffers' aligned sizes
// together do: throws Error(kBadInput), naming the buffer, past 2^62 bytes.
void check_total_size(const Problem& problem);

}  // namespace memplan::arena
