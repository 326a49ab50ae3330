// memplan diff OLD.json NEW.json: what changed between two plans of a model, as a CI gate.
// Exit 0 equal (or, with --fail-if-grows, no device grew past the threshold), 1 different, 4 a device grew
// past --fail-if-grows, 2 when the plans could not be compared (usage error or bad input): like diff(1),
// "could not compare" never reads as "different".
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "budget.h"
#include "common.h"
#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/partition/device.h"
#include "memplan/plan_doc/plan_doc.h"
#include "memplan/stage_times.h"
#include "memplan/text_escape.h"

namespace memplan::cli {
namespace {

struct DiffArgs {
  std::string old_plan, new_plan;
  bool json = false;
  bool all = false;
  size_t show = 50;
  std::vector<std::string> fail_if_grows;
};

// --fail-if-grows 5% | 10MiB | gpu:0=5% | gpu:0=10MiB: a threshold for every device or for one.
struct GrowthLimit {
  std::string text, device;  // device "" = every device
  double percent = -1;       // >= 0 when given as a percentage
  uint64_t bytes = 0;
};

GrowthLimit parse_growth(const std::string& text) {
  GrowthLimit g;
  g.text = text;
  std::string amount = text;
  if (auto eq = text.rfind('='); eq != std::string::npos) {
    auto device = partition::parse_device(text.substr(0, eq));
    if (!device) fail_usage("--fail-if-grows " + text + ": '" + text.substr(0, eq) + "' is not a device (cpu, gpu:N)");
    g.device = partition::device_name(*device);
    amount = text.substr(eq + 1);
  }
  if (!amount.empty() && amount.back() == '%') {
    try {
      size_t used = 0;
      g.percent = std::stod(amount.substr(0, amount.size() - 1), &used);
      if (used + 1 != amount.size() || g.percent < 0) throw std::invalid_argument("");
    } catch (const std::exception&) {
      fail_usage("--fail-if-grows " + text + ": '" + amount + "' is not a percentage (e.g. 5%)");
    }
  } else {
    try {
      g.bytes = parse_size(amount);
    } catch (const Error& e) {
      fail_usage("--fail-if-grows " + text + ": " + e.what());
    }
  }
  return g;
}

// "1.50 MiB (1572864 B)": readable and exact, the same for arenas, devices and values.
std::string both(uint64_t b) {
  return human_bytes(b) + (b >= 1024 ? " (" + std::to_string(b) + " B)" : "");
}
std::string both(const std::optional<uint64_t>& b) {
  return b ? both(*b) : "unknown";
}
std::string signed_delta(uint64_t from, uint64_t to) {
  return to >= from ? "+" + human_bytes(to - from) : "-" + human_bytes(from - to);
}

struct Change {
  std::string what;  // "device", "arena", "value", "model"
  std::string name, text;
  nlohmann::ordered_json detail;
};

// What diff compares of a plan (read without its nodes and steps); the rest is freed as soon as it is read.
struct ComparedPlan {
  std::string model_path, model_sha256;
  std::vector<DeviceTotal> totals;
  std::vector<plan_doc::ArenaDoc> arenas;
  std::vector<plan_doc::ValueDoc> values;  // (their uses are not read)
};

ComparedPlan read_compared_plan(const std::string& path) {
  plan_doc::PlanDoc plan = plan_doc::read_plan_summary(path);
  ComparedPlan c;
  c.totals = plan_doc::device_totals(plan);
  c.model_path = std::move(plan.model_path);
  c.model_sha256 = std::move(plan.model_sha256);
  c.arenas = std::move(plan.arenas);
  c.values = std::move(plan.values);
  return c;
}

constexpr size_t kUnmatched = static_cast<size_t>(-1);

// For each value of `old_values`, the index of its match in `new_values` (kUnmatched: removed): the same name, the
// k-th entry of a name with its k-th. Where both lists begin with the same names, each of those values matches the
// one at its own position (the k-th entry of a name there is the k-th in both); the rest go through one hash table
// of NEW's remaining names, each with the chain of its later entries.
std::vector<size_t> match_values_by_name(const std::vector<plan_doc::ValueDoc>& old_values,
                                         const std::vector<plan_doc::ValueDoc>& new_values) {
  std::vector<size_t> match_of(old_values.size(), kUnmatched);
  size_t same = 0;
  while (same < old_values.size() && same < new_values.size() && old_values[same].name == new_values[same].name) {
    match_of[same] = same;
    ++same;
  }
  if (same == old_values.size()) return match_of;
  std::unordered_map<std::string_view, size_t> first_unmatched;  // a name's next entry in NEW not yet matched
  first_unmatched.reserve(new_values.size() - same);
  std::vector<size_t> next_entry(new_values.size(), kUnmatched);  // the same name's next entry in NEW
  for (size_t j = new_values.size(); j-- > same;) {
    auto [it, added] = first_unmatched.try_emplace(new_values[j].name, j);
    if (!added) next_entry[j] = std::exchange(it->second, j);
  }
  for (size_t i = same; i < old_values.size(); ++i) {
    auto it = first_unmatched.find(old_values[i].name);
    if (it == first_unmatched.end() || it->second == kUnmatched) continue;
    match_of[i] = it->second;
    it->second = next_entry[it->second];
  }
  return match_of;
}

// 0 when the plans are equal (or, with --fail-if-grows, none grew past a limit: that throws kOverBudget), 1 when
// they differ: an outcome, not an error.
int run_diff(const DiffArgs& args) {
  if (args.old_plan == "-" && args.new_plan == "-") fail_usage("only one of OLD and NEW can be - (stdin)");
  std::vector<GrowthLimit> limits;
  for (const auto& t : args.fail_if_grows) limits.push_back(parse_growth(t));
  // One plan after the other, so an error in OLD is reported first: each read already runs on two threads (side by
  // side, the reads only shared the two cores and doubled the peak memory: 1M values, 4.1 GB against 2.2 GB).
  std::optional<TimedStage> stage(std::in_place, "read old plan");
  const ComparedPlan a = read_compared_plan(args.old_plan);
  stage.emplace("read new plan");
  ComparedPlan b = read_compared_plan(args.new_plan);
  stage.reset();  // (before the comparison's report: the status line and stdout share the terminal)

  std::vector<Change> changes;
  if (a.model_sha256 != b.model_sha256)
    changes.push_back({"model",
                       b.model_path,
                       "model: " + a.model_path + " -> " + b.model_path + " (a different file)",
                       {{"old", a.model_path}, {"new", b.model_path}}});
  // Devices first: the answer a gate needs.
  const std::vector<DeviceTotal>& ta = a.totals;
  const std::vector<DeviceTotal>& tb = b.totals;
  std::vector<std::string> grown;
  std::vector<std::string> devices;
  for (const auto& t : ta) devices.push_back(t.device);
  for (const auto& t : tb)
    if (!find_total(ta, t.device)) devices.push_back(t.device);
  nlohmann::ordered_json device_json = nlohmann::ordered_json::array();
  for (const auto& d : devices) {
    const DeviceTotal *x = find_total(ta, d), *y = find_total(tb, d);
    uint64_t from = x ? x->total() : 0, to = y ? y->total() : 0;
    bool incomplete = (x && !x->complete()) || (y && !y->complete());
    device_json.push_back({{"device", d}, {"old", from}, {"new", to}, {"complete", !incomplete}});
    if (from != to || !x || !y)
      changes.push_back({"device",
                         d,
                         "device " + d + ": " + (x ? both(from) : "absent") + " -> " + (y ? both(to) : "absent") +
                             " (" + signed_delta(from, to) + ")" + (incomplete ? " [incomplete plan]" : ""),
                         {{"old", from}, {"new", to}}});
    for (const auto& l : limits) {
      if (!l.device.empty() && l.device != d) continue;
      uint64_t allowed =
          l.percent >= 0 ? static_cast<uint64_t>(static_cast<double>(from) * l.percent / 100.0) : l.bytes;
      if (incomplete)
        grown.push_back("device " + d + ": a plan is incomplete, so its growth cannot be bounded (--fail-if-grows " +
                        l.text + ")");
      else if (to > from && to - from > allowed)
        grown.push_back("device " + d + " grew from " + both(from) + " to " + both(to) + " (" + signed_delta(from, to) +
                        "), more than --fail-if-grows " + l.text + " allows");
    }
  }
  std::map<std::string, const plan_doc::ArenaDoc*> arenas_a, arenas_b;
  for (const auto& x : a.arenas) arenas_a[x.name] = &x;
  for (const auto& x : b.arenas) arenas_b[x.name] = &x;
  for (const auto& [name, x] : arenas_a) {
    auto it = arenas_b.find(name);
    if (it == arenas_b.end()) {
      changes.push_back({"arena",
                         name,
                         "arena " + name + ": removed (was " + both(x->bytes) + ")",
                         {{"old", x->bytes}, {"new", nullptr}}});
      continue;
    }
    if (x->bytes != it->second->bytes || x->lower_bound != it->second->lower_bound)
      changes.push_back({"arena",
                         name,
                         "arena " + name + ": " + both(x->bytes) + " -> " + both(it->second->bytes) + " (" +
                             signed_delta(x->bytes, it->second->bytes) + "), lower bound " + both(x->lower_bound) +
                             " -> " + both(it->second->lower_bound),
                         {{"old", x->bytes}, {"new", it->second->bytes}}});
  }
  for (const auto& [name, x] : arenas_b)
    if (!arenas_a.count(name))
      changes.push_back(
          {"arena", name, "arena " + name + ": added (" + both(x->bytes) + ")", {{"old", nullptr}, {"new", x->bytes}}});
  // Values are matched by name; a name listed k times is matched occurrence by occurrence (its first entry in OLD
  // with its first in NEW, ...). Two plans of one model list their values in the same order, so the lists are first
  // compared in place; only when the names differ somewhere is NEW's list hashed (a million values each).
  const std::vector<size_t> match_of = match_values_by_name(a.values, b.values);
  auto bytes_json = [](const std::optional<uint64_t>& x) {
    return x ? nlohmann::ordered_json(*x) : nlohmann::ordered_json();
  };
  std::vector<bool> matched(b.values.size(), false);
  for (size_t i = 0; i < a.values.size(); ++i) {
    const plan_doc::ValueDoc& v = a.values[i];
    if (match_of[i] == kUnmatched) {
      changes.push_back({"value", v.name, "value " + v.name + ": removed", {{"old_bytes", bytes_json(v.bytes)}}});
      continue;
    }
    matched[match_of[i]] = true;
    const plan_doc::ValueDoc& w = b.values[match_of[i]];
    if (v.kind == w.kind && v.bytes == w.bytes && v.location == w.location) continue;
    std::string what;
    nlohmann::ordered_json detail = nlohmann::ordered_json::object();
    if (v.kind != w.kind) what += " kind " + v.kind + " -> " + w.kind, detail["kind"] = {v.kind, w.kind};
    if (v.bytes != w.bytes)
      what += " bytes " + both(v.bytes) + " -> " + both(w.bytes),
          detail["bytes"] = {bytes_json(v.bytes), bytes_json(w.bytes)};
    if (v.location != w.location)
      what += " location " + v.location + " -> " + w.location, detail["location"] = {v.location, w.location};
    changes.push_back({"value", v.name, "value " + v.name + ":" + what, detail});
  }
  for (size_t j = 0; j < b.values.size(); ++j)
    if (!matched[j])
      changes.push_back({"value",
                         b.values[j].name,
                         "value " + b.values[j].name + ": added",
                         {{"new_bytes", bytes_json(b.values[j].bytes)}}});

  if (args.json) {
    nlohmann::ordered_json j = {{"format", "memplan.diff"},      {"version", 1},
                                {"old", args.old_plan},          {"new", args.new_plan},
                                {"equal", changes.empty()},      {"devices", device_json},
                                {"grown_past_threshold", grown}, {"changes", nlohmann::ordered_json::array()}};
    for (const auto& c : changes) {
      nlohmann::ordered_json e = {{"what", c.what}, {"name", c.name}};
      for (const auto& [k, v] : c.detail.items()) e[k] = v;
      j["changes"].push_back(e);
    }
    std::cout << dump_json(j, 2) << "\n";
  } else {
    size_t values_shown = 0, values_total = 0;
    for (const auto& c : changes) {
      if (c.what == "value" && ++values_total > args.show && !args.all) continue;
      if (c.what == "value") ++values_shown;
      std::cout << c.text << "\n";
    }
    if (values_total > values_shown)
      std::cout << "... " << values_total - values_shown << " more values changed (--all lists every one)\n";
    std::cout << (changes.empty() ? "plans are equal in devices, arenas, kinds and sizes\n"
                                  : std::to_string(changes.size()) + " difference(s)\n");
  }
  leave_to_exit(b);
  if (!grown.empty()) {
    std::string all;
    for (const auto& g : grown) all += (all.empty() ? "" : "; ") + g;
    throw Error(ExitCode::kOverBudget, all);
  }
  return !changes.empty() && limits.empty() ? 1 : 0;
}

}  // namespace

void register_diff(CLI::App& app, int& exit_status) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "Compare two plans: device totals, arena sizes, and values whose kind, size or location changed. Exit 0 "
      "equal, 1 different, 4 grown past --fail-if-grows, 2 when they could not be compared (usage error, missing "
      "or malformed file)");
  cmd->add_option("OLD", args->old_plan, "The earlier plan (JSON; - reads stdin)")->required();
  cmd->add_option("NEW", args->new_plan, "The later plan (JSON; - reads stdin)")->required();
  cmd->add_flag("--json", args->json, "Print the differences as JSON (format memplan.diff)");
  cmd->add_flag("--all", args->all, "List every changed value (the text form shows --show of them)");
  cmd->add_option("--show", args->show, "How many changed values the text form lists")->capture_default_str();
  cmd->add_option("--fail-if-grows", args->fail_if_grows,
                  "Gate on growth instead of any difference: exit 4 when a device's total grows by more than PCT% "
                  "or SIZE, e.g. 5% or 64MiB, or per device gpu:0=5% (repeatable); other differences exit 0");
  cmd->footer(
      "Examples:\n"
      "  memplan diff last-release.json plan.json\n"
      "  memplan diff last-release.json plan.json --fail-if-grows 5%      # CI: fail on >5% growth per device\n"
      "  memplan diff old.json new.json --fail-if-grows gpu:0=64MiB --json");
  cmd->callback([args, &exit_status] { exit_status = run_diff(*args); });
}

}  // namespace memplan::cli
