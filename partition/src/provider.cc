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

const Provider& provider(DeviceType type) {
  for (const Provider& p : providers())
    if (p.type == type) return p;
  return providers().front();
}

}  // namespace memplan::partition
