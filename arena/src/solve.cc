// The algorithm registry and the driver every arena goes through.
#include "memplan/arena/solve.h"

#include <chrono>
#include <string_view>
#include <vector>

#include "memplan/arena/bound.h"
#include "memplan/arena/exact.h"
#include "memplan/arena/heuristics.h"
#include "memplan/enum_names.h"

namespace memplan::arena {

namespace {

// The better of the two heuristics (best fit on a tie: so greedy size need not run when best fit meets the bound).
Solution best_heuristic(const Problem& problem, uint64_t bound) {
  Solution fit = best_fit(problem);
  if (fit.peak == bound) return fit;
  Solution greedy = greedy_size(problem);
  return greedy.peak < fit.peak ? greedy : fit;
}

Solution run_best_fit(const Problem& problem, const SolveOptions&, uint64_t) {
  return best_fit(problem);
}

Solution run_greedy_size(const Problem& problem, const SolveOptions&, uint64_t) {
  return greedy_size(problem);
}

// The best heuristic, then the exact search where it may run (`automatic`: auto's limits), saying why when not.
Solution heuristic_then_exact(const Problem& problem, const SolveOptions& options, uint64_t bound, bool automatic) {
  Solution best = best_heuristic(problem, bound);
  if (best.peak == bound) return best;
  best.note = exact_skip_reason(problem, automatic);
  if (best.note.empty()) search_exact(problem, bound, options.time_budget_s, options.show_progress, best);
  return best;
}

Solution run_exact(const Problem& problem, const SolveOptions& options, uint64_t bound) {
  return heuristic_then_exact(problem, options, bound, /*automatic=*/false);
}

Solution run_auto(const Problem& problem, const SolveOptions& options, uint64_t bound) {
  return heuristic_then_exact(problem, options, bound, /*automatic=*/true);
}

}  // namespace

const std::vector<Packer>& packers() {
  static const std::vector<Packer> table = {
      {Algorithm::kBestFit, "best-fit",
       "ORT's memory pattern (in allocation order, each buffer in the best-fitting gap)", run_best_fit},
      {Algorithm::kGreedySize, "greedy-size", "TFLite's greedy by size (largest first, each in the best-fitting gap)",
       run_greedy_size},
      {Algorithm::kExact, "exact", "the better heuristic, then branch and bound within --time-budget", run_exact},
      {Algorithm::kAuto, "auto",
       "the better heuristic, then branch and bound on arenas of up to 20,000 buffers (the default)", run_auto},
  };
  return table;
}

const char* algorithm_name(Algorithm a) {
  for (const Packer& p : packers())
    if (p.algorithm == a) return p.name;
  return "?";
}

bool parse_algorithm(const std::string& text, Algorithm& out) {
  for (const Packer& p : packers())
    if (text == p.name) {
      out = p.algorithm;
      return true;
    }
  return false;
}

std::string algorithm_names() {
  std::vector<std::string_view> names;
  for (const Packer& p : packers()) names.push_back(p.name);
  return alternatives_text(names);
}

std::string algorithm_help() {
  std::string out;
  for (const Packer& p : packers()) out += std::string(out.empty() ? "" : "; ") + p.name + ": " + p.help;
  return out;
}

Solution solve(const Problem& problem, const SolveOptions& options) {
  check_total_size(problem);
  const auto start = std::chrono::steady_clock::now();
  const Packer* packer = &packers().back();
  for (const Packer& p : packers())
    if (p.algorithm == options.algorithm) packer = &p;
  const bool bounded = options.lower_bound || packer->algorithm == Algorithm::kExact ||
                       packer->algorithm == Algorithm::kAuto;  // (the search starts from the bound)
  const uint64_t bound = bounded ? lower_bound(problem) : 0;
  Solution best = packer->run(problem, options, bound);
  best.lower_bound = bound;
  best.optimal = best.optimal || (bounded && best.peak == bound);
  best.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return best;
}

}  // namespace memplan::arena
