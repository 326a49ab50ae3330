// Fuzz target: any bytes as a plan file, through every command that reads plans: validate, inspect (text,
// JSON, SVG, HTML), diff, corrupt and replay (CPU). The pictures must contain no element a plan string put there.
#include "support.h"

using namespace memplan::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string plan = write_scratch("plan.json", data, size);
  const std::string dir = scratch_dir();
  const CliResult checked = run_cli({"validate", plan, "--allow-unknown-sizes"});
  run_cli({"inspect", plan});
  run_cli({"inspect", plan, "--json"});
  std::remove((dir + "/plan.svg").c_str());
  std::remove((dir + "/plan.html").c_str());
  const CliResult pictured = run_cli({"inspect", plan, "--svg", dir + "/plan.svg", "--html", dir + "/plan.html"});
  check_markup(dir + "/plan.svg", pictured);
  check_markup(dir + "/plan.html", pictured);
  run_cli({"diff", plan, plan});
  static const char* const kinds[] = {"offset", "wait", "barrier", "release", "shrink", "misalign", "kind"};
  run_cli({"corrupt", plan, "--kind", kinds[size % 7], "--seed", std::to_string(size % 5), "-o", dir + "/bad.json"});
  // Replay runs what validate accepted (as a user would); it must finish, whatever the plan says.
  if (checked.rc == 0) run_cli({"replay", plan, "--timeout", "2", "--sample"});
  return 0;
}
