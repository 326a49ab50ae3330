// Fuzz target: any bytes as a model file. `inspect` and `plan` must fail with a message or succeed, and a plan
// memplan writes must pass its own `validate`.
#include <filesystem>

#include "support.h"

using namespace memplan::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string model = write_scratch("model.onnx", data, size);
  const std::string plan = scratch_dir() + "/plan.json";
  run_cli({"inspect", model});
  std::error_code ec;
  std::filesystem::remove(plan, ec);
  const CliResult planned = run_cli({"plan", model, "-o", plan, "--time-budget", "0", "--allow-unknown-sizes"});
  if (planned.rc == 0) {
    const CliResult checked = run_cli({"validate", plan, "--allow-unknown-sizes"});
    if (checked.rc != 0) finding("a plan memplan wrote fails its own validate:\n" + checked.out, checked);
  }
  return 0;
}
