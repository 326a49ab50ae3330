// When each value is first and last used, and which nodes release each buffer.
#include <algorithm>
#include <vector>

#include "planner_phases.h"

namespace memplan::planner {

void compute_lifetimes(const PlanInput& in, Plan& plan) {
  const Graph& g = in.graph;
  // Each node's position in the execution order.
  std::vector<int> pc(g.nodes.size(), -1);
  for (size_t i = 0; i < in.order.size(); ++i) pc[in.order[i]] = static_cast<int>(i);
  const int last = static_cast<int>(in.order.size()) - 1;
  for (ValueId v = 0; v < static_cast<ValueId>(g.values.size()); ++v) {
    const Value& val = g.values[v];
    ValuePlan& p = plan.values[v];
    if (val.producer != kNoId)
      p.first_use = pc[val.producer];
    else if (val.is_graph_input || val.is_initializer || val.is_outer_scope)
      p.first_use = 0;
    int end = p.first_use;
    for (NodeId c : val.consumers) end = std::max(end, pc[c]);
    for (NodeId c : val.implicit_consumers) end = std::max(end, pc[c]);
    if (val.is_graph_output || val.is_graph_input || val.is_initializer || val.is_outer_scope)
      end = std::max(end, last);
    p.last_use = end;
  }
}

void generate_deallocation_plan(const PlanInput& in, Plan& plan) {
  const Graph& g = in.graph;
  const size_t nv = g.values.size();
  std::vector<std::vector<NodeId>> value_consumers(nv);
  for (const auto& stream : in.partition.streams)
    for (auto it = stream.rbegin(); it != stream.rend(); ++it) {
      const Node& node = g.nodes[*it];
      for_each_input_value(node, [&](ValueId v) {
        const ValueId origin = plan.values[v].reused_buffer;
        const AllocKind k = plan.values[origin].kind;
        if (k == AllocKind::kAllocate || k == AllocKind::kAllocatedExternally) value_consumers[origin].push_back(*it);
      });
    }
  plan.node_releases.assign(g.nodes.size(), {});
  for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v) {
    const auto& cs = value_consumers[v];
    if (cs.empty()) continue;
    int action = static_cast<int>(plan.release_actions.size());
    plan.release_actions.push_back({v, 0});
    int stream = plan.node_stream[cs[0]];
    bool one_stream = std::all_of(cs.begin(), cs.end(), [&](NodeId c) { return plan.node_stream[c] == stream; });
    auto add = [&](NodeId c) {
      ++plan.release_actions[action].ref_count;
      plan.node_releases[c].push_back(action);
    };
    if (one_stream)
      add(cs[0]);
    else
      for (NodeId c : cs) add(c);
  }
}

}  // namespace memplan::planner
