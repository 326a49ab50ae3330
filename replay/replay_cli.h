// The replay command line, shared by `memplan replay` and the standalone `memplan-replay`.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/replay/replay.h"

namespace memplan::replay {

// A number of seconds: finite, from 0 to a day (NaN passes CLI::Range, so this checks it).
inline CLI::Validator seconds_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !(v >= 0 && v <= 86400))
          return "'" + text + "' is not a number of seconds from 0 to 86400";
        return {};
      },
      "SECONDS");
}

struct ReplayArgs {
  std::string plan;
  ReplayOptions options;
  size_t show = 20;
};

inline CLI::App* add_replay_options(CLI::App& cmd, std::shared_ptr<ReplayArgs> args) {
  cmd.add_option("PLAN", args->plan, "The plan (JSON) to execute")->required();
  cmd.add_option("--backend", args->options.backend,
                 "cpu (host threads, CUDA's semantics) or cuda (one CUDA stream per logical stream)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd.add_flag(
      "--jitter", args->options.jitter,
      "Expose races: in run k (from 0) stream k lags while the others run ahead, for each stream in turn, then a run "
      "with seeded random delays on every stream; --iterations at least the number of streams covers every stream");
  cmd.add_option("--iterations", args->options.iterations,
                 "Runs, each with the next seed (and, with --jitter, the next turn)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd.add_option("--seed", args->options.seed, "The first seed")->capture_default_str();
  cmd.add_flag("--sample", args->options.sample, "Check a dense sample of each region instead of every word");
  cmd.add_option("--timeout", args->options.timeout_s,
                 "Seconds a stream may wait at a Barrier before the run is reported stuck")
      ->check(seconds_validator())
      ->capture_default_str();
  cmd.add_option("--show", args->show, "How many errors to print")->capture_default_str();
  return &cmd;
}

// Prints the report; throws Error(kInvalidPlan) when the replay found errors.
inline void run_replay(const ReplayArgs& args) {
  auto plan = plan_doc::read_plan_file(args.plan);
  ReplayOptions options = args.options;
  options.show_progress = true;
  ReplayReport report = replay(plan, options);
  std::cout << format_report(report, args.plan, args.show);
  if (!report.ok())
    throw Error(ExitCode::kInvalidPlan,
                args.plan + ": the replay found " + std::to_string(report.error_count) + " error(s)");
}

}  // namespace memplan::replay
