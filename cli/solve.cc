// memplan solve PROBLEM.csv: offset assignment on MiniMalloc's CSV format.
#include "memplan/arena/solve.h"

#include <cstdio>
#include <iostream>
#include <optional>

#include "../replay/replay_cli.h"
#include "common.h"
#include "memplan/arena/check.h"
#include "memplan/arena/csv.h"
#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/stage_times.h"

namespace memplan::cli {
namespace {

struct SolveArgs {
  std::string problem;
  std::string output = "-";
  std::string algorithm = "auto";
  double time_budget = 10;
  uint64_t capacity = 0;
};

void run_solve(const SolveArgs& args) {
  arena::SolveOptions options;
  if (!arena::parse_algorithm(args.algorithm, options.algorithm))
    fail_usage("--algorithm '" + args.algorithm + "': use " + arena::algorithm_names());
  options.time_budget_s = args.time_budget;
  options.show_progress = true;
  std::optional<TimedStage> stage(std::in_place, "read problem");
  arena::Problem p = arena::read_minimalloc_csv(read_file(args.problem), args.problem);
  stage.emplace(std::string("layout (") + arena::algorithm_name(options.algorithm) + ")");
  arena::Solution s = arena::solve(p, options);
  stage.reset();
  std::string fault = arena::check_solution(p, s.offsets, s.peak);
  if (!fault.empty()) throw Error(ExitCode::kInvalidPlan, "internal error: the solution is invalid: " + fault);
  write_file_atomically(args.output, arena::write_minimalloc_csv(p, &s.offsets));
  char line[320];
  std::snprintf(line, sizeof line, "memplan: %zu buffers, peak %llu, lower bound %llu (ratio %.4f)%s, %s, %.2f s%s\n",
                p.buffers.size(), static_cast<unsigned long long>(s.peak),
                static_cast<unsigned long long>(s.lower_bound),
                s.lower_bound ? static_cast<double>(s.peak) / static_cast<double>(s.lower_bound) : 1.0,
                s.optimal ? " optimal" : "", s.algorithm.c_str(), s.seconds,
                s.nodes_explored ? (", " + std::to_string(s.nodes_explored) + " search nodes").c_str() : "");
  std::cerr << line;
  if (!s.note.empty()) std::cerr << "memplan: " << s.note << "\n";
  if (args.capacity && s.peak > args.capacity)
    throw Error(ExitCode::kOverBudget, args.problem + ": peak " + std::to_string(s.peak) + " exceeds --capacity " +
                                           std::to_string(args.capacity));
}

}  // namespace

void register_solve(CLI::App& app) {
  auto args = std::make_shared<SolveArgs>();
  CLI::App* cmd = app.add_subcommand(
      "solve",
      "Assign offsets to buffers given as MiniMalloc CSV (id,lower,upper,size[,alignment]); write the solution");
  cmd->add_option("PROBLEM", args->problem, "The CSV file")->required();
  cmd->add_option("-o,--output", args->output,
                  "Where to write the solution: the input rows plus an offset column (default: stdout)")
      ->check(output_path());
  cmd->add_option("--algorithm", args->algorithm, "The layout algorithm: " + arena::algorithm_help())
      ->capture_default_str();
  cmd->add_option(
         "--time-budget", args->time_budget,
         "Seconds the exact search may take, counted as work at one core's rate (the same result on any machine)")
      ->check(replay::seconds_validator())
      ->capture_default_str();
  cmd->add_option("--capacity", args->capacity, "Exit 4 if the peak exceeds this many bytes");
  cmd->footer(
      "Examples:\n"
      "  memplan solve problem.csv -o solution.csv\n"
      "  memplan plan model.onnx --export-problem problem.csv -o plan.json && memplan solve problem.csv");
  cmd->callback([args] { run_solve(*args); });
}

}  // namespace memplan::cli
