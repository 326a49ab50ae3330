// memplan replay PLAN.json: execute the plan with stamp kernels (see replay/).
#include "../replay/replay_cli.h"
#include "common.h"

namespace memplan::cli {

void register_replay(CLI::App& app) {
  auto args = std::make_shared<replay::ReplayArgs>();
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "Execute a plan on CPU threads or CUDA streams with stamp kernels; exit 3 when a buffer is overwritten or "
      "released while still needed, 2 when --backend cuda finds no usable GPU");
  replay::add_replay_options(*cmd, args);
  cmd->footer(
      "Examples:\n"
      "  memplan replay plan.json                   # CPU threads, one per stream\n"
      "  memplan replay plan.json --backend cuda    # one CUDA stream per logical stream (needs a GPU)");
  cmd->callback([args] { replay::run_replay(*args); });
}

}  // namespace memplan::cli
