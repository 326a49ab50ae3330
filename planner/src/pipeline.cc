#include "memplan/planner/pipeline.h"

namespace memplan::planner {

const char* const kOrtRulesMethod =
    "memplan's model of ORT's planner: --reuse ort (allocation_planner.cc's reuse rules) and --arena-algorithm "
    "best-fit (its memory pattern), on the same graph and streams; computed, not measured in ORT";

std::vector<ValueId> unsized_allocations(const Graph& g, const Plan& plan) {
  std::vector<ValueId> out;
  for (const Value& v : g.values) {
    AllocKind k = plan.values[v.index].kind;
    if (!v.bytes &&
        (k == AllocKind::kAllocate || k == AllocKind::kAllocateOutput || k == AllocKind::kAllocateStatically))
      out.push_back(v.index);
  }
  return out;
}

std::vector<DeviceTotal> device_totals(const Graph& g, const Plan& plan, const Layout& layout) {
  std::vector<DeviceTotal> totals;
  for (const Arena& a : layout.arenas) add_arena_bytes(totals, partition::device_name(a.location), a.purpose, a.bytes);
  for (const Value& v : g.values)
    if (v.is_graph_input && !v.is_initializer && v.bytes)
      total_for(totals, partition::device_name(plan.values[v.index].location)).inputs += *v.bytes;
  for (ValueId id : unsized_allocations(g, plan))
    ++total_for(totals, partition::device_name(plan.values[id].location)).unsized;
  sort_by_total(totals);
  return totals;
}

PlannedModel plan_model(const Model& model, const PlanRequest& request) {
  PlannedModel out{partition::partition_model(model, request.partition), {}, {}, {}, {}, {}, std::nullopt};
  const auto& parts = out.parts;
  const Graph& g = out.graph();
  PlanInput input{g, parts.placed.placement, parts.partition, parts.order, parts.ops, parts.opset};
  out.plan = create_plan(input, request.plan);
  out.layout = compute_layout(g, out.plan, parts.partition, request.layout);
  out.subgraphs = plan_subgraphs(g, parts.placed.placement, parts.ops, parts.opset, request.plan);
  out.unsized = unsized_allocations(g, out.plan);
  out.totals = device_totals(g, out.plan, out.layout);
  if (request.ort_rules_estimate) {
    PlanOptions ort_options = request.plan;
    ort_options.reuse = ReuseMode::kOrt;
    LayoutOptions ort_layout = request.layout;
    ort_layout.solve.algorithm = Algorithm::kBestFit;
    ort_layout.solve.show_progress = false;
    Plan ort_plan = create_plan(input, ort_options);
    out.ort_rules = device_totals(g, ort_plan, compute_layout(g, ort_plan, parts.partition, ort_layout));
  }
  return out;
}

}  // namespace memplan::planner
