#include "memplan/planner/subgraphs.h"

#include <map>

#include "memplan/execution_order.h"
#include "memplan/partition/partition.h"
#include "memplan/planner/pipeline.h"

namespace memplan::planner {

std::vector<SubgraphPlan> plan_subgraphs(const Graph& graph, const partition::Placement& placement,
                                         const partition::OpTable& ops, int opset, const PlanOptions& options,
                                         const LayoutOptions& layout) {
  std::vector<SubgraphPlan> out;
  for (const Graph& sub : graph.subgraphs) {
    // The body runs where its owner runs: one stream on that device, in ORT's default order.
    partition::Device device = placement.node_device[sub.parent_node];
    partition::Placement sub_placement{std::vector<partition::Device>(sub.nodes.size(), device),
                                       std::vector<std::string>(sub.nodes.size())};
    auto order = default_order(sub);
    const partition::Partition part = partition::default_partition(sub, sub_placement, order);  // (one stream)
    PlanInput in{sub, sub_placement, part, order, ops, opset, graph.nodes[sub.parent_node].op_type};
    SubgraphPlan sp;
    sp.owner = sub.parent_node;
    sp.attribute = sub.parent_attribute;
    sp.graph = &sub;
    sp.plan = create_plan(in, options);
    sp.nested = plan_subgraphs(sub, sub_placement, ops, opset, options, layout);
    LayoutOptions body = layout;
    body.one_arena = true;
    body.pack_outputs = true;
    body.solve.show_progress = false;
    body.workspaces = workspace_needs(sp.nested);
    sp.layout = compute_layout(sub, sp.plan, part, body);
    sp.unsized = unsized_allocations(sub, sp.plan);
    out.push_back(std::move(sp));
  }
  return out;
}

std::vector<Workspace> workspace_needs(const std::vector<SubgraphPlan>& bodies) {
  std::map<std::pair<NodeId, Device>, uint64_t> need;
  for (const SubgraphPlan& sp : bodies) {
    std::map<Device, uint64_t> body;  // a body's arenas on one device (its own, and its nested bodies' apart)
    for (const Arena& a : sp.layout.arenas) body[a.location] += a.bytes;
    for (const auto& [location, bytes] : body) {
      uint64_t& held = need[{sp.owner, location}];
      held = std::max(held, bytes);
    }
  }
  std::vector<Workspace> out;
  for (const auto& [key, bytes] : need) out.push_back({key.first, key.second, bytes, -1, 0});
  return out;
}

std::vector<std::string> unsized_in_bodies(const std::vector<SubgraphPlan>& bodies) {
  std::vector<std::string> out;
  for (const SubgraphPlan& sp : bodies) {
    for (ValueId v : sp.unsized)
      out.push_back("node " + std::to_string(sp.owner) + " " + sp.attribute + ": '" + sp.graph->values[v].name + "'" +
                    (sp.graph->values[v].unknown_reason.empty() ? "" : " " + sp.graph->values[v].unknown_reason));
    for (std::string& line : unsized_in_bodies(sp.nested)) out.push_back(std::move(line));
  }
  return out;
}

void count_unsized_in_bodies(std::vector<DeviceTotal>& totals, const std::vector<SubgraphPlan>& bodies) {
  for (const SubgraphPlan& sp : bodies) {
    for (ValueId v : sp.unsized) ++total_for(totals, partition::device_name(sp.plan.values[v].location)).unsized;
    count_unsized_in_bodies(totals, sp.nested);
  }
}

}  // namespace memplan::planner
