// Execution orders chosen for memory: the order decides which tensors are alive together, and on branchy graphs
// another valid order can have a much lower peak than ONNX Runtime's DEFAULT one (`--order memory`), and an order
// ORT itself runs can be given to it through the node numbering of the file (`memplan reorder`).
//
// The measure is the live peak: while a node runs, the bytes of every activation produced and not yet past its
// last use (its own inputs and outputs included; graph outputs live to the end; graph inputs and initializers are
// the caller's and never counted). It ignores in-place reuse, so the planner's arena bound for an order can only
// be lower; it is what the order alone decides.
#pragma once

#include <cstdint>
#include <vector>

#include "memplan/graph.h"

namespace memplan {

// The live peak of `order` (a topological order of graph.nodes).
uint64_t live_peak(const Graph& graph, const std::vector<NodeId>& order);

// A bound no order goes below: the largest node's inputs and outputs together, and every graph output at the end.
uint64_t live_peak_lower_bound(const Graph& graph);

struct MemoryOrder {
  std::vector<NodeId> order;
  uint64_t peak = 0;          // live_peak(order)
  uint64_t default_peak = 0;  // of ORT's DEFAULT order
  uint64_t lower_bound = 0;   // proven over all orders: the exact search's result where it finished, else
                              // live_peak_lower_bound
  bool optimal = false;       // the exact search finished on every piece: no order has a lower peak
  size_t pieces = 0;          // the graph split at single-value cuts (each piece searched on its own)
  size_t exact_pieces = 0;    // pieces the exact search finished
  double seconds = 0;
};

// The topological order of lowest live peak found within `time_budget_s`: the graph is split at single-value cuts
// (a node every other node is an ancestor or a descendant of, whose output is the only value crossing); each piece
// is searched exactly (dynamic programming over the sets of nodes run so far, memoised, bounded by the best order
// known) when small enough and time allows, else by a greedy list scheduler. Never worse than ORT's DEFAULT order.
MemoryOrder memory_order(const Graph& graph, double time_budget_s);

// A node numbering for ORT's DEFAULT order: ORT runs a depth-first search whose visiting order is fixed by node
// index (execution_order.h), so a numbering is all a file can say. Searched within `time_budget_s` (candidates from
// the memory order and from subtree memory needs, then swaps of neighbours in the numbering); never worse than the
// current numbering.
struct DfsNumbering {
  std::vector<NodeId> rank;   // per node: its position in the new numbering
  std::vector<NodeId> order;  // default_order() of the graph numbered by `rank`
  uint64_t peak = 0;          // live_peak(order)
  uint64_t default_peak = 0;  // of the graph as numbered now
};
DfsNumbering default_order_numbering(const Graph& graph, double time_budget_s);

}  // namespace memplan
