#include "memplan/execution_order.h"

#include <algorithm>
#include <map>
#include <optional>
#include <queue>
#include <utility>

#include "memplan/enum_names.h"
#include "memplan/error.h"
#include "memplan/memory_order.h"

namespace memplan {

std::vector<std::vector<NodeId>> input_node_edges(const Graph& graph) {
  std::vector<std::vector<NodeId>> edges(graph.nodes.size());
  for (const Node& node : graph.nodes)
    for_each_input_value(node, [&](ValueId v) {
      const NodeId p = graph.values[v].producer;
      if (p != kNoId) edges[node.index].push_back(p);
    });
  return edges;
}

std::vector<NodeId> default_order_by_rank(const Graph& graph, const std::vector<NodeId>& rank) {
  const size_t n = graph.nodes.size();
  auto producers = input_node_edges(graph);
  std::vector<bool> has_output_node(n, false);
  for (const auto& ps : producers)
    for (NodeId p : ps) has_output_node[p] = true;
  auto by_rank = [&](NodeId a, NodeId b) { return rank[a] < rank[b]; };
  // (node, leaving) entries; leaves pushed in rank order, so the highest rank is visited first.
  std::vector<std::pair<NodeId, bool>> stack;
  std::vector<NodeId> leaves;
  for (NodeId i = 0; i < static_cast<NodeId>(n); ++i)
    if (!has_output_node[i]) leaves.push_back(i);
  std::sort(leaves.begin(), leaves.end(), by_rank);
  for (NodeId leaf : leaves) stack.emplace_back(leaf, false);
  std::vector<bool> visited(n, false);
  std::vector<NodeId> order;
  order.reserve(n);
  while (!stack.empty()) {
    auto [node, leaving] = stack.back();
    stack.pop_back();
    if (leaving) {
      order.push_back(node);
      continue;
    }
    if (visited[node]) continue;
    visited[node] = true;
    stack.emplace_back(node, true);
    std::vector<NodeId> sorted = producers[node];
    std::sort(sorted.begin(), sorted.end(), by_rank);
    for (NodeId p : sorted)
      if (!visited[p]) stack.emplace_back(p, false);
  }
  return order;
}

std::vector<NodeId> default_order(const Graph& graph) {
  std::vector<NodeId> identity(graph.nodes.size());
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<NodeId>(i);
  return default_order_by_rank(graph, identity);
}

namespace {

// For Kahn's algorithm: each node's successors, and how many of its input edges are not yet placed.
std::pair<std::vector<std::vector<NodeId>>, std::vector<int>> kahn_edges(
    const std::vector<std::vector<NodeId>>& producers) {
  const size_t n = producers.size();
  std::vector<std::vector<NodeId>> successors(n);
  std::vector<int> pending(n, 0);
  for (NodeId i = 0; i < static_cast<NodeId>(n); ++i)
    for (NodeId p : producers[i]) {
      successors[p].push_back(i);
      ++pending[i];
    }
  return {std::move(successors), std::move(pending)};
}

}  // namespace

std::vector<NodeId> priority_order(const Graph& graph) {
  const size_t n = graph.nodes.size();
  auto producers = input_node_edges(graph);
  auto [successors, pending] = kahn_edges(producers);
  // Looked up once per node, not once per heap comparison.
  std::vector<char> is_high(n);
  for (NodeId i = 0; i < static_cast<NodeId>(n); ++i) {
    const std::string& op = graph.nodes[i].op_type;
    is_high[i] = op == "Shape" || op == "Size";
  }
  auto high = [&](NodeId i) { return is_high[i] != 0; };
  // Pops Shape/Size first, then the lowest index.
  auto later = [&](NodeId a, NodeId b) {
    if (high(a) != high(b)) return high(b);
    return a > b;
  };
  std::priority_queue<NodeId, std::vector<NodeId>, decltype(later)> ready(later);
  for (NodeId i = 0; i < static_cast<NodeId>(n); ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<NodeId> order;
  order.reserve(n);
  while (!ready.empty()) {
    NodeId i = ready.top();
    ready.pop();
    order.push_back(i);
    for (NodeId s : successors[i])
      if (--pending[s] == 0) ready.push(s);
  }
  return order;
}

NodeId find_cycle_node(const Graph& graph) {
  // Kahn's algorithm in any order (whether every node can be placed does not depend on which goes first).
  const size_t n = graph.nodes.size();
  auto producers = input_node_edges(graph);
  auto [successors, pending] = kahn_edges(producers);
  std::vector<NodeId> ready;
  for (NodeId i = 0; i < static_cast<NodeId>(n); ++i)
    if (pending[i] == 0) ready.push_back(i);
  std::vector<bool> placed(n, false);
  size_t placed_count = 0;
  while (!ready.empty()) {
    const NodeId i = ready.back();
    ready.pop_back();
    placed[i] = true;
    ++placed_count;
    for (NodeId s : successors[i])
      if (--pending[s] == 0) ready.push_back(s);
  }
  if (placed_count == n) return kNoId;
  // Every node Kahn's algorithm could not place has an unplaced producer; walking those from any
  // unplaced node must revisit a node, and the first one revisited lies on a cycle.
  NodeId at = kNoId;
  for (NodeId i = 0; i < static_cast<NodeId>(graph.nodes.size()) && at == kNoId; ++i)
    if (!placed[i]) at = i;
  std::vector<bool> seen(graph.nodes.size(), false);
  while (!seen[at]) {
    seen[at] = true;
    for (NodeId p : producers[at])
      if (!placed[p]) {
        at = p;
        break;
      }
  }
  return at;
}

std::vector<NodeId> written_order(const Graph& graph) {
  std::vector<bool> done(graph.nodes.size(), false);
  const auto producers = input_node_edges(graph);
  std::vector<NodeId> order;
  for (const Node& node : graph.nodes) {
    for (NodeId p : producers[node.index])
      if (!done[p])
        throw Error(ExitCode::kBadInput,
                    "--order written: the model lists " + describe_node(node) + " before its producer " +
                        describe_node(graph.nodes[p]) +
                        ", so its node list is not an execution order (memplan's load-time rewrites append the "
                        "bodies of inlined functions); use --order default");
    done[node.index] = true;
    order.push_back(node.index);
  }
  return order;
}

std::vector<NodeId> execution_order(const Graph& graph, OrderKind kind, double time_budget_s) {
  switch (kind) {
    case OrderKind::kMemory:
      return memory_order(graph, time_budget_s).order;
    case OrderKind::kPriority:
      return priority_order(graph);
    case OrderKind::kWritten:
      return written_order(graph);
    case OrderKind::kDefault:
      break;
  }
  return default_order(graph);
}

namespace {
constexpr EnumName<OrderKind> kOrderKindNames[] = {
    {OrderKind::kDefault, "default"},
    {OrderKind::kPriority, "priority"},
    {OrderKind::kWritten, "written"},
    {OrderKind::kMemory, "memory"},
};
}  // namespace

const char* order_kind_name(OrderKind kind) {
  return enum_name(kOrderKindNames, kind, "default");
}

std::vector<std::string> order_kind_names() {
  std::vector<std::string> names;
  for (const auto& row : kOrderKindNames) names.push_back(row.name);
  return names;
}

OrderKind parse_order_kind(const std::string& name) {
  if (const std::optional<OrderKind> k = parse_enum(kOrderKindNames, name)) return *k;
  fail_usage("--order '" + name + "': use " + enum_names_text(kOrderKindNames));
}

const char* const kOrderHelp =
    "Execution order: default (ONNX Runtime's, for the model as written), priority (ORT's priority-based order), "
    "written (the model's node list: the order an ORT session ran a graph it saved with optimizedModelFilePath), or "
    "memory (the order of lowest live peak memplan finds within --time-budget; give it to ORT with memplan reorder)";

std::vector<std::string> ort_node_names(const Graph& graph, const std::vector<NodeId>& order) {
  std::vector<std::string> names(graph.nodes.size());
  std::map<std::string, int> counters;
  for (NodeId i : order) {
    const Node& node = graph.nodes[i];
    names[i] = node.name.empty() ? node.op_type + std::to_string(counters[node.op_type]++) : node.name;
  }
  return names;
}

}  // namespace memplan
