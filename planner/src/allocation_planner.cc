// ONNX Runtime's allocation planner (onnxruntime/core/framework/allocation_planner.cc), reimplemented
// over memplan's plain data: value locations, kinds and reuse, release actions, execution steps. This file runs the
// phases (planner_phases.h, one file each) in ORT's order.
#include "memplan/planner/allocation_planner.h"

#include <numeric>
#include <optional>
#include <vector>

#include "memplan/enum_names.h"
#include "planner_phases.h"

namespace memplan::planner {

namespace {

constexpr EnumName<AllocKind> kAllocKindNames[] = {
    {AllocKind::kNotSet, "NotSet"},
    {AllocKind::kPreExisting, "PreExisting"},
    {AllocKind::kAllocateStatically, "AllocateStatically"},
    {AllocKind::kAllocate, "Allocate"},
    {AllocKind::kAllocateOutput, "AllocateOutput"},
    {AllocKind::kReuse, "Reuse"},
    {AllocKind::kShare, "Share"},
    {AllocKind::kAllocatedExternally, "AllocatedExternally"},
};

constexpr EnumName<StepKind> kStepKindNames[] = {
    {StepKind::kLaunchKernel, "LaunchKernel"},
    {StepKind::kBarrier, "Barrier"},
    {StepKind::kTriggerDownstream, "TriggerDownstream"},
    {StepKind::kWaitOnEP, "WaitOnEP"},
    {StepKind::kActivateNotification, "ActivateNotification"},
};

constexpr EnumName<ReuseMode> kReuseModeNames[] = {
    {ReuseMode::kMemplan, "memplan"},
    {ReuseMode::kOrt, "ort"},
    {ReuseMode::kNone, "none"},
};

}  // namespace

const char* alloc_kind_name(AllocKind k) {
  return enum_name(kAllocKindNames, k, "NotSet");
}

bool parse_alloc_kind(const std::string& name, AllocKind& out) {
  const std::optional<AllocKind> k = parse_enum(kAllocKindNames, name);
  if (k) out = *k;
  return k.has_value();
}

const char* step_kind_name(StepKind k) {
  return enum_name(kStepKindNames, k, "?");
}

const char* reuse_mode_name(ReuseMode m) {
  return enum_name(kReuseModeNames, m, "?");
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
