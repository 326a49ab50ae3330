#include "memplan/device_totals.h"

#include <algorithm>

namespace memplan {

DeviceTotal& total_for(std::vector<DeviceTotal>& totals, const std::string& device) {
  for (DeviceTotal& t : totals)
    if (t.device == device) return t;
  totals.push_back({});
  totals.back().device = device;
  return totals.back();
}

void add_arena_bytes(std::vector<DeviceTotal>& totals, const std::string& device, const std::string& purpose,
                     uint64_t bytes) {
  DeviceTotal& t = total_for(totals, device);
  (purpose == "outputs" ? t.outputs : purpose == "weights" ? t.weights : t.activations) += bytes;
}

void sort_by_total(std::vector<DeviceTotal>& totals) {
  std::stable_sort(totals.begin(), totals.end(), [](const DeviceTotal& a, const DeviceTotal& b) {
    return a.total() != b.total() ? a.total() > b.total() : a.device < b.device;
  });
}

}  // namespace memplan
