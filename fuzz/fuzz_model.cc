// Fuzz target: any bytes as a model file. `inspect` and `plan` must fail with a message or succeed, and a plan
// memplan writes must pass its own `validate`.
#include <filesystem>

#include "memplan/onnx_io/load.h"
#include "support.h"

using namespace memplan::fuzz;

// Tensors over 64 bytes are loaded without their data, as weights are: the reader's skipping is fuzzed too (small
// shape constants are still read and evaluated).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  memplan::onnx_io::set_largest_payload_kept(64);
  return 0;
}

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
