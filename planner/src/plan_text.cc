// The text form is ORT's print of its plan, for reading: names show control characters escaped (text_escape.h).
#include <sstream>

#include "memplan/planner/plan_io.h"
#include "memplan/text_escape.h"

namespace memplan::planner {
namespace {

std::string ort_device(Device d) {
  return "Device:[DeviceType:" + std::to_string(static_cast<int>(d.type)) +
         " MemoryType:0 DeviceId:" + std::to_string(d.id) + "]";
}

std::string step_text(const Graph& g, const Step& s) {
  switch (s.kind) {
    case StepKind::kLaunchKernel:
      return "LaunchKernel - NodeIndex: " + std::to_string(s.node) + ", Name: " + terminal_text(g.nodes[s.node].name);
    case StepKind::kBarrier:
      return "Barrier - BarrierId: " + std::to_string(s.barrier) + ", Count: 2";
    case StepKind::kWaitOnEP:
      return "WaitOnEP - NotificationId: " + std::to_string(s.notification);
    case StepKind::kActivateNotification:
      return "ActivateNotification - NotificationId: " + std::to_string(s.notification);
    case StepKind::kTriggerDownstream:
      return "TriggerDownstream - TriggerPointIndex: " + std::to_string(s.trigger);
  }
  return "";
}

}  // namespace

std::string plan_to_text(const PlanContext& ctx) {
  const Graph& g = ctx.graph;
  const Plan& p = ctx.plan;
  std::ostringstream out;
  out << "Allocation Plan:\n(ort_value_idx) output_name : <allocation plan>\n";
  for (const Value& v : g.values) {
    const ValuePlan& vp = p.values[v.index];
    out << "(" << v.index << ")" << terminal_text(v.name) << " : " << alloc_kind_name(vp.kind);
    if (vp.kind == AllocKind::kReuse) out << " " << vp.reused_buffer;
    out << ", " << ort_device(vp.location) << "\n";
  }
  out << "\nExecution Plan:\n";
  for (size_t i = 0; i < p.streams.size(); ++i) {
    out << "Start logic stream: " << i << " on device: " << static_cast<int>(p.streams[i].device.type) << "\n";
    for (const Step& s : p.streams[i].steps) out << step_text(g, s) << "\n";
    out << "End logic stream : " << i << "\n";
  }
  return out.str();
}

}  // namespace memplan::planner
