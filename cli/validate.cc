// memplan validate PLAN.json [--model MODEL]: verify a plan without running it.
#include "memplan/validate/validate.h"

#include <iostream>
#include <map>

#include "common.h"
#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/plan_doc/plan_doc.h"
#include "memplan/planner/plan_io.h"

namespace memplan::cli {
namespace {

struct ValidateArgs {
  std::string plan;
  std::string model;
  size_t show = 20;
  bool allow_unknown_sizes = false;
};

void run_validate(const ValidateArgs& args) {
  auto doc = plan_doc::read_plan_doc(read_file(args.plan), args.plan);
  auto report = validate::validate_plan(doc);
  // An incomplete plan is never silently valid: its arenas leave values out.
  auto unsized = plan_doc::unsized_allocations(doc);
  std::string incomplete;
  if (!unsized.empty()) {
    incomplete = std::to_string(unsized.size()) + " values the plan must allocate have no known size (";
    for (size_t i = 0; i < unsized.size() && i < 3; ++i)
      incomplete += (i ? ", '" : "'") + doc.values[unsized[i]].name + "'";
    incomplete += unsized.size() > 3 ? ", ...)" : ")";
    incomplete += ", so its arenas and totals leave them out";
    if (!args.allow_unknown_sizes)
      report.violations.insert(report.violations.begin(),
                               {"incomplete", incomplete + "; plan with the sizes fixed, or accept it with "
                                                           "--allow-unknown-sizes"});
  }
  if (!args.model.empty()) {
    // Cross-check against the model: the same file, and every value's name and size.
    std::string bytes = read_file(args.model);
    if (planner::sha256_hex(bytes) != doc.model_sha256)
      report.violations.push_back(
          {"model", "the plan was made from a different file than " + args.model + " (sha256 differs)"});
    // Load it with the shape options the plan was made with.
    onnx_io::LoadOptions options;
    for (const auto& [key, value] : doc.options) {
      if (key.rfind("dim ", 0) == 0)
        options.overrides.dims.insert(onnx_io::parse_dim_override(key.substr(4) + "=" + value));
      if (key.rfind("input_shape ", 0) == 0)
        options.overrides.input_shapes.insert(onnx_io::parse_input_shape(key.substr(12) + "=" + value));
      if (key.rfind("trip_count ", 0) == 0)
        options.overrides.trip_counts.insert(onnx_io::parse_trip_count(key.substr(11) + "=" + value));
    }
    Model model = onnx_io::load_model(args.model, options);
    std::map<std::string, const Value*> by_name;
    for (const Value& v : model.graph.values) by_name[v.name] = &v;
    size_t matched = 0;
    for (const auto& v : doc.values) {
      auto it = by_name.find(v.name);
      if (it == by_name.end()) continue;  // copy nodes' values exist only in the plan
      ++matched;
      if (it->second->bytes != v.bytes)
        report.violations.push_back(
            {"model", "value '" + v.name + "' has " + (v.bytes ? std::to_string(*v.bytes) : "unknown") +
                          " bytes in the plan but " +
                          (it->second->bytes ? std::to_string(*it->second->bytes) : "unknown") + " in the model"});
    }
    if (matched == 0) report.violations.push_back({"model", "no value of the plan is in " + args.model});
  }
  std::map<std::string, size_t> per_check;
  for (const auto& v : report.violations) ++per_check[v.check];
  for (size_t i = 0; i < report.violations.size() && i < args.show; ++i)
    std::cout << args.plan << ": " << report.violations[i].check << ": " << report.violations[i].message << "\n";
  if (report.violations.size() > args.show)
    std::cout << "... " << report.violations.size() - args.show << " more (--show N to see more)\n";
  char line[256];
  std::snprintf(line, sizeof line, "%s: %zu values, %zu uses, %zu regions checked in %.3f s: ", args.plan.c_str(),
                report.values_checked, report.uses_checked, report.regions_checked, report.seconds);
  std::cout << line;
  if (report.ok()) {
    std::cout << (incomplete.empty() ? "valid\n" : "valid but INCOMPLETE: " + incomplete + "\n");
    return;
  }
  std::cout << report.violations.size() << " violation(s):";
  for (const auto& [check, n] : per_check) std::cout << " " << check << " " << n;
  std::cout << "\n";
  throw Error(ExitCode::kInvalidPlan, args.plan + ": the plan is not valid");
}

}  // namespace

void register_validate(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Verify a plan file statically: definitions before uses, no live overlaps, releases after uses, offsets, "
      "arenas, kinds, completeness (exit 3 when invalid or incomplete)");
  cmd->add_option("PLAN", args->plan, "The plan (JSON) to verify (- reads it from stdin)")->required();
  cmd->add_option("--model", args->model,
                  "Also cross-check the plan against this model: same file, same names and sizes");
  cmd->add_option("--show", args->show, "How many violations to print")->capture_default_str();
  cmd->add_flag("--allow-unknown-sizes", args->allow_unknown_sizes,
                "Accept an incomplete plan (values of unknown size, written with plan --allow-unknown-sizes): it is "
                "reported as valid but INCOMPLETE instead of failing the 'incomplete' check");
  cmd->footer(
      "Examples:\n"
      "  memplan validate plan.json\n"
      "  memplan validate plan.json --model model.onnx   # also: same file, same names and sizes\n"
      "  memplan plan model.onnx -o - | memplan validate -");
  cmd->callback([args] { run_validate(*args); });
}

}  // namespace memplan::cli
