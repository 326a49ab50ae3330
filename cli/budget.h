// Sizes on the command line ("512MiB", "2GB", "1000") and the --max-arena budget check.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memplan/device_totals.h"
#include "memplan/planner/pipeline.h"

namespace memplan::cli {

// Bytes from "1234", "64KiB", "512MiB", "2GiB", "1.5GB" (KB/MB/GB are powers of 1000). Throws Error(kUsage).
uint64_t parse_size(const std::string& text);

// --max-arena DEVICE=SIZE, parsed before any work.
struct Budget {
  std::string text;    // as given, for messages
  std::string device;  // canonical: "gpu:0", "cpu"
  uint64_t limit = 0;
};
Budget parse_budget(const std::string& text);  // throws Error(kUsage) with an example

// "" when the device's total fits; otherwise why not (over the limit, no such device, or unknown because
// values have no size: an incomplete plan never passes a budget).
std::string budget_failure(const Budget& budget, const std::vector<DeviceTotal>& totals);

// "activations 1.00 MiB, outputs ..., weights ..., inputs ..." (parts that are zero left out).
std::string total_breakdown(const DeviceTotal& total);

// "; biggest at the peak: a (1 MiB), b (...)": the values live at the device's activation peak.
std::string biggest_at_peak(const planner::PlannedModel& planned, const std::string& device);

}  // namespace memplan::cli
