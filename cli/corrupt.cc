// memplan corrupt PLAN.json --kind K --seed S -o OUT.json: a deliberately broken plan, for checking that
// `validate` and `replay` catch each kind of mistake.
#include "memplan/plan_doc/corrupt.h"

#include <iostream>
#include <nlohmann/json.hpp>

#include "common.h"
#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/file_kind.h"
#include "memplan/json_input.h"
#include "memplan/plan_doc/plan_doc.h"
#include "memplan/text_escape.h"

namespace memplan::cli {
namespace {

struct CorruptArgs {
  std::string plan, output = "-", kind;
  uint64_t seed = 0;
  int body = -1;
};

void run_corrupt(const CorruptArgs& args) {
  plan_doc::Corruption kind;
  if (!plan_doc::parse_corruption(args.kind, kind))
    fail_usage("--kind '" + args.kind + "': use offset, wait, barrier, release, shrink, misalign, kind or workspace");
  nlohmann::ordered_json j;
  {
    const std::string text = read_file(args.plan);
    // Checked first (corrupt_plan edits a well-formed plan), then parsed into the tree it edits. Keys come out in
    // the tree's order: memplan writes them in byte order anyway.
    plan_doc::read_plan_doc(text, args.plan);
    j = parse_json_input<nlohmann::ordered_json>(text, args.plan);
  }
  std::string what;
  if (args.body >= plan_doc::count_bodies(j))
    fail_input(args.plan, "--body " + std::to_string(args.body) + ": the plan has " +
                              std::to_string(plan_doc::count_bodies(j)) + " If/Loop/Scan bodies (numbered from 0)");
  if (!plan_doc::corrupt_plan(j, kind, args.seed, what, args.body))
    fail_input(args.plan,
               "the plan has no place for a '" + args.kind + "' corruption (e.g. no WaitOnEP in a CPU plan)");
  write_file_atomically(args.output, dump_json(j, 1) + "\n");
  std::cerr << "memplan: " << what << "\n";
}

}  // namespace

void register_corrupt(CLI::App& app) {
  auto args = std::make_shared<CorruptArgs>();
  CLI::App* cmd = app.add_subcommand("corrupt", "Testing aid: write a copy of a plan with one deliberate mistake");
  cmd->add_option("PLAN", args->plan, "A valid plan (JSON)")->required();
  cmd->add_option("--kind", args->kind, "offset, wait, barrier, release, shrink, misalign, kind or workspace")
      ->required();
  cmd->add_option("--seed", args->seed, "Chooses where the mistake goes")->capture_default_str();
  cmd->add_option("--body", args->body,
                  "Put the mistake into this If/Loop/Scan body's plan (bodies numbered from 0, depth first)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-o,--output", args->output, "Where to write the broken plan (default: stdout)");
  cmd->footer(
      "Example:\n"
      "  memplan corrupt plan.json --kind offset -o bad.json && memplan validate bad.json   # exits 3");
  cmd->callback([args] { run_corrupt(*args); });
}

}  // namespace memplan::cli
