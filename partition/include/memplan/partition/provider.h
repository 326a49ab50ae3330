// What memplan knows of each execution provider, one row per device type: its names (memplan's, the op table's,
// ORT's), whether --device and placement files may name it, its built-in placement rules and how ORT synchronises
// its streams. A new provider is a row of providers() (provider.cc) and, where memplan should place ops on it, a
// rules file under data/placement/.
#pragma once

#include <string_view>
#include <vector>

#include "memplan/partition/device.h"

namespace memplan::partition {

struct Provider {
  DeviceType type;
  std::string_view device_word;  // memplan's name of the device: "cpu", "gpu" (device_name adds ":N" when numbered)
  bool numbered;                 // device names carry an id ("gpu:0"); the CPU is one device, "cpu"
  std::string_view op_table;     // the op table's provider column ("cpu", "cuda": data/op_properties.json)
  std::string_view ort_type;     // ORT's provider type ("CUDAExecutionProvider": copy nodes' names, configs)
  bool selectable;               // --device and placement files may name it (by device_word or op_table)
  // The built-in placement rules (data/placement/*.json) used when a run targets this device without a rules file;
  // nullptr: every node on the device, no CPU fallback.
  const char* builtin_rules;
  std::string_view builtin_rules_source;  // the rules' file, for messages
  // ORT registers a wait handle for notifications from this provider's streams (CUDA's events, on the device and on
  // the host), so its consumers on other streams wait; a CPU stream's work is done when its kernel returns.
  bool has_wait_handle;
};

// Every provider, one row per DeviceType, in the enum's order.
const std::vector<Provider>& providers();

// The row of `type` (the CPU's for a value outside the enum).
const Provider& provider(DeviceType type);

}  // namespace memplan::partition
