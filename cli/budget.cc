#include "budget.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "common.h"
#include "memplan/error.h"
#include "memplan/partition/device.h"
#include "memplan/suggest.h"

namespace memplan::cli {

uint64_t parse_size(const std::string& text) {
  // A plain decimal number (digits, at most one point), then a unit.
  size_t i = 0, points = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    points += text[i++] == '.';
  const std::string digits = text.substr(0, i);
  if (digits.empty() || points > 1 || digits == ".")
    fail_usage("'" + text + "' is not a size (e.g. 512MiB, 2GB, 1000000)");
  const double number = std::strtod(digits.c_str(), nullptr);
  std::string unit = text.substr(i);
  static const std::map<std::string, double> units = {{"", 1},
                                                      {"B", 1},
                                                      {"KiB", 1024.0},
                                                      {"MiB", 1024.0 * 1024},
                                                      {"GiB", 1024.0 * 1024 * 1024},
                                                      {"TiB", 1024.0 * 1024 * 1024 * 1024},
                                                      {"KB", 1e3},
                                                      {"MB", 1e6},
                                                      {"GB", 1e9},
                                                      {"TB", 1e12}};
  auto it = units.find(unit);
  if (it == units.end()) {
    std::vector<std::string> names;
    for (const auto& [u, f] : units) names.push_back(u);
    std::string hint = unit.size() == 1
                           ? " Did you mean '" + unit + "iB' (powers of 1024) or '" + unit + "B' (powers of 1000)?"
                           : did_you_mean(unit, names);
    fail_usage("'" + text + "': unknown unit '" + unit + "' (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)." + hint);
  }
  const double bytes = number * it->second;
  // (doubles hold integers exactly to 2^53; past 2^63 the cast would be undefined)
  if (!(bytes < 9.2e18)) fail_usage("'" + text + "' is too large (at most 8 EiB)");
  return static_cast<uint64_t>(bytes);
}

Budget parse_budget(const std::string& text) {
  auto eq = text.rfind('=');
  if (eq == std::string::npos)
    fail_usage("--max-arena expects DEVICE=SIZE, e.g. gpu:0=512MiB or cpu=2GB, got '" + text + "'");
  Budget b;
  b.text = text;
  auto device = partition::parse_device(text.substr(0, eq));
  if (!device)
    fail_usage("--max-arena " + text + ": '" + text.substr(0, eq) + "' is not a device; use cpu, gpu or gpu:N");
  b.device = partition::device_name(*device);
  try {
    b.limit = parse_size(text.substr(eq + 1));
  } catch (const Error& e) {
    fail_usage("--max-arena " + text + ": " + e.what());
  }
  return b;
}

std::string total_breakdown(const DeviceTotal& t) {
  std::string out;
  auto part = [&](const char* name, uint64_t bytes) {
    if (bytes) out += (out.empty() ? "" : ", ") + std::string(name) + " " + human_bytes(bytes);
  };
  part("activations", t.activations);
  part("outputs", t.outputs);
  part("weights", t.weights);
  part("inputs", t.inputs);
  if (!t.complete()) out += (out.empty() ? "" : ", ") + std::to_string(t.unsized) + " values of unknown size left out";
  return out.empty() ? "nothing" : out;
}

std::string budget_failure(const Budget& b, const std::vector<DeviceTotal>& totals) {
  const DeviceTotal* t = find_total(totals, b.device);
  if (!t) {
    std::string list;
    for (const DeviceTotal& x : totals) list += (list.empty() ? "" : ", ") + x.device;
    return "--max-arena " + b.text + ": the plan puts nothing on device " + b.device + " (its devices: " + list + ")";
  }
  if (!t->complete())
    return "device " + b.device + ": the plan is incomplete (" + std::to_string(t->unsized) +
           " values of unknown size), so it cannot be shown to fit the budget of " + human_bytes(b.limit) +
           "; it needs at least " + human_bytes(t->total()) + " (" + total_breakdown(*t) + ")";
  if (t->total() <= b.limit) return "";
  return "device " + b.device + " needs " + human_bytes(t->total()) + " (" + total_breakdown(*t) +
         "), over the budget of " + human_bytes(b.limit);
}

std::string biggest_at_peak(const planner::PlannedModel& planned, const std::string& device) {
  const Graph& g = planned.graph();
  const auto& plan = planned.plan;
  const auto& layout = planned.layout;
  std::vector<std::pair<uint64_t, std::string>> live;
  for (size_t ai = 0; ai < layout.arenas.size(); ++ai) {
    const auto& a = layout.arenas[ai];
    if (partition::device_name(a.location) != device || a.purpose != "activations") continue;
    auto in_arena = [&](const Value& v) { return layout.value_arena[v.index] == static_cast<int>(ai) && v.bytes; };
    std::vector<int64_t> at(plan.execution_order.size() + 1, 0);
    for (const Value& v : g.values)
      if (in_arena(v) && plan.values[v.index].inplace_of == kNoId) {
        at[std::max(0, plan.values[v.index].first_use)] += static_cast<int64_t>(*v.bytes);
        at[std::max(0, plan.values[v.index].last_use) + 1] -= static_cast<int64_t>(*v.bytes);
      }
    int peak = 0;
    int64_t run = 0, best = -1;
    for (size_t t = 0; t + 1 < at.size(); ++t)
      if ((run += at[t]) > best) best = run, peak = static_cast<int>(t);
    for (const Value& v : g.values)
      if (in_arena(v) && plan.values[v.index].first_use <= peak && plan.values[v.index].last_use >= peak)
        live.push_back({*v.bytes, v.name});
  }
  std::sort(live.rbegin(), live.rend());
  std::string top;
  for (size_t i = 0; i < live.size() && i < 5; ++i)
    top += (i ? ", " : "") + live[i].second + " (" + human_bytes(live[i].first) + ")";
  return top.empty() ? "" : "; biggest at the peak: " + top;
}

}  // namespace memplan::cli
