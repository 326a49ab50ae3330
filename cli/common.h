// Option groups and helpers shared by the subcommands. No planning logic lives in cli/.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "memplan/device_totals.h"
#include "memplan/graph.h"
#include "memplan/onnx_io/load.h"
#include "memplan/suggest.h"

namespace memplan::cli {

// --dim and --input-shape, shared by every subcommand that loads a model.
struct ShapeOptions {
  std::vector<std::string> dims;
  std::vector<std::string> input_shapes;
  std::vector<std::string> trip_counts;  // --trip-count NODE=N
  bool no_ort_rewrites = false;
  int nchwc_block_size = 0;  // 0: from the model
  // sweeps: the subcommand takes lists and ranges in --dim (plan; through sweep_points()).
  void add_to(CLI::App& app, bool sweeps = false);
  onnx_io::LoadOptions load_options() const;
  // With `dims` in place of the --dim options: one point of a sweep.
  onnx_io::LoadOptions load_options(const std::vector<std::string>& dims) const;
  // Every combination of the --dim values ("batch=1,8,32", "batch=1..64:x2", "seq=128..512:+128"), each as
  // NAME=VALUE strings; one point when nothing is swept. Throws Error(kUsage) on a malformed list.
  std::vector<std::vector<std::string>> sweep_points() const;
};

// When the process ends after this command (set_process_ends_after_run): `object`, a large result the command is
// done with, is moved aside and never freed, for the exit to reclaim at once. Freeing a 1M-node graph or plan one
// allocation at a time costs 0.1-0.4 s. Otherwise it is left as it is, to be destroyed as usual.
bool process_ends_after_run();
template <class T>
void leave_to_exit(T& object) {
  if (process_ends_after_run()) (void)new T(std::move(object));
}

// For options naming a file to write: an empty path (an unset variable in a script, `-o "$OUT"`) is a usage error
// rather than the default (stdout).
const CLI::Validator& output_path();

// Prints a warning line on stderr ("memplan: warning: ...").
void warn(const std::string& message);

// `inspect` on a plan file.
void run_inspect_plan(const std::string& path, bool json, size_t top, const std::string& svg, const std::string& html);

// Subcommand registration: each adds itself to the app and sets its callback.
void register_inspect(CLI::App& app);
void register_shapes(CLI::App& app);
void register_partition(CLI::App& app);
void register_plan(CLI::App& app);
void register_solve(CLI::App& app);
void register_validate(CLI::App& app);
void register_reorder(CLI::App& app);
// `completion bash|zsh` and `manpage`: generated from the app itself (docs/app_docs.h).
void register_docs(CLI::App& app);
// diff's outcome (1: the plans differ) is not an error: its callback sets `exit_status`, which run() returns.
void register_diff(CLI::App& app, int& exit_status);
void register_corrupt(CLI::App& app);
void register_replay(CLI::App& app);

}  // namespace memplan::cli
