// memplan corrupt PLAN.json --kind K --seed S -o OUT.json: a deliberately broken plan, for checking that
// `validate` and `replay` catch each kind of mistake.
#include "memplan/plan_doc/corrupt.h"

#include <iostream>
#include <optional>
#include <string_view>
#include <vector>

#include "common.h"
#include "memplan/enum_names.h"
#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/plan_doc/plan_doc.h"
#include "memplan/stage_times.h"
#include "memplan/text_escape.h"

namespace memplan::cli {
namespace {

struct CorruptArgs {
  std::string plan, output = "-", kind;
  uint64_t seed = 0;
  int body = -1;
};

// "offset, wait, ... or staging": every kind corrupt_plan knows, in its order.
std::string kind_names() {
  std::vector<std::string_view> names;
  for (plan_doc::Corruption kind : plan_doc::all_corruptions()) names.push_back(plan_doc::corruption_name(kind));
  return alternatives_text(names);
}

void run_corrupt(const CorruptArgs& args) {
  plan_doc::Corruption kind;
  if (!plan_doc::parse_corruption(args.kind, kind)) fail_usage("--kind '" + args.kind + "': use " + kind_names());
  // Chosen on the plan as read, made as edits of its text: no tree of a gigabyte plan, no byte changed but the edited.
  std::optional<TimedStage> stage(std::in_place, "read plan");
  InputText text(args.plan);
  plan_doc::PlanDoc plan = plan_doc::read_plan_input(text, args.plan);
  stage.emplace("write corrupted copy");
  if (args.body >= plan_doc::count_bodies(plan))
    fail_input(args.plan, "--body " + std::to_string(args.body) + ": the plan has " +
                              std::to_string(plan_doc::count_bodies(plan)) + " If/Loop/Scan bodies (numbered from 0)");
  const std::optional<plan_doc::ChosenCorruption> chosen =
      plan_doc::choose_corruption(plan, kind, args.seed, args.body);
  if (!chosen)
    fail_input(args.plan,
               "the plan has no place for a '" + args.kind + "' corruption (e.g. no WaitOnEP in a CPU plan)");
  const plan_doc::EditedText edited = plan_doc::edit_text(text.text(), text.text().size() + kInputPadding,
                                                          chosen->edits, args.plan, &plan.sections, text.writable());
  write_pieces_atomically(args.output, edited.pieces);
  stage.reset();
  std::cerr << "memplan: " << chosen->what << "\n";
  leave_to_exit(plan);
}
}  // namespace

void register_corrupt(CLI::App& app) {
  auto args = std::make_shared<CorruptArgs>();
  CLI::App* cmd = app.add_subcommand("corrupt", "Testing aid: write a copy of a plan with one deliberate mistake");
  cmd->add_option("PLAN", args->plan, "A valid plan (JSON)")->required();
  cmd->add_option("--kind", args->kind,
                  kind_names() + " (copy-wait and staging: plans made with --offload; workspace: plans with bodies)")
      ->required();
  cmd->add_option("--seed", args->seed, "Chooses where the mistake goes")->capture_default_str();
  cmd->add_option("--body", args->body,
                  "Put the mistake into this If/Loop/Scan body's plan (bodies numbered from 0, depth first)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-o,--output", args->output, "Where to write the broken plan (default: stdout)")
      ->check(output_path());
  cmd->footer(
      "Example:\n"
      "  memplan corrupt plan.json --kind offset -o bad.json && memplan validate bad.json   # exits 3");
  cmd->callback([args] { run_corrupt(*args); });
}

}  // namespace memplan::cli
