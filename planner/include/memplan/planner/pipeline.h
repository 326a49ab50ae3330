// The whole planning pipeline after loading, in one call: partition, allocation plan, subgraph plans,
// arena layout, device totals and the comparison with ORT's rules. `memplan plan`, the tests and the
// benchmark all go through it, so they plan the same way.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "memplan/device_totals.h"
#include "memplan/graph.h"
#include "memplan/partition/pipeline.h"
#include "memplan/planner/allocation_planner.h"
#include "memplan/planner/layout.h"

namespace memplan::planner {

struct PlanRequest {
  partition::PartitionRequest partition;
  PlanOptions plan;
  LayoutOptions layout;
  // Also plan with ORT's reuse rules and its best-fit layout, for the "what ORT's rules would need" figure.
  bool ort_rules_estimate = true;
};

struct PlannedModel {
  partition::PartitionedModel parts;  // parts.placed.graph is the graph the plan indexes
  Plan plan;
  Layout layout;
  std::vector<SubgraphPlan> subgraphs;
  std::vector<ValueId> unsized;     // values the plan must allocate whose size is unknown: the plan is incomplete
  std::vector<DeviceTotal> totals;  // largest first
  std::optional<std::vector<DeviceTotal>> ort_rules;  // the same graph under --reuse ort, best-fit

  const Graph& graph() const { return parts.placed.graph; }
  bool complete() const { return unsized.empty(); }
};

PlannedModel plan_model(const Model& model, const PlanRequest& request);

// Values of kind Allocate, AllocateOutput or AllocateStatically without a known size.
std::vector<ValueId> unsized_allocations(const Graph& graph, const Plan& plan);

// Per device: the layout's arenas by purpose, the caller's graph inputs placed there, unsized values.
std::vector<DeviceTotal> device_totals(const Graph& graph, const Plan& plan, const Layout& layout);

// How the ORT-rules figure is made, for reports (it is a model of ORT's planner, not a measurement).
extern const char* const kOrtRulesMethod;

}  // namespace memplan::planner
