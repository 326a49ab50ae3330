// Offset assignment (dynamic storage allocation): place buffers with sizes and lifetimes in one arena so
// that buffers whose lifetimes overlap never share bytes. One plain problem type, exactly the content of
// MiniMalloc's CSV (id, lower, upper, size[, alignment]), shared by `memplan solve` and the plan's layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memplan::planner {

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

enum class Algorithm { kBestFit, kGreedySize, kExact, kAuto };
const char* algorithm_name(Algorithm a);
bool parse_algorithm(const std::string& text, Algorithm& out);

struct Solution {
  std::vector<uint64_t> offsets;  // per buffer
  uint64_t peak = 0;              // arena size
  uint64_t lower_bound = 0;       // the largest total size live at one moment (aligned sizes)
  bool optimal = false;           // peak == lower bound, or proven by exhaustive search
  std::string algorithm;          // which one produced it
  double seconds = 0;
  uint64_t nodes_explored = 0;  // exact search
  double work_seconds = 0;      // the exact search's work, in seconds of --time-budget (work_budget.h)
  std::string note;             // why a phase was skipped, if one was
};

struct SolveOptions {
  Algorithm algorithm = Algorithm::kAuto;
  double time_budget_s = 1.0;  // for exact (and auto's exact phase): work, about seconds (work_budget.h)
  bool show_progress = false;  // a progress line on stderr (terminals only)
};

// Size as placed: rounded up to the buffer's alignment.
uint64_t aligned_size(const Buffer& b);
// The lower bound: the weight of a set of pairwise-conflicting buffers, which must be disjoint in any
// valid layout: the largest total (aligned) size live at one moment of the intervals (their intervals
// come from one legal interleaving), and with extra conflicts also cliques grown greedily from the
// largest buffers.
uint64_t lower_bound(const Problem& problem);
Solution solve(const Problem& problem, const SolveOptions& options);

// Independent check, used by tests and `validate`: every pair of conflicting buffers is disjoint in
// memory, offsets aligned, everything inside the peak. Returns a message for the first fault, "" if none.
std::string check_solution(const Problem& problem, const std::vector<uint64_t>& offsets, uint64_t peak);

// MiniMalloc's CSV: header "id,lower,upper,size" (optional alignment column). Throws Error(kBadInput).
Problem read_minimalloc_csv(const std::string& text, const std::string& source);
std::string write_minimalloc_csv(const Problem& problem, const std::vector<uint64_t>* offsets);

}  // namespace memplan::planner
