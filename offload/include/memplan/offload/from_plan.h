// The offload problem of one device of a planned model: its weights, activations, outputs and the bodies its nodes
// run, with every use in program counters and the cost model's time per step.
#pragma once

#include <vector>

#include "memplan/offload/offload.h"
#include "memplan/partition/streams.h"
#include "memplan/planner/pipeline.h"

namespace memplan::offload {

struct PlanProblem {
  Problem problem;
  std::vector<ValueId> buffer_value;               // per buffer: its root value, kNoId for a body's workspace
  std::vector<std::vector<ValueId>> buffer_views;  // per buffer: the other values of its unit (a weight's views)
  uint64_t weight_bytes = 0;                       // the device's weights, all of them
};

// One buffer per unit of the layout (a value and the values living in its memory in place). What can move: a weight
// (AllocateStatically) with its views, or an activation (Allocate, or a freelist Reuse) that is a unit alone; either
// read by nodes of this graph only. In-place chains and views, outputs and workspaces stay and count (graph outputs for
// the whole run when they have an arena of their own, as the plan's total counts that arena).
PlanProblem offload_problem(const planner::PlannedModel& model, const partition::Device& device,
                            const partition::CostModel& cost = {});

}  // namespace memplan::offload
