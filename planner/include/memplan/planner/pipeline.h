// The whole planning pipeline after loading, in one call: partition, allocation plan, subgraph plans,
// arena layout, device totals and the comparison with ORT's rules. `memplan plan`, the tests and the
// benchmark all go through it, so they plan the same way.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "memplan/device_totals.h"
#include "memplan/graph.h"
#include "memplan/partition/pipeline.h"
#include "memplan/planner/allocation_planner.h"
#include "memplan/planner/layout.h"
#include "memplan/planner/offload_record.h"
#include "memplan/planner/plan_io.h"
#include "memplan/planner/subgraphs.h"
#include "memplan/shape_view.h"

namespace memplan::planner {

struct PlannedModel;
struct PlanRequest {
  partition::PartitionRequest partition;
  PlanOptions plan;
  LayoutOptions layout;
  // Also plan as ORT does (--like ort), for the "what ORT's rules would need" figure.
  bool ort_rules_estimate = true;
  // The shapes ORT knows when it loads the model (onnx_io::OrtShapes::get, which may wait for them: called only
  // where they are needed, on the thread of ORT's estimate). ORT decides reuse and in-place from those shapes;
  // without them (no function, or nullptr), from the plan's.
  std::function<const ShapeView*()> ort_shapes;
  // The plan itself is ORT's (memplan plan --like ort): make_ort_like() options, decisions from ort_shapes too.
  bool like_ort = false;
  // Called once memplan's own plan, layout and totals are made, before the wait for ORT's estimate (which runs on
  // a thread of its own): PlannedModel::ort_rules is unset there, and the function given waits for it. `memplan
  // plan` writes the plan file here, so that the writing and the estimate go on side by side.
  std::function<void(const PlannedModel&, const PendingOrtRules&)> planned;
};

// --like ort: ORT's reuse rules, best fit in allocation order, and ORT's memory pattern in the layout.
void make_ort_like(PlanOptions& plan, LayoutOptions& layout);

struct PlannedModel {
  partition::PartitionedModel parts;  // parts.placed.graph is the graph the plan indexes
  Plan plan;
  Layout layout;
  std::vector<SubgraphPlan> subgraphs;  // their owners' workspaces are in `layout`
  std::vector<ValueId> unsized;         // values the plan must allocate whose size is unknown: the plan is incomplete
  std::vector<std::string> unsized_in_bodies;         // the same inside If/Loop/Scan bodies (subgraphs.h)
  std::vector<DeviceTotal> totals;                    // largest first
  std::optional<std::vector<DeviceTotal>> ort_rules;  // the same graph and streams planned --like ort
  std::optional<OffloadRecord> offload;               // set by offload/offload_model.h when it moved anything

  const Graph& graph() const { return parts.placed.graph; }
  bool complete() const { return unsized.empty() && unsized_in_bodies.empty(); }
};

PlannedModel plan_model(const Model& model, const PlanRequest& request);
// The same, the model's graph moved into the result instead of copied (model.graph is left empty).
PlannedModel plan_model(Model&& model, const PlanRequest& request);
// The same after the partition stage, for a partitioned model a later stage rewrote (offload's copies).
PlannedModel plan_partitioned(partition::PartitionedModel parts, const PlanRequest& request);
// ORT's figure for a model planned without it (PlanRequest::ort_rules_estimate off): its graph and streams planned
// --like ort, the device totals of that plan (under --like ort, the plan's own). What plan_partitioned computes beside
// the plan when asked; offload asks here only for the plan it keeps.
std::vector<DeviceTotal> ort_rules_estimate(const PlannedModel& planned, const PlanRequest& request);

// The graph with each value's shape as ORT knows it at load time (from `ort_shapes`, matched by name), sizes
// kept: what ORT's reuse and in-place decisions see. Initializers, and values the view lacks (a copy the partition
// added), keep their shapes.
Graph with_ort_shapes(const Graph& graph, const ShapeView& ort_shapes);

// Values of kind Allocate, AllocateOutput or AllocateStatically without a known size.
std::vector<ValueId> unsized_allocations(const Graph& graph, const Plan& plan);

// Per device: the layout's arenas by purpose, the caller's graph inputs placed there, unsized values.
std::vector<DeviceTotal> device_totals(const Graph& graph, const Plan& plan, const Layout& layout);

// How the ORT-rules figure is made, for reports (it is a model of ORT's planner, not a measurement).
extern const char* const kOrtRulesMethod;

}  // namespace memplan::planner
