// Execution orders over a graph's nodes. Both are topological; they differ in tie-breaking.
#pragma once

#include <string>
#include <vector>

#include "memplan/graph.h"

namespace memplan {

// For each node, the nodes in the same graph producing its explicit or implicit inputs: one entry per
// input edge (duplicates kept), as ORT's Node::InputNodes iterates them.
std::vector<std::vector<NodeId>> input_node_edges(const Graph& graph);

// ONNX Runtime's DEFAULT order (GraphViewer): a reverse depth-first search from the leaf nodes (nodes
// no other node consumes from), visiting producers in ascending NodeIndex order through a stack, and
// emitting a node when it is left. Identical node for node to ORT 1.30 on the same graph.
std::vector<NodeId> default_order(const Graph& graph);

// ONNX Runtime's PRIORITY_BASED order: Kahn's algorithm taking Shape/Size nodes first, then the
// lowest NodeIndex among the ready nodes.
std::vector<NodeId> priority_order(const Graph& graph);

// A node on a cycle, or kNoId when the graph is acyclic.
NodeId find_cycle_node(const Graph& graph);

enum class OrderKind { kDefault, kPriority };
std::vector<NodeId> execution_order(const Graph& graph, OrderKind kind);

// The names ORT uses for nodes in partition configs: the node's name, or for an unnamed node its
// op type plus a per-op-type counter taken in `order` (ORT counts in its default order).
std::vector<std::string> ort_node_names(const Graph& graph, const std::vector<NodeId>& order);

}  // namespace memplan
