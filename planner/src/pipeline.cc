#include "memplan/planner/pipeline.h"

#include <chrono>
#include <future>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "memplan/stage_times.h"

namespace memplan::planner {

const char* const kOrtRulesMethod =
    "memplan's model of ORT's planner: memplan plan --like ort (allocation_planner.cc's reuse rules, and its memory "
    "pattern: best fit in allocation order, a reused buffer held until its last sharer is read, unread buffers "
    "held to the end), on the same graph and streams; computed, not measured in ORT";

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

namespace {

// Each value's shape in ORT's view (nullptr: initializers and values the view lacks keep their own); empty when no
// value's shape differs from the graph's (a static model's usual case). The view lists values in the graph's order
// where it can: each is looked for where the one before was found, then by name.
std::vector<const KnownShape*> ort_shapes_of(const Graph& graph, const ShapeView& ort_shapes) {
  std::vector<const KnownShape*> of(graph.values.size(), nullptr);
  std::optional<std::unordered_map<std::string_view, size_t>> by_name;  // made at the first value out of place
  size_t next = 0;
  bool differ = false;
  for (const Value& v : graph.values) {
    if (v.is_initializer) continue;
    size_t at = next;
    if (at >= ort_shapes.size() || ort_shapes.names[at] != v.name) {
      if (!by_name) by_name = index_by_name(ort_shapes);
      auto it = by_name->find(v.name);
      if (it == by_name->end()) continue;
      at = it->second;
    }
    next = at + 1;
    const KnownShape& known = ort_shapes.shapes[at];
    of[v.index] = &known;
    differ = differ || v.has_shape != known.has_shape || v.dims != known.dims;
  }
  if (!differ) of.clear();
  return of;
}

}  // namespace

Graph with_ort_shapes(const Graph& graph, const ShapeView& ort_shapes) {
  Graph out = graph;
  const std::vector<const KnownShape*> of = ort_shapes_of(graph, ort_shapes);
  for (size_t v = 0; v < of.size(); ++v)
    if (of[v]) {
      out.values[v].has_shape = of[v]->has_shape;
      out.values[v].dims = of[v]->dims;
    }
  return out;
}

void make_ort_like(PlanOptions& plan, LayoutOptions& layout) {
  plan.reuse = ReuseMode::kOrt;
  layout.solve.algorithm = arena::Algorithm::kBestFit;
  layout.ort_memory_pattern = true;
  layout.workspaces_apart = true;
}

PlannedModel plan_model(const Model& model, const PlanRequest& request) {
  return plan_model(Model(model), request);
}

PlannedModel plan_model(Model&& model, const PlanRequest& request) {
  std::optional<TimedStage> stage(std::in_place, "partition");
  partition::PartitionedModel parts = partition::partition_model(std::move(model), request.partition);
  stage.reset();
  return plan_partitioned(std::move(parts), request);
}

namespace {

// A plan of `g` under ORT's rules, its decisions from the shapes ORT knows at load time (the sizes stay the plan's).
// The plan reads those shapes beside the graph (PlanInput::decision_shapes), looked up here (on the estimate's thread,
// or under --like ort on the caller's): a copy of the graph with them cost a 1M-node plan 250 MB.
Plan plan_with_ort_shapes(const PlanInput& input, const PlanRequest& request, const PlanOptions& options) {
  std::vector<const KnownShape*> ort_of;
  if (const ShapeView* ort_shapes = request.ort_shapes ? request.ort_shapes() : nullptr)
    ort_of = ort_shapes_of(input.graph, *ort_shapes);
  PlanInput ort_input = input;
  if (!ort_of.empty()) ort_input.decision_shapes = &ort_of;
  return create_plan(ort_input, options);
}

std::vector<DeviceTotal> ort_estimate_of(const partition::PartitionedModel& parts, const PlanRequest& request) {
  const Graph& g = parts.placed.graph;
  const PlanInput input{g, parts.placed.placement, parts.partition, parts.order, parts.ops, parts.opset};
  PlanOptions ort_options = request.plan;
  LayoutOptions ort_layout = request.layout;
  make_ort_like(ort_options, ort_layout);
  ort_layout.solve.show_progress = false;
  ort_layout.bounds = false;  // (only the totals are kept)
  const Plan ort_plan = plan_with_ort_shapes(input, request, ort_options);
  ort_layout.workspaces =
      workspace_needs(plan_subgraphs(g, parts.placed.placement, parts.ops, parts.opset, ort_options, ort_layout));
  return device_totals(g, ort_plan, compute_layout(g, ort_plan, parts.partition, ort_layout));
}

}  // namespace

std::vector<DeviceTotal> ort_rules_estimate(const PlannedModel& planned, const PlanRequest& request) {
  TimedStage stage("ORT estimate (plan and layout)");
  return request.like_ort ? planned.totals : ort_estimate_of(planned.parts, request);
}

PlannedModel plan_partitioned(partition::PartitionedModel partitioned, const PlanRequest& request) {
  std::optional<TimedStage> stage;
  PlannedModel out{std::move(partitioned), {}, {}, {}, {}, {}, {}, std::nullopt, std::nullopt};
  const auto& parts = out.parts;
  const Graph& g = out.graph();
  PlanInput input{g, parts.placed.placement, parts.partition, parts.order, parts.ops, parts.opset};
  // --like ort: the plan is ORT's, so it is also the ORT figure.
  PlanOptions plan_options = request.plan;
  LayoutOptions layout_options = request.layout;
  if (request.like_ort) make_ort_like(plan_options, layout_options);
  // ORT's estimate (a second plan and layout, ORT's rules) runs on a thread beside memplan's own: both only read the
  // graph and the partition. Its stage below is the wait for it after memplan's layout.
  std::future<std::vector<DeviceTotal>> ort_estimate;
  if (request.ort_rules_estimate && !request.like_ort)
    ort_estimate = std::async(std::launch::async, [&] { return ort_estimate_of(parts, request); });
  stage.emplace("plan");
  out.plan = request.like_ort ? plan_with_ort_shapes(input, request, plan_options) : create_plan(input, plan_options);
  stage.emplace("subgraphs");
  out.subgraphs = plan_subgraphs(g, parts.placed.placement, parts.ops, parts.opset, plan_options, layout_options);
  stage.emplace("layout");
  layout_options.workspaces = workspace_needs(out.subgraphs);
  out.layout = compute_layout(g, out.plan, parts.partition, layout_options);
  stage.emplace("totals");
  out.unsized = unsized_allocations(g, out.plan);
  out.unsized_in_bodies = unsized_in_bodies(out.subgraphs);
  out.totals = device_totals(g, out.plan, out.layout);
  count_unsized_in_bodies(out.totals, out.subgraphs);
  stage.reset();
  if (request.ort_rules_estimate && request.like_ort) out.ort_rules = out.totals;
  std::optional<std::vector<DeviceTotal>> estimate;
  // (A stage of its own only here: waited for inside request.planned, it is part of that caller's stage.)
  auto wait_for_estimate = [&](bool timed) -> const std::vector<DeviceTotal>* {
    if (ort_estimate.valid()) {
      std::optional<TimedStage> waited;
      if (timed) waited.emplace("ORT estimate (plan and layout)");
      estimate = ort_estimate.get();
    }
    return estimate ? &*estimate : out.ort_rules ? &*out.ort_rules : nullptr;
  };
  if (request.planned)
    request.planned(out, {[&] {
                            return !ort_estimate.valid() ||
                                   ort_estimate.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
                          },
                          [&] { return wait_for_estimate(false); }});
  wait_for_estimate(true);
  if (estimate) out.ort_rules = std::move(estimate);
  return out;
}

}  // namespace memplan::planner
