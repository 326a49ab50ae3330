// memplan reorder MODEL -o OUT.onnx: the same model with its nodes listed so that ONNX Runtime's own execution order
// on the new file is the one of lowest memory memplan finds (ORT cannot be told an order, but its DEFAULT order is a
// fixed function of the node numbering, and PRIORITY_BASED follows the numbering where it can).
#include <cstdio>
#include <iostream>
#include <map>

#include "common.h"
#include "memplan/device_totals.h"
#include "memplan/execution_order.h"
#include "memplan/file_io.h"
#include "memplan/memory_order.h"
#include "memplan/memplan.h"
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

// ORT's activation block for the model on the CPU as memplan predicts it (plan --like ort), in the given order.
uint64_t predicted_block(const std::string& path, const onnx_io::LoadOptions& options, const std::string& order) {
  PlanSettings s;
  s.shapes = {options.overrides.dims, options.overrides.input_shapes, options.overrides.trip_counts};
  s.like = "ort";
  s.order = order;
  s.allow_unknown_sizes = true;
  uint64_t bytes = 0;
  for (const ArenaSummary& a : make_plan(path, s).arenas)
    if (a.purpose == "activations") bytes += a.bytes;
  return bytes;
}

void run_reorder(const ReorderArgs& args) {
  check_output_path(args.output);
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

  // What ORT will run: memplan's copy of ORT's order on the written file (the same rewrites at load), and the block
  // ORT reserves for it as memplan predicts it (plan --like ort: ORT's reuse rules and memory pattern, equal to
  // ORT's measured block on the shared models). The live peak ignores reuse; the block decides: a numbering that
  // would make ORT's block larger is not written.
  const Model written = onnx_io::load_model(args.output, options);
  const uint64_t after = live_peak(written.graph, execution_order(written.graph, kind));
  const uint64_t block_before = predicted_block(args.model, options, args.for_order);
  const uint64_t block_after = predicted_block(args.output, options, args.for_order);
  const bool better = block_after < block_before || (block_after == block_before && after < before);
  if (!better) {
    write_file_atomically(args.output, read_file(args.model));  // the file as it was, byte for byte
    warn(args.output + ": no numbering found that lowers ORT's block (memplan's prediction: " +
         human_bytes(block_before) + " as it is, " + human_bytes(block_after) +
         " for the best order found); written with the nodes in their original order");
  }
  char line[640];
  std::snprintf(line, sizeof line,
                "memplan: %s: live peak of ORT's %s order %s -> %s; ORT's block (predicted) %s -> %s (%.1f%% lower); "
                "memory order %s, lower bound %s%s; %zu pieces, %zu searched exactly, %.2f s\n",
                args.output.c_str(), args.for_order.c_str(), human_bytes(before).c_str(),
                human_bytes(better ? after : before).c_str(), human_bytes(block_before).c_str(),
                human_bytes(better ? block_after : block_before).c_str(),
                better && block_before
                    ? 100.0 * static_cast<double>(block_before - block_after) / static_cast<double>(block_before)
                    : 0.0,
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
  cmd->add_option("-o,--output", args->output, "Where to write the reordered model")->check(output_path())->required();
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
