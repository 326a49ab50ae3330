// memplan plan MODEL: the allocation plan, the execution plan and the arena layout.
#include <iostream>
#include <map>

#include "budget.h"
#include "common.h"
#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/planner/layout.h"
#include "memplan/planner/plan_io.h"
#include "partition_options.h"

namespace memplan::cli {
namespace {

struct PlanArgs {
  std::string model;
  std::string output = "-";
  std::string format = "json";
  std::string reuse = "memplan";
  bool no_reuse = false;
  ShapeOptions shapes;
  PartitionOptions partition;
  std::string algorithm = "auto";
  double time_budget = 1.0;
  uint64_t align = 256;
  bool pack_outputs = false;
  std::string export_problem;
  std::vector<std::string> max_arena;
};

// --max-arena DEVICE=SIZE: the device's arenas together must fit; exit 4 naming the biggest values at
// the peak when they do not (the plan is written all the same, for inspection).
void check_budgets(const PlanArgs& args, const Graph& g, const planner::Plan& plan, const planner::Layout& layout) {
  for (const auto& budget : args.max_arena) {
    auto eq = budget.rfind('=');
    if (eq == std::string::npos) fail_usage("--max-arena expects DEVICE=SIZE, e.g. gpu:0=512MiB, got '" + budget + "'");
    std::string device = budget.substr(0, eq);
    if (device == "gpu") device = "gpu:0";
    uint64_t limit = parse_size(budget.substr(eq + 1));
    uint64_t total = 0;
    std::string parts;
    for (const auto& a : layout.arenas)
      if (partition::device_name(a.location) == device) {
        total += a.bytes;
        parts += (parts.empty() ? "" : ", ") + a.name + " " + human_bytes(a.bytes);
      }
    if (parts.empty()) fail_usage("--max-arena " + budget + ": the plan has no arena on device '" + device + "'");
    if (total <= limit) continue;
    // The biggest contributors: values live at the activation arena's peak step.
    std::vector<std::pair<uint64_t, std::string>> live;
    for (const auto& a : layout.arenas) {
      if (partition::device_name(a.location) != device || a.purpose != "activations") continue;
      std::vector<int64_t> at(plan.execution_order.size() + 1, 0);
      for (const Value& v : g.values)
        if (layout.value_arena[v.index] >= 0 && layout.arenas[layout.value_arena[v.index]].name == a.name && v.bytes &&
            plan.values[v.index].inplace_of == kNoId) {
          at[std::max(0, plan.values[v.index].first_use)] += static_cast<int64_t>(*v.bytes);
          at[std::max(0, plan.values[v.index].last_use) + 1] -= static_cast<int64_t>(*v.bytes);
        }
      int peak = 0;
      int64_t run = 0, best = -1;
      for (size_t t = 0; t + 1 < at.size(); ++t)
        if ((run += at[t]) > best) best = run, peak = static_cast<int>(t);
      for (const Value& v : g.values)
        if (layout.value_arena[v.index] >= 0 && layout.arenas[layout.value_arena[v.index]].name == a.name && v.bytes &&
            plan.values[v.index].first_use <= peak && plan.values[v.index].last_use >= peak)
          live.push_back({*v.bytes, v.name});
    }
    std::sort(live.rbegin(), live.rend());
    std::string top;
    for (size_t i = 0; i < live.size() && i < 5; ++i)
      top += (i ? ", " : "") + live[i].second + " (" + human_bytes(live[i].first) + ")";
    throw Error(ExitCode::kOverBudget, "device " + device + " needs " + human_bytes(total) + " (" + parts +
                                           "), over the budget of " + human_bytes(limit) +
                                           (top.empty() ? "" : "; biggest at the peak: " + top));
  }
}

void run_plan(const PlanArgs& args) {
  planner::LayoutOptions layout_options;
  if (!planner::parse_algorithm(args.algorithm, layout_options.solve.algorithm))
    fail_usage("--arena-algorithm '" + args.algorithm + "': use best-fit, greedy-size, exact or auto");
  if (args.align == 0 || (args.align & (args.align - 1))) fail_usage("--align must be a power of two");
  layout_options.alignment = args.align;
  layout_options.pack_outputs = args.pack_outputs;
  layout_options.solve.time_budget_s = args.time_budget;
  layout_options.solve.show_progress = true;

  const std::string bytes = read_file(args.model);
  Model model = onnx_io::load_model(args.model, args.shapes.load_options());
  for (const auto& w : model.warnings) warn(args.model + ": " + w);
  auto parts = partition::partition_model(model, args.partition.request());
  for (const auto& w : parts.warnings) warn(w);

  planner::PlanOptions options;
  options.reuse = args.no_reuse         ? planner::ReuseMode::kNone
                  : args.reuse == "ort" ? planner::ReuseMode::kOrt
                                        : planner::ReuseMode::kMemplan;
  const Graph& g = parts.placed.graph;
  planner::PlanInput input{g, parts.placed.placement, parts.partition, parts.order, parts.ops, parts.opset};
  planner::Plan plan = planner::create_plan(input, options);
  planner::Layout layout = planner::compute_layout(g, plan, parts.partition, layout_options);
  auto subgraphs = planner::plan_subgraphs(g, parts.placed.placement, parts.ops, parts.opset, options);

  planner::PlanContext ctx{g,         plan,           args.model,           planner::sha256_hex(bytes),
                           {},        &layout.arenas, &layout.value_offset, &layout.value_arena,
                           &subgraphs};
  ctx.options = {{"device", args.partition.device},
                 {"order", args.partition.order},
                 {"streams_per_device", std::to_string(args.partition.streams_per_device)},
                 {"arena_algorithm", args.algorithm},
                 {"align", std::to_string(args.align)},
                 {"pack_outputs", args.pack_outputs ? "true" : "false"}};
  if (!args.partition.config.empty()) ctx.options["partition"] = args.partition.config;
  for (const auto& d : args.shapes.dims) ctx.options["dim " + d.substr(0, d.rfind('='))] = d.substr(d.rfind('=') + 1);
  for (const auto& s : args.shapes.input_shapes)
    ctx.options["input_shape " + s.substr(0, s.rfind('='))] = s.substr(s.rfind('=') + 1);

  std::string text = args.format == "text" ? planner::plan_to_text(ctx) : planner::plan_to_json(ctx);
  write_file_atomically(args.output, text);

  if (!args.export_problem.empty()) {
    int best = -1;
    for (size_t a = 0; a < layout.arenas.size(); ++a)
      if (layout.arenas[a].purpose == "activations" && (best < 0 || layout.arenas[a].bytes > layout.arenas[best].bytes))
        best = static_cast<int>(a);
    if (best < 0) fail_input(args.model, "the plan has no activation arena to export");
    auto problem = planner::arena_problem(g, plan, layout, best);
    write_file_atomically(args.export_problem, planner::write_minimalloc_csv(problem, nullptr));
  }

  // Values the plan allocates but cannot place (their size is unknown), grouped by the root cause of each.
  size_t unsized = 0;
  std::map<std::string, size_t> causes;
  for (const Value& v : g.values) {
    auto k = plan.values[v.index].kind;
    if (v.bytes || (k != planner::AllocKind::kAllocate && k != planner::AllocKind::kAllocateOutput)) continue;
    ++unsized;
    std::string why = v.unknown_reason.empty() ? "no reason recorded" : v.unknown_reason;
    if (why.rfind("follows from '", 0) == 0) why = why.substr(why.find("': ") + 3);
    ++causes[why];
  }
  if (unsized) {
    std::string text;
    for (const auto& [why, n] : causes) text += (text.empty() ? "" : "; ") + std::to_string(n) + " because " + why;
    std::string dims;
    for (ValueId id : model.graph.inputs)
      for (const Dim& d : model.graph.values[id].dims)
        if (!d.known() && !d.param.empty() && dims.find(" --dim " + d.param + "=") == std::string::npos)
          dims += " --dim " + d.param + "=...";
    warn(args.model + ": " + std::to_string(unsized) + " allocated values have no known size, so no arena offset: " +
         text + (dims.empty() ? "" : "; give" + dims) + " (memplan inspect " + args.model + " --json lists them)");
  }
  size_t reused = 0, inplace = 0, allocated = 0;
  for (const auto& v : plan.values) {
    if (v.kind == planner::AllocKind::kReuse) (v.inplace ? inplace : reused)++;
    if (v.kind == planner::AllocKind::kAllocate) ++allocated;
  }
  std::cerr << "memplan: " << g.nodes.size() << " nodes on " << plan.streams.size() << " stream(s); " << allocated
            << " Allocate, " << inplace << " in-place Reuse, " << reused << " freelist Reuse ("
            << planner::reuse_mode_name(plan.reuse) << " rules)\n";
  for (const auto& a : layout.arenas) {
    char line[256];
    std::snprintf(line, sizeof line, "memplan: arena %-14s %12s  lower bound %12s  ratio %.3f  %s%s, %zu buffers\n",
                  a.name.c_str(), human_bytes(a.bytes).c_str(), human_bytes(a.lower_bound).c_str(),
                  a.lower_bound ? static_cast<double>(a.bytes) / static_cast<double>(a.lower_bound) : 1.0,
                  a.algorithm.c_str(), a.optimal ? " (optimal)" : "", a.buffers);
    std::cerr << line;
  }
  check_budgets(args, g, plan, layout);
}

}  // namespace

void register_plan(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd =
      app.add_subcommand("plan", "Plan the model's memory: kinds, reuse, releases, stream steps, arena offsets");
  cmd->add_option("MODEL", args->model, "The .onnx model file")->required();
  cmd->add_option("-o,--output", args->output, "Where to write the plan (default: stdout)");
  cmd->add_option("--format", args->format,
                  "json (the versioned plan, docs/plan-format.md) or text (ORT's printout layout)")
      ->check(CLI::IsMember({"json", "text"}))
      ->capture_default_str();
  args->shapes.add_to(*cmd);
  args->partition.add_to(*cmd, true);
  cmd->add_option("--reuse", args->reuse,
                  "Reuse rules: memplan (default: ORT's, plus same-size reuse across shapes and multi-stream reuse "
                  "checked by happens-before) or ort (ORT's allocation_planner exactly)")
      ->check(CLI::IsMember({"memplan", "ort"}))
      ->capture_default_str();
  cmd->add_flag("--no-reuse", args->no_reuse, "No freelist reuse (ORT's enable_mem_reuse = false)");
  cmd->add_option("--arena-algorithm", args->algorithm,
                  "Offset assignment: best-fit (ORT's memory pattern), greedy-size, exact (branch and bound), or auto "
                  "(the best heuristic, improved by exact within --time-budget)")
      ->capture_default_str();
  cmd->add_option("--time-budget", args->time_budget, "Seconds the exact search may take per arena")
      ->capture_default_str();
  cmd->add_option("--align", args->align, "Alignment of every buffer in bytes (ORT: 256)")->capture_default_str();
  cmd->add_flag("--pack-outputs", args->pack_outputs, "Put graph outputs in the activation arena instead of their own");
  cmd->add_option(
      "--max-arena", args->max_arena,
      "A memory budget per device, e.g. --max-arena gpu:0=512MiB or cpu=2GB: exit 4 when the device's arenas "
      "together exceed it (repeatable)");
  cmd->add_option(
      "--export-problem", args->export_problem,
      "Also write the largest activation arena's problem as MiniMalloc CSV (id,lower,upper,size,alignment)");
  cmd->callback([args] { run_plan(*args); });
}

}  // namespace memplan::cli
