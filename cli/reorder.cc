// memplan reorder MODEL -o OUT.onnx: the same model with its nodes listed so that ONNX Runtime's own execution order
// on the new file is the one of lowest memory memplan finds (ORT cannot be told an order, but its DEFAULT order is a
// fixed function of the node numbering, and PRIORITY_BASED follows the numbering where it can).
#include <cstdio>
#include <iostream>
#include <map>

#include "common.h"
#include "memplan/device_totals.h"
#include "memplan/execution_order.h"
#include "memplan/memory_order.h"
#include "memplan/onnx_io/load.h"

namespace memplan::cli {
namespace {

struct ReorderArgs {
  std::string model;
  std::string output;
  std::string for_order = "default";
  double time_budget = 2.0;
  ShapeOptions shapes;
};

void run_reorder(const ReorderArgs& args) {
  const onnx_io::LoadOptions options = args.shapes.load_options();
  const Model model = onnx_io::load_model(args.model, options);
  for (const auto& w : model.warnings) warn(args.model + ": " + w);
  const Graph& g = model.graph;
  const bool priority = args.for_order == "priority";
  const OrderKind kind = priority ? OrderKind::kPriority : OrderKind::kDefault;
  const uint64_t before = live_peak(g, execution_order(g, kind));

  // The numbering to write: for PRIORITY_BASED the memory order itself (Kahn's algorithm by lowest index runs a
  // topological numbering as written); for DEFAULT the best numbering whose depth-first order memplan finds.
  std::vector<NodeId> rank(g.nodes.size());
  const MemoryOrder best = memory_order(g, priority ? args.time_budget : args.time_budget / 2);
  if (priority) {
    for (size_t i = 0; i < best.order.size(); ++i) rank[best.order[i]] = static_cast<NodeId>(i);
  } else {
    rank = default_order_numbering(g, args.time_budget / 2).rank;
  }
  std::map<std::string, size_t> position_by_output;
  for (const Node& node : g.nodes)
    for (ValueId v : node.outputs)
      if (v != kNoId) position_by_output.emplace(g.values[v].name, rank[node.index]);
  onnx_io::write_model_with_node_order(args.model, args.output, position_by_output);

  // What ORT will run: memplan's copy of ORT's order on the written file (the same rewrites at load).
  const Model written = onnx_io::load_model(args.output, options);
  const uint64_t after = live_peak(written.graph, execution_order(written.graph, kind));
  if (after > before) {  // (never worse: write the model as it was)
    onnx_io::write_model_with_node_order(args.model, args.output, {});
    warn(args.output + ": no numbering found that lowers the peak of ORT's " + args.for_order +
         " order; written with the nodes in their original order");
  }
  const uint64_t result = std::min(after, before);
  char line[512];
  std::snprintf(line, sizeof line,
                "memplan: %s: live peak of ORT's %s order %s -> %s (%.1f%% lower); memory order %s, lower bound %s%s; "
                "%zu pieces, %zu searched exactly, %.2f s\n",
                args.output.c_str(), args.for_order.c_str(), human_bytes(before).c_str(), human_bytes(result).c_str(),
                before ? 100.0 * static_cast<double>(before - result) / static_cast<double>(before) : 0.0,
                human_bytes(best.peak).c_str(), human_bytes(best.lower_bound).c_str(), best.optimal ? " (optimal)" : "",
                best.pieces, best.exact_pieces, best.seconds);
  std::cerr << line;
}

}  // namespace

void register_reorder(CLI::App& app) {
  auto args = std::make_shared<ReorderArgs>();
  CLI::App* cmd = app.add_subcommand(
      "reorder",
      "Write the model with its nodes renumbered so that ONNX Runtime's own execution order has a lower memory peak "
      "(same nodes, names, values and weights)");
  cmd->add_option("MODEL", args->model, "The .onnx model file")->required();
  cmd->add_option("-o,--output", args->output, "Where to write the reordered model")->required();
  cmd->add_option("--for", args->for_order,
                  "The ORT execution order to serve: default (ORT's DEFAULT, a depth-first order fixed by the node "
                  "numbering) or priority (ORT's PRIORITY_BASED, session option execution_order)")
      ->check(CLI::IsMember({"default", "priority"}))
      ->capture_default_str();
  cmd->add_option("--time-budget", args->time_budget, "Seconds for the search")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  args->shapes.add_to(*cmd);
  cmd->footer(
      "Examples:\n"
      "  memplan reorder model.onnx --dim batch=8 -o reordered.onnx\n"
      "  memplan plan reordered.onnx --dim batch=8 -o plan.json      # the plan of what ORT now runs\n"
      "The sizes decide the order: give the --dim values you serve. The peak compared is the live peak "
      "(memory_order.h):\n"
      "activations alive together, before in-place reuse; plan both files to see the arenas.");
  cmd->callback([args] { run_reorder(*args); });
}

}  // namespace memplan::cli
