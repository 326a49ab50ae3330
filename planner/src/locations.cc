// Where values live, and the kinds of the values that exist before any node runs (graph inputs, weights).
#include <vector>

#include "planner_phases.h"

namespace memplan::planner {

namespace {

constexpr Device kCpu{partition::DeviceType::kCpu, 0};

bool is_graph_input_or_outer(const Value& v) {
  return (v.is_graph_input && !v.is_initializer) || v.is_outer_scope;
}

}  // namespace

void compute_locations(const PlanInput& in, const partition::NodeFacts& facts, Plan& plan) {
  const Graph& g = in.graph;
  auto node_device = [&](NodeId n) { return in.placement.node_device[n]; };
  for (ValuePlan& vp : plan.values) vp.location = kCpu;
  for (NodeId n : in.order) {
    const Node& node = g.nodes[n];
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      ValueId v = node.outputs[k];
      if (v == kNoId) continue;
      plan.values[v].location = facts[n].is_cpu_output(static_cast<int>(k)) ? kCpu : node_device(n);
    }
  }
  // Graph inputs and outer-scope values: where their (last) explicit consumer reads them; with only
  // implicit consumers, the device of the node that owns the subgraph.
  std::vector<bool> explicit_seen(g.values.size(), false);
  for (NodeId n : in.order) {
    const Node& node = g.nodes[n];
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      ValueId v = node.inputs[k];
      if (v == kNoId || !is_graph_input_or_outer(g.values[v])) continue;
      plan.values[v].location = facts[n].is_cpu_input(static_cast<int>(k)) ? kCpu : node_device(n);
      explicit_seen[v] = true;
    }
    for (ValueId v : node.implicit_inputs)
      if (is_graph_input_or_outer(g.values[v]) && !explicit_seen[v]) plan.values[v].location = node_device(n);
  }
}

void plan_inputs_and_weights(const PlanInput& in, const partition::NodeFacts& facts, Plan& plan) {
  const Graph& g = in.graph;
  auto node_device = [&](NodeId n) { return in.placement.node_device[n]; };
  for (ValueId v : g.inputs)
    if (!g.values[v].is_initializer) plan.values[v].kind = AllocKind::kPreExisting;
  for (ValueId v : g.outer_scope) plan.values[v].kind = AllocKind::kPreExisting;
  std::vector<bool> placed(g.values.size(), false);
  for (NodeId n : in.order) {
    const Node& node = g.nodes[n];
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      ValueId v = node.inputs[k];
      if (v == kNoId || !g.values[v].is_initializer || placed[v]) continue;
      plan.values[v].location = facts[n].is_cpu_input(static_cast<int>(k)) ? kCpu : node_device(n);
      placed[v] = true;
    }
  }
  for (NodeId n : in.order)
    for (ValueId v : g.nodes[n].implicit_inputs)
      if (g.values[v].is_initializer && !placed[v]) {
        plan.values[v].location = node_device(n);
        placed[v] = true;
      }
  for (ValueId v : g.initializers) plan.values[v].kind = AllocKind::kAllocateStatically;
}

}  // namespace memplan::planner
