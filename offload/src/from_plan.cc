#include "memplan/offload/from_plan.h"

#include <algorithm>
#include <map>

#include "memplan/chain_roots.h"
#include "memplan/error.h"

namespace memplan::offload {

PlanProblem offload_problem(const planner::PlannedModel& model, const partition::Device& device,
                            const partition::CostModel& cost) {
  using planner::AllocKind;
  const Graph& g = model.graph();
  const planner::Plan& plan = model.plan;
  PlanProblem out;
  // Program counters order the steps of one stream; on several streams of one device, buffers the counters show
  // apart may run side by side (the layout's happens-before conflicts), which this problem does not model yet.
  int device_streams = 0;
  for (const auto& s : plan.streams) device_streams += s.device == device;
  if (device_streams > 1)
    throw Error(ExitCode::kUsage, "offload plans a device with one stream for now; " + partition::device_name(device) +
                                      " has " + std::to_string(device_streams) + " (use --streams-per-device 1)");
  const int steps = static_cast<int>(plan.execution_order.size());
  std::vector<int> pc(g.nodes.size(), -1);
  out.problem.step_us.resize(steps);
  for (int t = 0; t < steps; ++t) {
    const NodeId n = plan.execution_order[t];
    pc[n] = t;
    const partition::Device d = plan.streams[plan.node_stream[n]].device;
    out.problem.step_us[t] = partition::node_cost_us(g, n, d.type, cost);
  }

  // The layout's units: a value and every value living in its memory in place (chain_roots over inplace_of), as
  // planner/layout.cc groups them; a freelist Reuse is a unit of its own there, and here.
  std::vector<int32_t> parent(plan.values.size());
  for (size_t v = 0; v < plan.values.size(); ++v) parent[v] = plan.values[v].inplace_of;
  const std::vector<int32_t> roots = chain_roots(parent);
  std::map<ValueId, std::vector<ValueId>> members;
  for (size_t v = 0; v < plan.values.size(); ++v) {
    const ValueId root = roots[v] < 0 ? static_cast<ValueId>(v) : roots[v];
    const AllocKind k = plan.values[root].kind;
    if (k != AllocKind::kAllocate && k != AllocKind::kReuse && k != AllocKind::kAllocateStatically &&
        k != AllocKind::kAllocateOutput)
      continue;
    if (!(plan.values[root].location == device) || !g.values[root].bytes) continue;
    members[root].push_back(static_cast<ValueId>(v));
  }
  for (const auto& [root, values] : members) {
    Buffer b;
    for (ValueId v : values) b.bytes = std::max(b.bytes, g.values[v].bytes.value_or(0));
    const AllocKind k = plan.values[root].kind;
    // Graph outputs in an arena of their own count for the whole run, as that arena's size does in the plan's total.
    const bool own_outputs_arena = k == AllocKind::kAllocateOutput && !model.layout.pack_outputs;
    b.weight = k == AllocKind::kAllocateStatically || own_outputs_arena;
    bool implicit = false, output = false;
    for (ValueId v : values) {
      const Value& value = g.values[v];
      if (value.producer != kNoId && pc[value.producer] >= 0) b.uses.push_back(pc[value.producer]);
      for (NodeId n : value.consumers)
        if (pc[n] >= 0) b.uses.push_back(pc[n]);
      for (NodeId n : value.implicit_consumers)
        if (pc[n] >= 0) b.uses.push_back(pc[n]);
      implicit = implicit || !value.implicit_consumers.empty();
      output = output || value.is_graph_output;
      // The plan's own lifetime bounds (graph outputs are held to the end).
      if (!b.weight) {
        if (plan.values[v].first_use >= 0) b.uses.push_back(plan.values[v].first_use);
        if (plan.values[v].last_use >= 0) b.uses.push_back(plan.values[v].last_use);
      }
    }
    std::sort(b.uses.begin(), b.uses.end());
    b.uses.erase(std::unique(b.uses.begin(), b.uses.end()), b.uses.end());
    if (!b.weight && b.uses.empty()) continue;  // never produced nor read here: nothing on the device
    // What moves is read by nodes of this graph only. An activation moves alone (an in-place chain is written at more
    // than one step); a weight with the views of it (Identity of a tied weight, say): offload_model rewires each
    // reader of a view to the staging copy its step is in.
    std::vector<ValueId> views;
    bool views_only = true;
    for (ValueId v : values)
      if (v != root) {
        views.push_back(v);
        views_only = views_only && plan.values[v].alias;
      }
    b.offloadable =
        !implicit && !output &&
        (b.weight ? views_only : values.size() == 1 && (k == AllocKind::kAllocate || k == AllocKind::kReuse));
    if (own_outputs_arena) b.offloadable = false;
    if (k == AllocKind::kAllocateStatically) out.weight_bytes += b.bytes;
    out.problem.buffers.push_back(std::move(b));
    out.buffer_value.push_back(root);
    out.buffer_views.push_back(std::move(views));
  }
  for (const planner::Workspace& w : model.layout.workspaces) {
    if (!(w.location == device) || w.bytes == 0 || pc[w.node] < 0) continue;
    out.problem.buffers.push_back({w.bytes, false, false, {pc[w.node]}});
    out.buffer_value.push_back(kNoId);
    out.buffer_views.emplace_back();
  }
  return out;
}

}  // namespace memplan::offload
