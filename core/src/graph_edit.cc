#include "memplan/graph_edit.h"

#include <algorithm>

namespace memplan {

void renumber_values(Graph& graph) {
  std::vector<ValueId> order;
  std::vector<bool> placed(graph.values.size(), false);
  auto place = [&](ValueId v) {
    if (v != kNoId && !placed[v]) {
      placed[v] = true;
      order.push_back(v);
    }
  };
  for (ValueId v : graph.inputs) place(v);
  for (const Node& n : graph.nodes) {
    for (ValueId v : n.inputs) place(v);
    for (ValueId v : n.implicit_inputs) place(v);
    for (ValueId v : n.outputs) place(v);
  }
  for (ValueId v : graph.outputs) place(v);
  for (ValueId v : graph.initializers) place(v);
  for (ValueId v : graph.outer_scope) place(v);

  std::vector<ValueId> new_id(graph.values.size(), kNoId);
  for (size_t k = 0; k < order.size(); ++k) new_id[order[k]] = static_cast<ValueId>(k);
  // Values are put in their new places where they are (cycles of swaps; those dropped end up last, then cut off)
  // rather than moved into a second vector: at 144,000 values that vector was 30 MB of fresh memory.
  {
    std::vector<ValueId> target = new_id;
    ValueId next_dropped = static_cast<ValueId>(order.size());
    for (ValueId& t : target)
      if (t == kNoId) t = next_dropped++;
    for (size_t i = 0; i < target.size(); ++i)
      while (target[i] != static_cast<ValueId>(i)) {
        const auto j = static_cast<size_t>(target[i]);
        std::swap(graph.values[i], graph.values[j]);
        std::swap(target[i], target[j]);
      }
  }
  // The names of the values kept keep their entries (no string made again); dropped ones are erased.
  for (auto it = graph.value_by_name.begin(); it != graph.value_by_name.end();) {
    const ValueId old = it->second;
    if (old >= 0 && static_cast<size_t>(old) < new_id.size() && new_id[old] != kNoId &&
        graph.values[new_id[old]].name == it->first) {
      it->second = new_id[old];
      ++it;
    } else {
      graph.value_by_name.erase(it++);  // (absl's erase leaves the other iterators valid)
    }
  }
  graph.values.resize(order.size());
  for (size_t k = 0; k < graph.values.size(); ++k) graph.values[k].index = static_cast<ValueId>(k);
  // The entries left name distinct kept values: as many as the values, every value has its entry (a lookup per
  // value was half of this function's time on a 144,000-value graph).
  if (graph.value_by_name.size() != graph.values.size())
    for (size_t k = 0; k < graph.values.size(); ++k)
      graph.value_by_name.try_emplace(graph.values[k].name, static_cast<ValueId>(k));
  auto remap = [&](std::vector<ValueId>& ids, bool keep_holes) {  // in place: no vector made per node
    for (ValueId& v : ids) v = v == kNoId ? kNoId : new_id[v];
    if (!keep_holes) ids.erase(std::remove(ids.begin(), ids.end(), kNoId), ids.end());
  };
  for (Node& n : graph.nodes) {
    remap(n.inputs, true);
    remap(n.outputs, true);
    remap(n.implicit_inputs, false);
  }
  remap(graph.inputs, false);
  remap(graph.outputs, false);
  remap(graph.initializers, false);
  remap(graph.outer_scope, false);
  link_values(graph);
}

void remove_nodes(Graph& graph, const std::vector<bool>& removed) {
  std::vector<NodeId> new_id(graph.nodes.size(), kNoId);
  std::vector<Node> nodes;
  for (Node& n : graph.nodes) {
    if (removed[n.index]) continue;
    new_id[n.index] = static_cast<NodeId>(nodes.size());
    n.index = new_id[n.index];
    nodes.push_back(std::move(n));
  }
  graph.nodes = std::move(nodes);
  for (Graph& sub : graph.subgraphs) sub.parent_node = new_id[sub.parent_node];
  graph.subgraphs.erase(std::remove_if(graph.subgraphs.begin(), graph.subgraphs.end(),
                                       [](const Graph& g) { return g.parent_node == kNoId; }),
                        graph.subgraphs.end());
  renumber_values(graph);
}

ValueId add_value(Graph& graph, Value value) {
  value.index = static_cast<ValueId>(graph.values.size());
  graph.value_by_name[value.name] = value.index;
  graph.values.push_back(std::move(value));
  return graph.values.back().index;
}

namespace {

// ORT's TypeGroup: bool < integer < float; -1 for other types.
int type_group(const Value& v) {
  if (!v.is_tensor()) return -1;
  switch (dtype_class(v.dtype)) {
    case DTypeClass::kBool:
      return 0;
    case DTypeClass::kInteger:
      return 1;
    case DTypeClass::kFloat:
    case DTypeClass::kHalfFloat:
      return 2;
    default:
      return -1;
  }
}

bool same_type(const Value& a, const Value& b) {
  return a.type_kind == b.type_kind && a.dtype == b.dtype;
}

}  // namespace

int remove_duplicate_casts(Graph& graph) {
  std::vector<bool> removed(graph.nodes.size(), false);
  std::vector<bool> is_output(graph.values.size(), false);
  for (ValueId v : graph.outputs) is_output[v] = true;
  // Who reads each value: one entry per input slot, explicit and implicit, as ORT counts edges; kept up to date as
  // uses move, so that each Cast looks at its own readers only (a scan of every node per Cast was quadratic).
  std::vector<std::vector<NodeId>> readers(graph.values.size());
  for (const Node& c : graph.nodes) {
    for (ValueId in : c.inputs)
      if (in != kNoId) readers[in].push_back(c.index);
    for (ValueId in : c.implicit_inputs)
      if (in != kNoId) readers[in].push_back(c.index);
  }
  auto out_edges = [&](const Node& n) {
    std::vector<NodeId> edges;
    for (ValueId out : n.outputs) {
      if (out == kNoId) continue;
      const size_t first = edges.size();
      for (NodeId c : readers[out])
        if (!removed[c]) edges.push_back(c);
      std::sort(edges.begin() + static_cast<std::ptrdiff_t>(first), edges.end());
    }
    return edges;
  };
  auto move_uses = [&](ValueId from, ValueId to) {
    for (NodeId c : readers[from]) {
      Node& n = graph.nodes[c];
      std::replace(n.inputs.begin(), n.inputs.end(), from, to);
      std::replace(n.implicit_inputs.begin(), n.implicit_inputs.end(), from, to);
    }
    readers[to].insert(readers[to].end(), readers[from].begin(), readers[from].end());
    readers[from].clear();
  };
  int count = 0;
  for (Node& node : graph.nodes) {
    if (removed[node.index] || node.op_type != "Cast" || !node.domain.empty() || node.inputs.empty() ||
        node.inputs[0] == kNoId || node.outputs.empty() || node.outputs[0] == kNoId)
      continue;
    const Value& src = graph.values[node.inputs[0]];
    const Value& dst = graph.values[node.outputs[0]];
    int src_group = type_group(src), dst_group = type_group(dst);
    if (src_group < 0 || dst_group < 0) continue;
    bool loses_precision = src_group > dst_group;
    auto edges = out_edges(node);
    std::vector<NodeId> to_remove, to_keep;
    bool inconsistent = false;
    for (NodeId c : edges) {
      const Node& child = graph.nodes[c];
      if (child.op_type != "Cast" || !child.domain.empty()) continue;
      const Value& child_src = graph.values[child.inputs[0]];
      const Value& child_dst = graph.values[child.outputs[0]];
      int g1 = type_group(child_src), g2 = type_group(child_dst);
      if (g1 < 0 || g2 < 0 || (loses_precision && g2 > g1)) {
        inconsistent = true;
        break;
      }
      if (!is_output[child.outputs[0]] && same_type(src, child_dst) && same_type(child_src, dst))
        to_remove.push_back(c);
      else
        to_keep.push_back(c);
    }
    if (inconsistent) continue;
    for (NodeId c : to_remove) {
      if (removed[c]) continue;
      move_uses(graph.nodes[c].outputs[0], node.inputs[0]);
      removed[c] = true;
      ++count;
    }
    if (!edges.empty() && to_remove.size() + to_keep.size() == edges.size() && !is_output[node.outputs[0]]) {
      move_uses(node.outputs[0], node.inputs[0]);
      removed[node.index] = true;
      ++count;
    }
  }
  if (count) remove_nodes(graph, removed);
  return count;
}

}  // namespace memplan
