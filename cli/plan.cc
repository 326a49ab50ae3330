// memplan plan MODEL: the allocation plan, the execution plan and the arena layout; with a swept --dim
// (batch=1,8,32), one plan per value and a table of device totals.
#include <unistd.h>

#include <cmath>
#include <future>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "../replay/replay_cli.h"
#include "budget.h"
#include "common.h"
#include "memplan/api/internal.h"
#include "memplan/arena/csv.h"
#include "memplan/arena/solve.h"
#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/offload/offload_model.h"
#include "memplan/plan_doc/recorded_options.h"
#include "memplan/planner/pipeline.h"
#include "memplan/planner/plan_io.h"
#include "memplan/stage_times.h"
#include "memplan/text_escape.h"
#include "partition_options.h"

namespace memplan::cli {
namespace {

struct PlanArgs {
  std::string model;
  std::string output;
  std::string format;  // json or text; "" = json for a plan, text for a sweep table
  std::string reuse = "memplan";
  bool no_reuse = false;
  ShapeOptions shapes;
  PartitionOptions partition;
  std::string algorithm = "auto";
  double time_budget = 1.0;
  uint64_t align = 256;
  bool pack_outputs = false;
  bool allow_unknown_sizes = false;
  std::string like;
  std::string export_problem;
  std::vector<std::string> max_arena;
  std::string offload;        // "", "all" or "weights"
  double host_gb_per_s = 25;  // --host-bandwidth
  bool timings = false;
};

// Everything the options decide, checked before any work.
struct PlanSetup {
  planner::PlanRequest request;
  std::vector<Budget> budgets;
  std::vector<std::vector<std::string>> points;    // --dim values per plan; one entry unless sweeping
  std::optional<offload::OffloadOptions> offload;  // --offload: the device and budget it plans for
};

PlanSetup check_options(const PlanArgs& args) {
  PlanSetup s;
  PlanSettings settings;
  settings.device = args.partition.device;
  settings.streams_per_device = args.partition.streams_per_device;
  settings.order = args.partition.order;
  settings.partition_config = args.partition.config;
  settings.placement = args.partition.placement;
  settings.op_properties = args.partition.op_properties;
  settings.like = args.like;
  settings.reuse = args.no_reuse ? "none" : args.reuse;
  settings.arena_algorithm = args.algorithm;
  settings.time_budget_s = args.time_budget;
  settings.alignment = args.align;
  settings.pack_outputs = args.pack_outputs;
  settings.allow_unknown_sizes = args.allow_unknown_sizes;
  s.request = api::plan_request(settings);
  s.request.layout.solve.show_progress = true;
  for (const auto& b : args.max_arena) s.budgets.push_back(parse_budget(b));
  s.points = args.shapes.sweep_points();
  bool sweep = s.points.size() > 1;
  if (!args.offload.empty()) {
    // One device's budget to plan for: the one --max-arena names that is not the host.
    const Budget* target = nullptr;
    for (const Budget& b : s.budgets)
      if (b.device != "cpu") {
        if (target) fail_usage("--offload plans one device; --max-arena names " + target->device + " and " + b.device);
        target = &b;
      }
    if (!target)
      fail_usage(
          "--offload needs the device's budget: --max-arena gpu:0=SIZE (the host is where buffers go, so a "
          "cpu budget cannot be met by offload)");
    if (sweep) fail_usage("--offload plans one point; not with a swept --dim");
    if (args.partition.streams_per_device != 1)
      fail_usage("--offload plans a device with one compute stream for now (--streams-per-device 1)");
    if (!(args.host_gb_per_s > 0) || !std::isfinite(args.host_gb_per_s) || args.host_gb_per_s > 1e6) {
      char given[32];
      std::snprintf(given, sizeof given, "%g", args.host_gb_per_s);
      fail_usage(std::string("--host-bandwidth must be a number of GB/s above 0 and at most 1000000, got ") + given);
    }
    offload::OffloadOptions o;
    o.device = *partition::parse_device(target->device);
    o.budget = target->limit;
    o.scope = args.offload == "weights" ? offload::Scope::kWeights : offload::Scope::kAll;
    o.bytes_per_us = args.host_gb_per_s * 1e3;  // GB/s = 1e9 bytes / 1e6 us
    s.offload = o;
  }
  if (sweep && !args.export_problem.empty()) fail_usage("--export-problem writes one plan's problem; not with a sweep");
  // A plan is megabytes of JSON: never pour it onto a terminal unasked.
  if (!sweep && args.output.empty() && args.format != "text" && isatty(STDOUT_FILENO))
    fail_usage("the plan is JSON meant for files: write it with -o PLAN.json, or give -o - to print it here");
  return s;
}

// What ORT's rules would need on `device` (pipeline.h), or nullptr.
const DeviceTotal* ort_total(const planner::PlannedModel& planned, const std::string& device) {
  return planned.ort_rules ? find_total(*planned.ort_rules, device) : nullptr;
}

// The shapes ORT's load sees: no --dim, so one load serves every point of a sweep. Loaded with the first point's
// model (its child infers ORT's view after the model, while the model is planned).
class OrtView {
 public:
  // The model at `dims`, and ORT's view too the first time.
  Model load(const PlanArgs& args, const std::vector<std::string>& dims) {
    const onnx_io::LoadOptions options = args.shapes.load_options(dims);
    if (shapes_) return onnx_io::load_model(args.model, options);
    onnx_io::ModelAndOrtView both = onnx_io::load_model_and_ort_view(args.model, options);
    shapes_ = std::move(both.ort_shapes);
    return std::move(both.model);
  }
  // For PlanRequest::ort_shapes.
  std::function<const ShapeView*()> get() const {
    return [shapes = shapes_] { return shapes ? shapes->get() : nullptr; };
  }
  // Once, after a plan that asked for ORT's view: a warning when it could not be read.
  void warn_if_unread(const std::string& model) {
    if (warned_ || !shapes_) return;
    const std::string warning = shapes_->unread_warning(model);
    if (warning.empty()) return;
    warned_ = true;
    warn(warning);
  }

 private:
  std::shared_ptr<onnx_io::OrtShapes> shapes_;
  bool warned_ = false;
};

// One plan: load, plan, and report on stderr. Throws for an incomplete plan unless allowed.
// `planned`: called with the plan before ORT's estimate is waited for (PlanRequest::planned), unless offload plans.
planner::PlannedModel plan_point(const PlanArgs& args, const PlanSetup& setup, const std::vector<std::string>& dims,
                                 OrtView& ort_view, Model& model, const std::function<void()>& loaded = {},
                                 const decltype(planner::PlanRequest::planned)& planned_ready = {}) {
  model = ort_view.load(args, dims);
  if (loaded) loaded();
  for (const auto& w : model.warnings) warn(args.model + ": " + w);
  planner::PlanRequest request = setup.request;
  request.ort_shapes = ort_view.get();
  planner::PlannedModel planned;
  if (setup.offload) {
    offload::OffloadOutcome o = offload::offload_model(std::move(model), request, *setup.offload);
    planned = std::move(o.planned);
    const std::string device = partition::device_name(setup.offload->device);
    if (!o.fits)
      throw Error(ExitCode::kOverBudget, "--offload: device " + device + " needs " + human_bytes(o.before) +
                                             ", over the budget of " + human_bytes(setup.offload->budget) +
                                             ", and no offload fits it: " + o.why);
    if (const auto& r = planned.offload) {
      size_t weights = 0, activations = 0;
      for (const auto& m : r->moved) (m.weight ? weights : activations)++;
      char line[512];
      std::snprintf(
          line, sizeof line,
          "memplan: offload: %s %s -> %s (budget %s): %zu weights and %zu activations in host memory, "
          "%s copied per inference on %d copy stream(s); estimated %.3f ms -> %.3f ms at %.0f GB/s (+%.0f%%)\n",
          device.c_str(), human_bytes(o.before).c_str(), human_bytes(o.after).c_str(),
          human_bytes(setup.offload->budget).c_str(), weights, activations, human_bytes(r->bytes_moved).c_str(),
          (r->copy_in_stream >= 0) + (r->copy_out_stream >= 0), r->compute_us / 1e3, r->estimated_us / 1e3,
          r->bytes_per_us / 1e3, r->compute_us > 0 ? 100 * (r->estimated_us / r->compute_us - 1) : 0.0);
      std::cerr << line;
    } else {
      std::cerr << "memplan: offload: " << device << " fits its budget without moving anything\n";
    }
  } else {
    request.planned = planned_ready;
    planned = planner::plan_model(std::move(model), request);
  }
  for (const auto& w : planned.parts.warnings) warn(w);
  ort_view.warn_if_unread(args.model);
  if (!planned.complete()) {
    const std::string what = api::incomplete_plan_reasons(planned);
    if (!args.allow_unknown_sizes)
      fail_input(args.model, "the plan would be incomplete: " + what +
                                 ". Its totals would leave them out. Fix the sizes, or pass --allow-unknown-sizes "
                                 "to write a plan marked incomplete");
    warn(args.model + ": INCOMPLETE PLAN: " + what +
         "; every total is a lower bound (the plan records \"complete\": false)");
  }
  return planned;
}

std::map<std::string, std::string> recorded_options(const PlanArgs& args, const std::vector<std::string>& dims) {
  plan_doc::RecordedOptions o;
  o.device = args.partition.device;
  o.order = args.partition.order;
  o.streams_per_device = args.partition.streams_per_device;
  o.arena_algorithm = args.algorithm;
  o.alignment = args.align;
  o.pack_outputs = args.pack_outputs;
  o.partition_config = args.partition.config;
  // NAME=VALUE as given (VALUE after the last '=')
  auto named = [](std::map<std::string, std::string>& into, const std::vector<std::string>& given) {
    for (const auto& g : given) into[g.substr(0, g.rfind('='))] = g.substr(g.rfind('=') + 1);
  };
  named(o.dims, dims);
  named(o.input_shapes, args.shapes.input_shapes);
  named(o.trip_counts, args.shapes.trip_counts);
  o.allow_unknown_sizes = args.allow_unknown_sizes;
  if (!args.offload.empty()) {
    o.offload = args.offload;
    char gbps[32];
    std::snprintf(gbps, sizeof gbps, "%g", args.host_gb_per_s);
    o.host_bandwidth = gbps;
  }
  o.like = args.like;
  return plan_doc::options_object(o);
}

void print_summary(const planner::PlannedModel& planned) {
  const auto& plan = planned.plan;
  size_t reused = 0, inplace = 0, allocated = 0;
  for (const auto& v : plan.values) {
    if (v.kind == planner::AllocKind::kReuse) (v.inplace ? inplace : reused)++;
    if (v.kind == planner::AllocKind::kAllocate) ++allocated;
  }
  std::cerr << "memplan: " << planned.graph().nodes.size() << " nodes on " << plan.streams.size() << " stream(s); "
            << allocated << " Allocate, " << inplace << " in-place Reuse, " << reused << " freelist Reuse ("
            << planner::reuse_mode_name(plan.reuse) << " rules)\n";
  for (const auto& a : planned.layout.arenas) {
    char line[256];
    std::snprintf(line, sizeof line, "memplan: arena %-14s %12s  lower bound %12s  ratio %.3f  %s%s, %zu buffers\n",
                  a.name.c_str(), human_bytes(a.bytes).c_str(), human_bytes(a.lower_bound).c_str(),
                  a.lower_bound ? static_cast<double>(a.bytes) / static_cast<double>(a.lower_bound) : 1.0,
                  a.algorithm.c_str(), a.optimal ? " (optimal)" : "", a.buffers);
    std::cerr << line;
    if (!a.note.empty()) std::cerr << "memplan: arena " << a.name << ": " << a.note << "\n";
  }
  for (const DeviceTotal& t : planned.totals) {
    std::cerr << "memplan: device " << t.device << " needs " << (t.complete() ? "" : "at least ")
              << human_bytes(t.total()) << " (" << total_breakdown(t) << ")";
    if (const DeviceTotal* o = ort_total(planned, t.device))
      std::cerr << "; under ORT's rules " << human_bytes(o->total());
    std::cerr << "\n";
  }
}

// `ort_rules`: where planned.ort_rules is not made yet, the wait for it (PlanRequest::planned).
void write_plan(const PlanArgs& args, const planner::PlannedModel& planned, const std::string& model_sha256,
                const std::vector<std::string>& dims, const planner::PendingOrtRules& ort_rules = {}) {
  const Graph& g = planned.graph();
  const auto& layout = planned.layout;
  planner::PlanContext ctx{g, planned.plan, args.model, model_sha256, {}, &layout, &planned.subgraphs};
  ctx.options = recorded_options(args, dims);
  ctx.totals = &planned.totals;
  if (planned.ort_rules)
    ctx.ort_rules = &*planned.ort_rules;
  else
    ctx.ort_rules_pending = ort_rules;
  if (planned.offload) ctx.offload = &*planned.offload;
  // Both outputs or neither: the exported problem is written first, the plan streamed after it, and both are named
  // only when both are complete.
  std::string problem_csv;
  if (!args.export_problem.empty()) {
    int best = -1;
    for (size_t a = 0; a < layout.arenas.size(); ++a)
      if (layout.arenas[a].purpose == "activations" && (best < 0 || layout.arenas[a].bytes > layout.arenas[best].bytes))
        best = static_cast<int>(a);
    if (best < 0) fail_input(args.model, "the plan has no activation arena to export");
    auto problem = planner::arena_problem(g, planned.plan, layout, best);
    problem_csv = arena::write_minimalloc_csv(problem, nullptr);
  }
  const std::string output = args.output.empty() ? "-" : args.output;
  if (args.format == "text" || output == "-") {
    std::vector<std::pair<std::string, std::string>> files;
    files.emplace_back(output, args.format == "text" ? planner::plan_to_text(ctx) : planner::plan_to_json(ctx));
    if (!args.export_problem.empty()) files.emplace_back(args.export_problem, std::move(problem_csv));
    write_files_atomically(files);
    return;
  }
  // A JSON plan goes to its file as it is made (a 1M-node plan is a gigabyte of text, never held whole).
  std::optional<OutputFile> csv;
  if (!args.export_problem.empty()) {
    csv.emplace(args.export_problem);
    csv->append(problem_csv);
    csv->finish();
  }
  OutputFile plan(output);
  // Where ORT's estimate is still being made, the text after it waits in a spill file beside the output, not in
  // memory (plan_io.h).
  std::optional<SpillFile> spill;
  if (ctx.ort_rules_pending) spill.emplace(output, &plan);
  planner::write_plan_json(
      ctx, [&](std::string_view piece) { plan.append(piece); }, spill ? &*spill : nullptr);
  plan.finish();
  plan.commit();
  if (csv) csv->commit();
}

// --dim batch=1,8,32: one plan per point, one table of device totals (text or JSON) instead of a plan file.
void run_sweep(const PlanArgs& args, const PlanSetup& setup) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::string table;
  char line[512];
  std::snprintf(line, sizeof line, "%-24s %-8s %12s %12s %12s %12s %12s %14s\n", "dims", "device", "total",
                "activations", "outputs", "weights", "inputs", "ORT's rules");
  table += line;
  std::vector<std::string> over;
  OrtView ort_view;
  for (const auto& dims : setup.points) {
    std::string label;
    for (const auto& d : dims) label += (label.empty() ? "" : " ") + d;
    std::cerr << "memplan: planning " << label << "\n";
    Model model;
    auto planned = plan_point(args, setup, dims, ort_view, model);
    nlohmann::ordered_json row = {{"dims", nlohmann::ordered_json::object()}, {"complete", planned.complete()}};
    for (const auto& d : dims) row["dims"][d.substr(0, d.rfind('='))] = std::stoll(d.substr(d.rfind('=') + 1));
    row["devices"] = nlohmann::ordered_json::array();
    for (const DeviceTotal& t : planned.totals) {
      const DeviceTotal* o = ort_total(planned, t.device);
      uint64_t ort = o ? o->total() : 0;
      auto d = device_total_json(t);
      d["ort_rules_total"] = ort;
      row["devices"].push_back(d);
      std::snprintf(line, sizeof line, "%-24s %-8s %12s %12s %12s %12s %12s %14s\n", label.c_str(), t.device.c_str(),
                    ((t.complete() ? "" : ">=") + human_bytes(t.total())).c_str(), human_bytes(t.activations).c_str(),
                    human_bytes(t.outputs).c_str(), human_bytes(t.weights).c_str(), human_bytes(t.inputs).c_str(),
                    human_bytes(ort).c_str());
      table += line;
    }
    for (const Budget& b : setup.budgets) {
      std::string why = budget_failure(b, planned.totals);
      if (!why.empty()) over.push_back(label + ": " + why);
    }
    rows.push_back(row);
  }
  if (args.format == "json") {
    nlohmann::ordered_json j = {{"format", "memplan.sweep"}, {"version", 1}, {"model", args.model}, {"rows", rows}};
    write_file_atomically(args.output.empty() ? "-" : args.output, dump_json(j, 2) + "\n");
  } else {
    write_file_atomically(args.output.empty() ? "-" : args.output, table);
  }
  if (!over.empty()) {
    std::string all;
    for (const auto& o : over) all += "\n  " + o;
    throw Error(ExitCode::kOverBudget, std::to_string(over.size()) + " of " + std::to_string(setup.points.size()) +
                                           " plans exceed a budget:" + all);
  }
}

// --timings: the wall time of each stage, and the process's peak memory at its end, on stderr.
void print_timings(double total) {
  double staged = 0;
  const StageTimes& times = stage_times();
  for (size_t i = 0; i < times.seconds.size(); ++i) {
    const auto& [stage, s] = times.seconds[i];
    std::fprintf(stderr, "memplan: time %-40s %8.3f s  peak %6.0f MiB\n", stage.c_str(), s,
                 static_cast<double>(times.peak_bytes[i]) / (1 << 20));
    staged += s;
  }
  std::fprintf(stderr, "memplan: time %-40s %8.3f s\n", "(other)", std::max(0.0, total - staged));
  std::fprintf(stderr, "memplan: time %-40s %8.3f s\n", "total", total);
}

void run_plan(const PlanArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  PlanSetup setup = check_options(args);
  // What will be written, checked before the work (a directory given as -o would otherwise fail at the end).
  if (!args.output.empty()) check_output_path(args.output);
  if (!args.export_problem.empty()) check_output_path(args.export_problem);
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  if (setup.points.size() > 1) {
    run_sweep(args, setup);
    if (args.timings) print_timings(seconds());  // every point's stages added up
    return;
  }
  // The model file's hash (a model with its weights inline can be gigabytes) is taken beside the planning, once the
  // model is loaded: not while the loader forks its inference children (a fork copies one thread, and a lock
  // another thread holds would stay held in the child).
  std::future<std::string> model_sha256;
  auto hash_beside = [&] {
    model_sha256 = std::async(std::launch::async, [&] { return planner::sha256_file_hex(args.model); });
  };
  Model model;
  OrtView ort_view;
  // The plan is written while ORT's estimate is made (its figures are the only part that waits for it); an
  // incomplete plan without --allow-unknown-sizes is refused after, by plan_point, and never written.
  bool written = false;
  auto write_beside_estimate = [&](const planner::PlannedModel& plan, const planner::PendingOrtRules& ort_rules) {
    if (!plan.complete() && !args.allow_unknown_sizes) return;
    TimedStage stage("write plan");
    write_plan(args, plan, model_sha256.get(), setup.points.front(), ort_rules);
    written = true;
  };
  auto planned = plan_point(args, setup, setup.points.front(), ort_view, model, hash_beside, write_beside_estimate);
  if (!written) {
    TimedStage stage("write plan");
    write_plan(args, planned, model_sha256.get(), setup.points.front());
  }
  print_summary(planned);
  if (const auto& m = planned.parts.memory) {
    char line[400];
    std::snprintf(line, sizeof line,
                  "memplan: order memory: live peak %s (ORT's default order %s); lower bound over all orders %s%s; "
                  "%zu pieces, %zu searched exactly, %.2f s. Run it in ORT with memplan reorder\n",
                  human_bytes(m->peak).c_str(), human_bytes(m->default_peak).c_str(),
                  human_bytes(m->lower_bound).c_str(), m->optimal ? " (this order is optimal)" : "", m->pieces,
                  m->exact_pieces, m->seconds);
    std::cerr << line;
  }
  if (args.timings) print_timings(seconds());
  for (const Budget& b : setup.budgets) {
    std::string why = budget_failure(b, planned.totals);
    if (!why.empty())
      throw Error(ExitCode::kOverBudget,
                  why + (planned.complete() ? biggest_at_peak(planned, b.device) : std::string()));
  }
  leave_to_exit(planned);
  leave_to_exit(model);
  leave_to_exit(ort_view);
}

}  // namespace

void register_plan(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd =
      app.add_subcommand("plan", "Plan the model's memory: kinds, reuse, releases, stream steps, arena offsets");
  cmd->add_option("MODEL", args->model, "The .onnx model file (- reads it from stdin)")->required();
  cmd->add_option("-o,--output", args->output,
                  "Where to write the plan (- for stdout; required when stdout is a terminal). With a swept --dim: "
                  "where to write the table")
      ->check(output_path());
  cmd->add_option("--format", args->format,
                  "json (the versioned plan, docs/plan-format.md; the default) or text (ORT's printout layout). With a "
                  "swept --dim, the table's form: text (the default) or json (format memplan.sweep)")
      ->check(CLI::IsMember({"json", "text"}));
  args->shapes.add_to(*cmd, true);
  args->partition.add_to(*cmd, true);
  cmd->add_option("--reuse", args->reuse,
                  "Reuse rules: memplan (default: ORT's, plus same-size reuse across shapes and multi-stream reuse "
                  "checked by happens-before) or ort (ORT's allocation_planner exactly)")
      ->check(CLI::IsMember({"memplan", "ort"}))
      ->capture_default_str();
  cmd->add_flag("--no-reuse", args->no_reuse, "No freelist reuse (ORT's enable_mem_reuse = false)");
  cmd->add_option("--like", args->like,
                  "ort: plan as ONNX Runtime 1.30 does, to predict its memory: ORT's reuse rules and its memory "
                  "pattern (best fit in allocation order; a reused buffer held until its last sharer is read; "
                  "buffers nobody reads held to the end of the run). scripts/ort-measure compares it with ORT itself")
      ->check(CLI::IsMember({"ort"}));
  cmd->add_option("--arena-algorithm", args->algorithm, "Offset assignment: " + arena::algorithm_help())
      ->capture_default_str();
  cmd->add_option(
         "--time-budget", args->time_budget,
         "Seconds the exact search may take in all, shared by the arenas in turn (0: heuristics only); counted as "
         "work at one core's rate, so the layout does not depend on the machine or its load")
      ->check(replay::seconds_validator())
      ->capture_default_str();
  cmd->add_option("--align", args->align, "Alignment of every buffer in bytes (ORT: 256)")->capture_default_str();
  cmd->add_flag("--pack-outputs", args->pack_outputs, "Put graph outputs in the activation arena instead of their own");
  cmd->add_flag("--allow-unknown-sizes", args->allow_unknown_sizes,
                "Write a plan even when values it must allocate have no known size (data-dependent shapes, free dims "
                "left open): the plan is marked \"complete\": false, its totals are lower bounds, and --max-arena "
                "fails on it. Without this flag such a plan is an error (exit 1)");
  cmd->add_flag("--timings", args->timings,
                "Print the wall time of each stage (loading, shapes, planning, layout, "
                "writing) and the process's peak memory at its end, on stderr");
  cmd->add_option("--max-arena", args->max_arena,
                  "A memory budget per device, e.g. --max-arena gpu:0=512MiB or cpu=2GB: exit 4 when the device's "
                  "total (its arenas and the caller's inputs placed there) exceeds it, or cannot be known because the "
                  "plan is incomplete (repeatable). Checked against every plan of a sweep");
  cmd->add_option("--offload", args->offload,
                  "When the device named by --max-arena needs more than its budget, keep some buffers in host memory "
                  "and copy them in before their readers (and activations out after their producers) on a copy "
                  "stream per direction, so the plan fits: all (weights and activations; the default when the flag "
                  "has no value) or weights. Exit 4, naming the step, when no choice fits. One compute stream per "
                  "device; the plan is format version 2 (docs/plan-format.md)")
      ->expected(0, 1)
      ->default_str("all")
      ->check(CLI::IsMember({"all", "weights"}));
  cmd->add_option("--host-bandwidth", args->host_gb_per_s,
                  "Host-device bandwidth per direction in GB/s, for --offload's choice and its time estimate")
      ->capture_default_str();
  cmd->add_option("--export-problem", args->export_problem,
                  "Also write the largest activation arena's problem as MiniMalloc CSV "
                  "(id,lower,upper,size,alignment)")
      ->check(output_path());
  cmd->footer(
      "Examples:\n"
      "  memplan plan model.onnx --dim batch=8 --dim seq=128 -o plan.json\n"
      "  memplan plan model.onnx --device gpu --dim N=1 --max-arena gpu:0=4GiB -o plan.json   # a CI gate\n"
      "  memplan plan model.onnx --dim batch=1,8,32 --device gpu          # a table of device totals per batch\n"
      "  memplan plan model.onnx --dim batch=1..64:x2 --format json -o sweep.json\n"
      "  memplan plan model.onnx --reuse ort --arena-algorithm best-fit -o ort-like.json\n"
      "  memplan plan model.onnx --device gpu --max-arena gpu:0=2GiB --offload -o fits.json   # host memory helps");
  cmd->callback([args] { run_plan(*args); });
}

}  // namespace memplan::cli
