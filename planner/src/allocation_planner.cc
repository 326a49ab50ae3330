// ONNX Runtime's allocation planner (onnxruntime/core/framework/allocation_planner.cc), reimplemented
// over memplan's plain data: value locations, kinds and reuse, release actions, execution steps. This file runs the
// phases (planner_phases.h, one file each) in ORT's order.
#include "memplan/planner/allocation_planner.h"

#include <numeric>
#include <vector>

#include "planner_phases.h"

namespace memplan::planner {

const char* alloc_kind_name(AllocKind k) {
  switch (k) {
    case AllocKind::kPreExisting:
      return "PreExisting";
    case AllocKind::kAllocateStatically:
      return "AllocateStatically";
    case AllocKind::kAllocate:
      return "Allocate";
    case AllocKind::kAllocateOutput:
      return "AllocateOutput";
    case AllocKind::kReuse:
      return "Reuse";
    case AllocKind::kShare:
      return "Share";
    case AllocKind::kAllocatedExternally:
      return "AllocatedExternally";
    case AllocKind::kNotSet:
      break;
  }
  return "NotSet";
}

bool parse_alloc_kind(const std::string& name, AllocKind& out) {
  for (AllocKind k :
       {AllocKind::kNotSet, AllocKind::kPreExisting, AllocKind::kAllocateStatically, AllocKind::kAllocate,
        AllocKind::kAllocateOutput, AllocKind::kReuse, AllocKind::kShare, AllocKind::kAllocatedExternally})
    if (name == alloc_kind_name(k)) {
      out = k;
      return true;
    }
  return false;
}

const char* step_kind_name(StepKind k) {
  switch (k) {
    case StepKind::kLaunchKernel:
      return "LaunchKernel";
    case StepKind::kBarrier:
      return "Barrier";
    case StepKind::kTriggerDownstream:
      return "TriggerDownstream";
    case StepKind::kWaitOnEP:
      return "WaitOnEP";
    case StepKind::kActivateNotification:
      return "ActivateNotification";
  }
  return "?";
}

const char* reuse_mode_name(ReuseMode m) {
  switch (m) {
    case ReuseMode::kMemplan:
      return "memplan";
    case ReuseMode::kOrt:
      return "ort";
    case ReuseMode::kNone:
      return "none";
  }
  return "?";
}

Plan create_plan(const PlanInput& in, const PlanOptions& options) {
  const size_t nv = in.graph.values.size();
  Plan plan;
  plan.reuse = options.reuse;
  plan.values.assign(nv, ValuePlan{});
  for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v) plan.values[v].reused_buffer = v;
  plan.node_stream = in.partition.node_stream;
  plan.execution_order = in.order;
  const partition::NodeFacts facts(in.graph, in.placement, in.ops, in.opset);
  std::vector<ValueId> buffer(nv);  // each value its own buffer until a walk says otherwise
  std::iota(buffer.begin(), buffer.end(), 0);

  compute_locations(in, facts, plan);
  plan_inputs_and_weights(in, facts, plan);
  const WalkMode mode = walk_mode(in, options);
  reuse_walk(in, options, facts, mode, buffer, plan);
  if (mode == WalkMode::kBaseline) optimize_reuse_for_multi_stream(in, facts, buffer, plan);
  compute_lifetimes(in, plan);
  generate_deallocation_plan(in, plan);
  build_execution_plan(in, plan);
  return plan;
}

}  // namespace memplan::planner
