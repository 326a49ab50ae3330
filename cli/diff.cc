// memplan diff OLD.json NEW.json: what changed between two plans of a model (exit 0 equal, 1 different).
#include <iostream>
#include <map>

#include "budget.h"
#include "common.h"
#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/plan_doc/plan_doc.h"

namespace memplan::cli {

uint64_t parse_size(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) fail_usage("'" + text + "' is not a size (e.g. 512MiB, 2GB, 1000000)");
  double number = std::stod(text.substr(0, i));
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
  if (it == units.end()) fail_usage("'" + text + "': unknown unit '" + unit + "' (use B, KiB, MiB, GiB, KB, MB, GB)");
  return static_cast<uint64_t>(number * it->second);
}

namespace {

struct DiffArgs {
  std::string old_plan, new_plan;
};

void run_diff(const DiffArgs& args) {
  auto a = plan_doc::read_plan_doc(read_file(args.old_plan), args.old_plan);
  auto b = plan_doc::read_plan_doc(read_file(args.new_plan), args.new_plan);
  size_t changes = 0;
  auto say = [&](const std::string& line) {
    std::cout << line << "\n";
    ++changes;
  };
  if (a.model_sha256 != b.model_sha256) say("model: " + a.model_path + " -> " + b.model_path + " (a different file)");
  std::map<std::string, const plan_doc::ArenaDoc*> arenas_a, arenas_b;
  for (const auto& x : a.arenas) arenas_a[x.name] = &x;
  for (const auto& x : b.arenas) arenas_b[x.name] = &x;
  for (const auto& [name, x] : arenas_a) {
    auto it = arenas_b.find(name);
    if (it == arenas_b.end()) {
      say("arena " + name + ": removed (was " + human_bytes(x->bytes) + ")");
      continue;
    }
    if (x->bytes != it->second->bytes || x->lower_bound != it->second->lower_bound) {
      long long d = static_cast<long long>(it->second->bytes) - static_cast<long long>(x->bytes);
      say("arena " + name + ": " + human_bytes(x->bytes) + " -> " + human_bytes(it->second->bytes) + " (" +
          (d >= 0 ? "+" : "-") + human_bytes(static_cast<uint64_t>(d >= 0 ? d : -d)) + "), lower bound " +
          human_bytes(x->lower_bound) + " -> " + human_bytes(it->second->lower_bound));
    }
  }
  for (const auto& [name, x] : arenas_b)
    if (!arenas_a.count(name)) say("arena " + name + ": added (" + human_bytes(x->bytes) + ")");
  std::map<std::string, const plan_doc::ValueDoc*> values_b;
  for (const auto& v : b.values) values_b[v.name] = &v;
  size_t value_changes = 0;
  for (const auto& v : a.values) {
    auto it = values_b.find(v.name);
    if (it == values_b.end()) {
      if (value_changes++ < 50) say("value " + v.name + ": removed");
      continue;
    }
    const auto& w = *it->second;
    std::string what;
    if (v.kind != w.kind) what += " kind " + v.kind + " -> " + w.kind;
    if (v.bytes != w.bytes)
      what +=
          " bytes " + (v.bytes ? std::to_string(*v.bytes) : "?") + " -> " + (w.bytes ? std::to_string(*w.bytes) : "?");
    if (v.location != w.location) what += " location " + v.location + " -> " + w.location;
    if (!what.empty() && value_changes++ < 50) say("value " + v.name + ":" + what);
  }
  for (const auto& v : b.values)
    if (!std::any_of(a.values.begin(), a.values.end(), [&](const auto& x) { return x.name == v.name; }) &&
        value_changes++ < 50)
      say("value " + v.name + ": added");
  if (value_changes > 50)
    std::cout << "... " << value_changes - 50 << " more values changed\n", changes += value_changes - 50;
  if (changes == 0) {
    std::cout << "plans are equal in arenas, kinds and sizes\n";
    return;
  }
  std::cout << changes << " difference(s)\n";
  throw Error(ExitCode::kBadInput, "plans differ");
}

}  // namespace

void register_diff(CLI::App& app) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = app.add_subcommand("diff",
                                     "Compare two plans: arena sizes, and values whose kind, size or location changed "
                                     "(exit 0 when equal, 1 when different)");
  cmd->add_option("OLD", args->old_plan, "The earlier plan (JSON)")->required();
  cmd->add_option("NEW", args->new_plan, "The later plan (JSON)")->required();
  cmd->callback([args] { run_diff(*args); });
}

}  // namespace memplan::cli
