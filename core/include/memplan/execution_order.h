// Execution orders over a graph's nodes. All are topological; they differ in tie-breaking.
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

// The same if the nodes were numbered by `rank` (a permutation: rank[node] is its NodeIndex): what ORT runs once a
// file lists the nodes in that numbering (memplan reorder).
std::vector<NodeId> default_order_by_rank(const Graph& graph, const std::vector<NodeId>& rank);

// ONNX Runtime's PRIORITY_BASED order: Kahn's algorithm taking Shape/Size nodes first, then the
// lowest NodeIndex among the ready nodes.
std::vector<NodeId> priority_order(const Graph& graph);

// The order the model lists its nodes in. ONNX requires it to be topological, and a model ONNX Runtime saved
// (optimizedModelFilePath) lists them in the order that session ran them, which ORT's default order on the saved
// file does not repeat (fused nodes took new indices in the session). Throws Error(kBadInput) naming the first node
// listed before one of its producers.
std::vector<NodeId> written_order(const Graph& graph);

// A node on a cycle, or kNoId when the graph is acyclic.
NodeId find_cycle_node(const Graph& graph);

// kMemory: the order of lowest live peak found within `time_budget_s` (memory_order.h).
enum class OrderKind { kDefault, kPriority, kWritten, kMemory };
std::vector<NodeId> execution_order(const Graph& graph, OrderKind kind, double time_budget_s = 1.0);

// "default", "priority", "written" (the --order values); parse_order_kind throws Error(kUsage) on another.
const char* order_kind_name(OrderKind kind);
std::vector<std::string> order_kind_names();
OrderKind parse_order_kind(const std::string& name);
// The --order option's help text, shared by the subcommands that take it.
extern const char* const kOrderHelp;

// The names ORT uses for nodes in partition configs: the node's name, or for an unnamed node its
// op type plus a per-op-type counter taken in `order` (ORT counts in its default order).
std::vector<std::string> ort_node_names(const Graph& graph, const std::vector<NodeId>& order);

}  // namespace memplan
