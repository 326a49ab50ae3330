#include "memplan/graph_summary.h"

#include <set>

namespace memplan {
namespace {

void visit(const Graph& g, const std::string& path, GraphSummary& s) {
  for (const Node& n : g.nodes) ++s.op_histogram[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type];
  for (const Value& v : g.values) {
    if (v.is_outer_scope) continue;  // counted where it is defined
    if (v.is_initializer) {
      ++s.initializer_count;
      s.initializer_bytes += v.bytes.value_or(0);
      continue;
    }
    if (v.type_kind == TypeKind::kSequence || v.type_kind == TypeKind::kMap || v.type_kind == TypeKind::kOptional) {
      ++s.non_tensor_values;
      continue;
    }
    if (!v.bytes) {
      s.unknown_size.push_back({path.empty() ? v.name : path + ": " + v.name, v.unknown_reason});
    } else if (v.producer != kNoId) {
      ++s.activation_count;
      s.activation_bytes += *v.bytes;
    }
  }
  for (const Graph& sub : g.subgraphs) {
    const Node& owner = g.nodes[sub.parent_node];
    std::string owner_name = owner.name.empty() ? owner.op_type + "#" + std::to_string(owner.index) : owner.name;
    std::string sub_path = (path.empty() ? "" : path + "/") + owner_name + "." + sub.parent_attribute;
    s.nodes_in_subgraphs += sub.nodes.size();
    visit(sub, sub_path, s);
  }
}

}  // namespace

GraphSummary summarize(const Model& model, OrderKind order) {
  GraphSummary s;
  const Graph& g = model.graph;
  s.nodes = g.nodes.size();
  s.values = g.values.size();
  s.subgraphs = g.total_subgraph_count();
  visit(g, "", s);
  // Only the graph inputs' symbols are the user's to fix; inference invents others (unk__0, ...).
  std::set<std::string> free_dims;
  for (ValueId id : g.inputs)
    for (const Dim& d : g.values[id].dims)
      if (!d.known() && !d.param.empty()) free_dims.insert(d.param);
  s.free_dims.assign(free_dims.begin(), free_dims.end());
  auto ids = execution_order(g, order);
  auto names = ort_node_names(g, default_order(g));  // ORT names unnamed nodes in its default order
  for (NodeId id : ids) s.order_names.push_back(names[id]);
  return s;
}

}  // namespace memplan
