// One answer per device: the bytes a device needs, split by what they hold. Both the planner (from its
// layout) and the plan reader (from a plan file) fill these, so `plan` and `inspect` agree by construction.
//
// What the figures cover: the arenas memplan lays out (activations, graph outputs, weights) and the graph
// inputs the caller provides on that device. What they do not: kernel scratch and workspaces (cuDNN, cuBLAS),
// the CUDA context, ORT's arena growth policy (its BFC arena rounds and extends in chunks), and the memory of
// If/Loop/Scan bodies beyond their outer values.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace memplan {

struct DeviceTotal {
  std::string device;  // "cpu", "gpu:0", ...
  uint64_t activations = 0, outputs = 0, weights = 0, inputs = 0;
  size_t unsized = 0;  // values on this device that need memory but have no known size: figures are lower bounds
  uint64_t total() const { return activations + outputs + weights + inputs; }
  bool complete() const { return unsized == 0; }
};

// The entry for `device`, appended if missing.
DeviceTotal& total_for(std::vector<DeviceTotal>& totals, const std::string& device);

// The entry for `device`, or nullptr.
const DeviceTotal* find_total(const std::vector<DeviceTotal>& totals, const std::string& device);

// Adds an arena's bytes under its purpose ("activations", "outputs", "weights"; "bodies" counts as activations).
void add_arena_bytes(std::vector<DeviceTotal>& totals, const std::string& device, const std::string& purpose,
                     uint64_t bytes);

// Largest total first, then by device name: the order every report uses.
void sort_by_total(std::vector<DeviceTotal>& totals);

// {"device", "total", "activations", "outputs", "weights", "inputs", "complete"}: the form of every JSON report.
nlohmann::ordered_json device_total_json(const DeviceTotal& total);

// "1.50 MiB" (two decimals; "512 B" below a KiB). compact: "1.5 MiB", "118 MiB" (three significant digits), for
// pictures.
std::string human_bytes(uint64_t bytes, bool compact = false);

}  // namespace memplan
