// The allocation planner's phases, in the order create_plan (allocation_planner.cc) runs them: each a free function
// that reads the input and fills its part of the plan. ORT's name for each is given beside it. Internal to planner/.
#pragma once

#include <vector>

#include "memplan/partition/placement.h"
#include "memplan/planner/allocation_planner.h"

namespace memplan::planner {

// locations.cc. ComputeValueLocation: where each value lives (its producer's device, or the CPU for an output the
// kernel writes there; graph inputs where their consumers read them).
void compute_locations(const PlanInput& in, const partition::NodeFacts& facts, Plan& plan);
// ComputePlanForInputsAndWeights: graph inputs and outer-scope values are PreExisting; initializers are
// AllocateStatically where they are first used (explicit uses first, then uses inside subgraphs).
void plan_inputs_and_weights(const PlanInput& in, const partition::NodeFacts& facts, Plan& plan);

// reuse_walk.cc. How the reuse decisions walk the nodes.
enum class WalkMode {
  kGlobal,     // memplan's: the global order at once, in-place and freelist reuse; across streams only between
               // buffers whose users the synchronisation orders before the node (happens_before.h)
  kPerStream,  // ORT's when no device has two streams: each stream alone, in-place reuse, and freelist reuse
               // unless ReuseMode::kNone
  kBaseline,   // ORT's on several streams of a device: each stream alone, no reuse (optimize_reuse_for_multi_stream
               // then adds it)
};
WalkMode walk_mode(const PlanInput& in, const PlanOptions& options);

// ComputeReuseCount and ComputeSingleStreamReusePlan, once or per stream as `mode` says: kinds Allocate,
// AllocateOutput, Reuse, Share and AllocatedExternally. `buffer` is each value's root buffer while planning (ORT's
// reused_buffer_index, one entry per value), which the multi-stream pass continues from.
void reuse_walk(const PlanInput& in, const PlanOptions& options, const partition::NodeFacts& facts, WalkMode mode,
                std::vector<ValueId>& buffer, Plan& plan);

// ort_multistream.cc. OptimizeReusePlanForMultiStream: reuse on the kBaseline walk's plan, as ORT adds it.
void optimize_reuse_for_multi_stream(const PlanInput& in, const partition::NodeFacts& facts,
                                     std::vector<ValueId>& buffer, Plan& plan);

// deallocation.cc. Each value's first and last use, as positions in the execution order.
void compute_lifetimes(const PlanInput& in, Plan& plan);
// GenerateDeallocationPlan: the release actions and the nodes that run them.
void generate_deallocation_plan(const PlanInput& in, Plan& plan);

// steps.cc. BuildExecutionPlan: each stream's steps (kernel launches, triggers, notifications, barriers, waits).
void build_execution_plan(const PlanInput& in, Plan& plan);

}  // namespace memplan::planner
