// Each node's neighbours along a list of edges, in one array for all nodes. Internal to planner/.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "memplan/graph.h"

namespace memplan::planner {

// Each node's neighbours along a list of edges (from -> to): with `from_first`, the `to` of the edges from each node,
// else the `from` of the edges into it; sorted and each once. One array for all nodes (a vector per node was an
// allocation per node).
class Adjacency {
 public:
  Adjacency(size_t nodes, const std::vector<std::pair<NodeId, NodeId>>& edges, bool from_first)
      : start_(nodes + 1, 0), to_(edges.size()) {
    auto key = [&](const std::pair<NodeId, NodeId>& e) { return static_cast<size_t>(from_first ? e.first : e.second); };
    for (const auto& e : edges) ++start_[key(e) + 1];
    for (size_t n = 0; n < nodes; ++n) start_[n + 1] += start_[n];
    std::vector<size_t> next(start_.begin(), start_.end() - 1);
    for (const auto& e : edges) to_[next[key(e)]++] = from_first ? e.second : e.first;
    size_t kept = 0;  // sorted and de-duplicated in place, each node's run moved down over the duplicates before it
    for (size_t n = 0; n < nodes; ++n) {
      const auto begin = to_.begin() + static_cast<std::ptrdiff_t>(start_[n]);
      const auto end = to_.begin() + static_cast<std::ptrdiff_t>(start_[n + 1]);
      std::sort(begin, end);
      const auto last = std::unique(begin, end);
      start_[n] = kept;
      kept = static_cast<size_t>(std::copy(begin, last, to_.begin() + static_cast<std::ptrdiff_t>(kept)) - to_.begin());
    }
    start_[nodes] = kept;
    to_.resize(kept);
  }
  struct Range {
    const NodeId *b, *e;
    const NodeId* begin() const { return b; }
    const NodeId* end() const { return e; }
    size_t size() const { return static_cast<size_t>(e - b); }
  };
  Range of(NodeId n) const {
    return {to_.data() + start_[static_cast<size_t>(n)], to_.data() + start_[static_cast<size_t>(n) + 1]};
  }

 private:
  std::vector<size_t> start_;
  std::vector<NodeId> to_;
};

// Every input edge of the graph as (producer, consumer), explicit and implicit inputs, one per input read
// (duplicates kept: Adjacency removes them).
inline std::vector<std::pair<NodeId, NodeId>> producer_consumer_edges(const Graph& g) {
  std::vector<std::pair<NodeId, NodeId>> edges;
  for (const Node& node : g.nodes)
    for_each_input_value(node, [&](ValueId v) {
      if (g.values[v].producer != kNoId) edges.push_back({g.values[v].producer, node.index});
    });
  return edges;
}

}  // namespace memplan::planner
