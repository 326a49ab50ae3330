#include "memplan/device_totals.h"

#include <algorithm>
#include <cstdio>

namespace memplan {

DeviceTotal& total_for(std::vector<DeviceTotal>& totals, const std::string& device) {
  for (DeviceTotal& t : totals)
    if (t.device == device) return t;
  totals.push_back({});
  totals.back().device = device;
  return totals.back();
}

const DeviceTotal* find_total(const std::vector<DeviceTotal>& totals, const std::string& device) {
  for (const DeviceTotal& t : totals)
    if (t.device == device) return &t;
  return nullptr;
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

nlohmann::ordered_json device_total_json(const DeviceTotal& t) {
  return {{"device", t.device},   {"total", t.total()}, {"activations", t.activations}, {"outputs", t.outputs},
          {"weights", t.weights}, {"inputs", t.inputs}, {"complete", t.complete()}};
}

std::string human_bytes(uint64_t bytes, bool compact) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) v /= 1024, ++u;
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.*f %s", compact ? (v >= 100 ? 0 : v >= 10 ? 1 : 2) : 2, v, units[u]);
  return buf;
}

}  // namespace memplan
