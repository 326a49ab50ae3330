#include "memplan/partition/pipeline.h"

#include "memplan/error.h"
#include "memplan/file_io.h"

namespace memplan::partition {

namespace {

// `graph` is the model's own graph (a copy, or moved out of it).
PartitionedModel partition_graph(Graph graph, const Model& model, const PartitionRequest& request) {
  if (!request.config_file.empty() && request.streams_per_device > 1)
    fail_usage("--partition and --streams-per-device both choose the streams; give one of them");
  PartitionedModel out{OpTable::builtin(), 0, {}, {}, {}, {}, {}, {}};
  auto opset = model.opsets.find("");
  out.opset = opset == model.opsets.end() ? 1 : static_cast<int>(opset->second);
  if (!request.op_properties_file.empty())
    out.ops.extend_from_json(read_file(request.op_properties_file), request.op_properties_file);

  PlacementRules rules = request.placement_file.empty()
                             ? default_rules(request.device)
                             : parse_placement_rules(read_file(request.placement_file), request.placement_file);
  Placement placement = place_nodes(graph, out.opset, rules, out.ops);
  out.placed = insert_copies(std::move(graph), placement, out.ops, out.opset);
  if (request.order == OrderKind::kMemory) {
    out.memory = memory_order(out.placed.graph, request.order_time_budget_s);
    out.order = out.memory->order;
  } else {
    out.order = execution_order(out.placed.graph, request.order);
  }

  if (!request.config_file.empty()) {
    PartitionConfig config = parse_partition_config(read_file(request.config_file), request.config_file);
    out.partition = apply_partition_config(out.placed.graph, out.placed.placement, out.order, config,
                                           request.config_file, out.warnings);
  } else if (request.streams_per_device > 1) {
    out.split = split_streams(out.placed.graph, out.placed.placement, out.order, request.streams_per_device, {},
                              alias_only_nodes(out.placed.graph, out.placed.placement, out.ops, out.opset));
    out.partition = out.split->partition;
  } else {
    out.partition = default_partition(out.placed.graph, out.placed.placement, out.order);
  }
  return out;
}

}  // namespace

PartitionedModel partition_model(const Model& model, const PartitionRequest& request) {
  return partition_graph(model.graph, model, request);
}

PartitionedModel partition_model(Model&& model, const PartitionRequest& request) {
  Graph graph = std::move(model.graph);
  model.graph = Graph{};
  return partition_graph(std::move(graph), model, request);
}

}  // namespace memplan::partition
