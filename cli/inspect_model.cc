// memplan inspect MODEL: what a model holds and where its memory goes, before any planning.
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common.h"
#include "memplan/api/internal.h"
#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/file_kind.h"
#include "memplan/graph_summary.h"
#include "memplan/onnx_io/load.h"
#include "memplan/text_escape.h"

namespace memplan::cli {
namespace {

struct InspectArgs {
  std::string model;
  ShapeOptions shapes;
  bool json = false;
  bool values = false;
  std::string order = "default";
  size_t list = 20;
  size_t top = 10;
  std::string svg, html;
};

void run_inspect(const InspectArgs& args) {
  // A plan file (JSON; the plan reader names what any other JSON lacks) or a model (protobuf).
  // (A model is not read whole here: its weights may be gigabytes the loader skips.)
  FileKind kind = sniff_file_kind(read_file_head(args.model, 4096));
  if (kind == FileKind::kPlan || kind == FileKind::kOtherJson) {
    if (!args.shapes.dims.empty() || !args.shapes.input_shapes.empty())
      fail_usage(args.model +
                 " is a plan: its shapes were fixed when it was made (--dim and --input-shape shape a "
                 "model; plan the model again with them)");
    run_inspect_plan(args.model, args.json, args.top, args.svg, args.html);
    return;
  }
  if (!args.svg.empty() || !args.html.empty())
    fail_usage("--svg and --html draw a plan: inspect a plan file (memplan plan -o PLAN.json)");
  Model model = onnx_io::load_model(args.model, args.shapes.load_options());
  for (const auto& w : model.warnings) warn(args.model + ": " + w);
  OrderKind order = parse_order_kind(args.order);
  GraphSummary s = summarize(model, order);
  const Graph& g = model.graph;

  std::vector<std::pair<std::string, size_t>> ops(s.op_histogram.begin(), s.op_histogram.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });

  if (args.json) {
    std::cout << api::inspect_model_json(model, order, args.values);
    return;
  }

  std::ostringstream out;
  auto row = [&](const std::string& k) -> std::ostream& { return out << std::left << std::setw(14) << k; };
  row("model") << model.path << "\n";
  row("graph") << "'" << g.name << "', IR " << model.ir_version << ", opsets";
  for (const auto& [domain, version] : model.opsets)
    out << " " << (domain.empty() ? "ai.onnx" : domain) << ":" << version;
  out << "\n";
  row("nodes") << s.nodes;
  if (s.subgraphs) out << " (+" << s.nodes_in_subgraphs << " in " << s.subgraphs << " subgraphs)";
  out << ", " << s.values << " values";
  if (model.constant_nodes_folded) out << ", " << model.constant_nodes_folded << " Constant nodes read as initializers";
  if (model.ort_casts_removed) out << ", " << model.ort_casts_removed << " duplicate Casts removed (as ORT does)";
  if (model.ort_functions_inlined)
    out << ", " << model.ort_functions_inlined << " function nodes expanded into their bodies (as ORT does)";
  out << "\n";
  for (ValueId id : g.inputs) {
    const Value& v = g.values[id];
    if (v.is_initializer) continue;
    row("input") << v.name << " " << dtype_name(v.dtype) << " " << shape_text(v)
                 << (v.bytes ? " " + human_bytes(*v.bytes) : std::string()) << "\n";
  }
  for (ValueId id : g.outputs) {
    const Value& v = g.values[id];
    row("output") << v.name << " " << dtype_name(v.dtype) << " " << shape_text(v)
                  << (v.bytes ? " " + human_bytes(*v.bytes) : std::string()) << "\n";
  }
  row("initializers") << s.initializer_count << " values, " << human_bytes(s.initializer_bytes) << "\n";
  row("activations") << s.activation_count << " values, " << (s.unknown_size.empty() ? "" : "at least ")
                     << human_bytes(s.activation_bytes) << " if nothing were reused"
                     << (s.unknown_size.empty() ? ""
                                                : " (INCOMPLETE: the " + std::to_string(s.unknown_size.size()) +
                                                      " values of unknown size below are left out)")
                     << "\n";
  row("unknown size") << s.unknown_size.size() << " values";
  if (!s.unknown_size.empty()) {
    out << ":";
    for (size_t i = 0; i < s.unknown_size.size() && i < args.list; ++i) out << " " << s.unknown_size[i].name;
    if (s.unknown_size.size() > args.list)
      out << " ... (" << s.unknown_size.size() - args.list << " more; --json lists all)";
    if (!s.free_dims.empty()) {
      out << "\n"
          << std::setw(14) << ""
          << "fix with:";
      for (const auto& d : s.free_dims) out << " --dim " << d << "=...";
    }
  }
  out << "\n";
  if (model.shape_pass_evaluated_nodes)
    row("shape pass") << model.shape_pass_evaluated_nodes << " shape-computing nodes evaluated, "
                      << model.shape_pass_rounds << " inference rounds\n";
  if (s.non_tensor_values) row("non-tensors") << s.non_tensor_values << " sequence/map/optional values\n";
  row("op types");
  for (size_t i = 0; i < ops.size(); ++i) out << (i ? ", " : "") << ops[i].first << " " << ops[i].second;
  out << "\n";
  row("order") << args.order << ":";
  const size_t n = s.order_names.size(), show = 3;
  for (size_t i = 0; i < n && i < show; ++i) out << " " << s.order_names[i];
  if (n > 2 * show) out << " ...";
  for (size_t i = std::max(show, n > show ? n - show : n); i < n; ++i) out << " " << s.order_names[i];
  out << "\n";
  std::cout << out.str();
}

}  // namespace

void register_inspect(CLI::App& app) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "Summarise a model (nodes, values, sizes, op types, order) or a plan (arenas, peak, largest tensors, timeline)");
  cmd->add_option("FILE", args->model, "An .onnx model, or a plan written by memplan plan")->required();
  args->shapes.add_to(*cmd);
  cmd->add_flag("--json", args->json, "Print JSON instead of text");
  cmd->add_flag("--values", args->values, "With --json: list every value of the main graph with its shape and size");
  cmd->add_option("--order", args->order, kOrderHelp)->check(CLI::IsMember(order_kind_names()));
  cmd->add_option("--list", args->list, "How many unknown-size names the text form lists")->capture_default_str();
  cmd->add_option("--top", args->top, "Plans: how many values to list at the peak and among the largest")
      ->capture_default_str();
  cmd->add_option("--svg", args->svg, "Plans: write the memory timeline picture (SVG) here")->check(output_path());
  cmd->add_option("--html", args->html, "Plans: write a standalone page with the timeline and a sortable value table")
      ->check(output_path());
  cmd->footer(
      "Examples:\n"
      "  memplan inspect model.onnx                      # sizes, free dims to fix, op types\n"
      "  memplan inspect model.onnx --dim batch=8 --json --values\n"
      "  memplan inspect plan.json                       # device totals, arenas, the peak and what is live there\n"
      "  memplan inspect plan.json --html plan.html --svg timeline.svg\n"
      "  memplan inspect plan.json --svg - > timeline.svg   # the report goes to stderr then");
  cmd->callback([args] { run_inspect(*args); });
}

}  // namespace memplan::cli
