// Laying out one arena: the algorithms by name (a registry the CLI builds its choices and help from) and `solve`,
// which runs one and reports how close it came to the lower bound.
//
//   arena::Problem p;                      // buffers: id, lifetime [lower, upper), size, alignment
//   p.buffers.push_back({"a", 0, 2, 100});
//   arena::Solution s = arena::solve(p, {arena::Algorithm::kAuto, 1.0, false});
//   s.offsets[0], s.peak, s.lower_bound, s.optimal, s.note
//
// A new algorithm is one function (Problem, SolveOptions, bound) -> Solution and one row in packers().
#pragma once

#include <string>
#include <vector>

#include "memplan/arena/problem.h"

namespace memplan::arena {

enum class Algorithm { kBestFit, kGreedySize, kExact, kAuto };

struct SolveOptions {
  Algorithm algorithm = Algorithm::kAuto;
  double time_budget_s = 1.0;  // for exact (and auto's exact phase): work, about seconds (work_budget.h)
  bool show_progress = false;  // a progress line on stderr (terminals only)
  // The lower bound, for the solution's report. Off where only the arena's size is wanted (ORT's estimate): the
  // heuristics do not need it (exact and auto compute it anyway), and it is a third of a 100k-buffer layout.
  bool lower_bound = true;
};

// One arena algorithm: its name on the command line, one line of help, and the function that lays a problem out
// (given the problem's lower bound, which solve computes once).
struct Packer {
  Algorithm algorithm;
  const char* name;
  const char* help;
  Solution (*run)(const Problem& problem, const SolveOptions& options, uint64_t bound);
};

// Every algorithm, in the order the help lists them.
const std::vector<Packer>& packers();
const char* algorithm_name(Algorithm a);
bool parse_algorithm(const std::string& text, Algorithm& out);
// "best-fit, greedy-size, exact or auto": the names for a usage message.
std::string algorithm_names();
// Every algorithm's name and help, "name: help; name: help": for --help.
std::string algorithm_help();

// Lays out `problem` with the chosen algorithm; the solution carries the lower bound, whether it is proven optimal,
// and a note when a phase did not run. Throws Error(kBadInput) when the sizes add up past 2^62 bytes.
Solution solve(const Problem& problem, const SolveOptions& options);

}  // namespace memplan::arena
