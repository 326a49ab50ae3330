// Fuzz target: any bytes as one of the JSON files `plan` and `partition` read: an ONNX Runtime partition config,
// placement rules, or an op-properties table (the first byte chooses), applied to a bundled sample model.
#include "support.h"

using namespace memplan::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const std::string model = write_scratch("model.onnx", source_file("samples/branches.onnx"));
  const std::string file = write_scratch("config.json", data + 1, size - 1);
  static const char* const options[] = {"--partition", "--placement", "--op-properties"};
  const std::string option = options[data[0] % 3];
  const std::string device = data[0] & 4 ? "gpu" : "cpu";
  run_cli({"partition", model, option, file, "--device", device, "-o", scratch_dir() + "/out.json"});
  run_cli({"plan", model, option, file, "--device", device, "--time-budget", "0", "-o", scratch_dir() + "/plan.json"});
  return 0;
}
