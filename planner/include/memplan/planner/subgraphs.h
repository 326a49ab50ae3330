// The bodies of If/Loop/Scan (and any node with a graph attribute), planned as ONNX Runtime plans them: once
// per execution of their owner, each with a plan of its own (outer-scope values PreExisting, one stream on the
// owner's device) and an arena of its own per device. While the owner runs it holds the largest of its bodies'
// arenas (If runs one branch): that memory is the owner's workspace in the enclosing graph's layout, so the
// enclosing arena's size and lower bound count everything the bodies allocate, nested bodies included.
#pragma once

#include <string>
#include <vector>

#include "memplan/device_totals.h"
#include "memplan/planner/allocation_planner.h"
#include "memplan/planner/layout.h"

namespace memplan::planner {

struct SubgraphPlan {
  NodeId owner = kNoId;   // the node in the enclosing graph
  std::string attribute;  // "then_branch", "body", ...
  const Graph* graph = nullptr;
  Plan plan;
  Layout layout;                 // one arena per device, nested owners' workspaces included
  std::vector<ValueId> unsized;  // values the body allocates whose size is unknown (left out of its arenas)
  std::vector<SubgraphPlan> nested;
};

// Every subgraph of `graph`, recursively, innermost first so that each body's layout holds the workspaces of
// the bodies nested in it. `layout` gives alignment and the arena algorithm; the Loop-body Share rule comes
// from the owner's op type.
std::vector<SubgraphPlan> plan_subgraphs(const Graph& graph, const partition::Placement& placement,
                                         const partition::OpTable& ops, int opset, const PlanOptions& options,
                                         const LayoutOptions& layout);

// What each owner holds while it runs: per owner and device, the largest arena of its bodies there.
std::vector<Workspace> workspace_needs(const std::vector<SubgraphPlan>& bodies);

// Values the bodies (nested ones too) allocate without a known size, as "node 'owner' body: value" lines.
std::vector<std::string> unsized_in_bodies(const std::vector<SubgraphPlan>& bodies);

// Counts those values in the totals of the devices they are on (a total with any is a lower bound).
void count_unsized_in_bodies(std::vector<DeviceTotal>& totals, const std::vector<SubgraphPlan>& bodies);

}  // namespace memplan::planner
