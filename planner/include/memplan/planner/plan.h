// The plan: for every value how its memory is obtained and when it is released, and for every logical
// stream the steps it executes and how streams synchronise — ONNX Runtime's SequentialExecutionPlan, as
// plain data. The arena layout (offsets) is added by planner/layout.h.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "memplan/graph.h"
#include "memplan/partition/device.h"

namespace memplan::planner {

using partition::Device;

enum class AllocKind {
  kNotSet,
  kPreExisting,
  kAllocateStatically,
  kAllocate,
  kAllocateOutput,
  kReuse,
  kShare,
  kAllocatedExternally
};
const char* alloc_kind_name(AllocKind k);  // "Allocate", "Reuse", ... as ORT prints them
bool parse_alloc_kind(const std::string& name, AllocKind& out);

struct ValuePlan {
  AllocKind kind = AllocKind::kNotSet;
  ValueId reused_buffer = kNoId;  // the root buffer: the value itself unless Reuse or Share
  bool inplace = false;           // a Reuse through Alias or MayInplace (the kernel writes over its input)
  // The value whose memory this one takes in place (Alias, MayInplace, Share); kNoId otherwise. A freelist
  // Reuse is ORT's bookkeeping; the arena layout only has to keep in-place chains together.
  ValueId inplace_of = kNoId;
  bool alias = false;  // a view of inplace_of (Alias, VariadicAlias, Share): the same bytes, nothing is written
  Device location;
  // Lifetime in program counters (positions in the global execution order); -1 when the value is never
  // produced or used by a node. Graph inputs and initializers start at 0, graph outputs end at the last.
  int first_use = -1;
  int last_use = -1;
};

enum class StepKind { kLaunchKernel, kBarrier, kTriggerDownstream, kWaitOnEP, kActivateNotification };
const char* step_kind_name(StepKind k);  // "LaunchKernel", "Barrier", ...

struct Step {
  StepKind kind = StepKind::kLaunchKernel;
  NodeId node = kNoId;
  int barrier = -1;        // Barrier: its id
  int trigger = -1;        // Barrier: the TriggerDownstream it waits for; TriggerDownstream: its id
  int notification = -1;   // WaitOnEP, ActivateNotification
  bool host_wait = false;  // WaitOnEP: the host blocks until the notification (ORT's wait handle for CPU memory
                           // or a CPU stream); otherwise the stream waits on the device
};

struct LogicStream {
  Device device;
  std::vector<Step> steps;
};

struct ReleaseAction {
  ValueId value = kNoId;  // a root buffer
  int ref_count = 0;      // how many of its release points must fire before it is freed
};

enum class ReuseMode {
  kMemplan,  // ORT's rules, generalised: same-size reuse across shapes, and multi-stream reuse checked by
             // happens-before
  kOrt,      // ORT's rules exactly (allocation_planner.cc)
  kNone,     // no reuse (ORT's enable_mem_reuse = false); in-place Alias still applies
};
const char* reuse_mode_name(ReuseMode m);

struct PlanOptions {
  ReuseMode reuse = ReuseMode::kMemplan;
};

struct Plan {
  std::vector<ValuePlan> values;  // per value of the graph
  std::vector<ReleaseAction> release_actions;
  std::vector<std::vector<int>> node_releases;  // per node: release action indices it performs
  std::vector<LogicStream> streams;
  std::vector<int> node_stream;                                    // per node
  std::vector<NodeId> execution_order;                             // the global order (program counters)
  std::vector<int> notification_owners;                            // per notification: owning stream
  std::map<int, std::vector<std::pair<int, int>>> downstream_map;  // trigger -> (stream, step index) barriers
  int num_barriers = 0;
  ReuseMode reuse = ReuseMode::kMemplan;
};

}  // namespace memplan::planner
