// The allocation planner: ONNX Runtime's allocation_planner.cc as free functions over plain data.
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

// For each node, a vector clock over streams: entry s = how many nodes of stream s are complete before the
// node starts, by stream order and the synchronisation steps. a happens-before b iff
// clock[b][stream(a)] > position of a in its stream.
struct HappensBefore {
  std::vector<int> node_stream;
  std::vector<int> position;  // within its stream
  size_t streams = 0;
  std::vector<int> clocks;  // node-major: clocks[node * streams + stream]
  int clock(NodeId n, size_t s) const { return clocks[static_cast<size_t>(n) * streams + s]; }
  bool before(NodeId a, NodeId b) const { return clock(b, node_stream[a]) > position[a]; }
};
HappensBefore happens_before(const Graph& graph, const partition::Partition& partition);

}  // namespace memplan::planner
