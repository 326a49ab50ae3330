// The allocation planner: ONNX Runtime's allocation_planner.cc as free functions over plain data, one file per phase
// (planner/src/planner_phases.h lists them in the order create_plan runs them).
#pragma once

#include <string>

#include "memplan/partition/op_table.h"
#include "memplan/partition/partition.h"
#include "memplan/planner/plan.h"
#include "memplan/shape_view.h"

namespace memplan::planner {

struct PlanInput {
  const Graph& graph;  // with copy nodes
  const partition::Placement& placement;
  const partition::Partition& partition;
  const std::vector<NodeId>& order;  // global execution order; each stream's nodes appear in it in stream order
  const partition::OpTable& ops;
  int opset;
  std::string parent_op = {};  // for a subgraph: the owning node's op type ("Loop", "If", ...)
  // Per value, the shape reuse and in-place decisions compare instead of the graph's (ORT's load-time view:
  // planner/pipeline.h's ort_shapes); nullptr, or a null entry: the graph's own. Sizes always stay the graph's.
  const std::vector<const KnownShape*>* decision_shapes = nullptr;
};

// Kinds, locations, reuse, lifetimes, release actions and the execution steps.
Plan create_plan(const PlanInput& in, const PlanOptions& options);

}  // namespace memplan::planner
