#include "memplan/partition/provider.h"

#include "builtin_data.h"

namespace memplan::partition {

const std::vector<Provider>& providers() {
  static const std::vector<Provider> table = {
      {DeviceType::kCpu, "cpu", /*numbered=*/false, "cpu", "CPUExecutionProvider", /*selectable=*/true,
       /*builtin_rules=*/nullptr, "", /*has_wait_handle=*/false},
      {DeviceType::kGpu, "gpu", true, "cuda", "CUDAExecutionProvider", true, kBuiltinCudaPlacement,
       "data/placement/cuda.json", true},
      // ORT's partition configs number these device types; memplan has no rules or op facts for them.
      {DeviceType::kFpga, "fpga", true, "fpga", "FPGAExecutionProvider", false, nullptr, "", true},
      {DeviceType::kNpu, "npu", true, "npu", "NPUExecutionProvider", false, nullptr, "", true},
  };
  return table;
}

// By index: the plan writer names every value's device through it (a million times at 1M nodes). The rows are in the
// enum's order (the [partition] test checks it).
const Provider& provider(DeviceType type) {
  const std::vector<Provider>& rows = providers();
  const auto i = static_cast<size_t>(type);
  return i < rows.size() ? rows[i] : rows.front();
}

}  // namespace memplan::partition
