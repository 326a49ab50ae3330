// Devices as ONNX Runtime numbers them in partition configs: 0 CPU, 1 GPU, 2 FPGA, 3 NPU, plus an id.
#pragma once

#include <optional>
#include <string>

namespace memplan::partition {

enum class DeviceType : int { kCpu = 0, kGpu = 1, kFpga = 2, kNpu = 3 };

struct Device {
  DeviceType type = DeviceType::kCpu;
  int id = 0;
  auto operator<=>(const Device&) const = default;
};

std::string device_name(Device d);            // "cpu", "gpu:0", "fpga:0", "npu:0"
std::string provider_name(DeviceType t);      // the op-table provider: "cpu", "cuda", "fpga", "npu"
std::string ort_provider_type(DeviceType t);  // "CPUExecutionProvider", "CUDAExecutionProvider", ...
// "cpu", "gpu", "gpu:1", "cuda", "cuda:1"; std::nullopt otherwise.
std::optional<Device> parse_device(const std::string& text);

}  // namespace memplan::partition
