// memplan validate PLAN.json [--model MODEL]: verify a plan without running it.
#include <iostream>
#include <map>
#include <optional>

#include "common.h"
#include "memplan/api/internal.h"
#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/memplan.h"
#include "memplan/plan_doc/plan_doc.h"
#include "memplan/stage_times.h"

namespace memplan::cli {
namespace {

struct ValidateArgs {
  std::string plan;
  std::string model;
  size_t show = 20;
  bool allow_unknown_sizes = false;
};

void run_validate(const ValidateArgs& args) {
  std::optional<TimedStage> stage(std::in_place, "read plan");
  plan_doc::PlanDoc plan = plan_doc::read_plan_file(args.plan);
  stage.emplace("check plan");
  const Validation report = api::check_plan_doc(plan, {args.model, args.allow_unknown_sizes});
  stage.reset();
  leave_to_exit(plan);
  const std::string& incomplete = report.incomplete;
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
  if (report.valid()) {
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
