#include "memplan/partition/copies.h"

#include <algorithm>
#include <set>

#include "memplan/graph_edit.h"

namespace memplan::partition {

PlacedGraph insert_copies(Graph graph, const Placement& placement, const OpTable& ops, int opset) {
  PlacedGraph out{std::move(graph), placement, 0, 0};
  Graph& g = out.graph;
  const size_t n = g.nodes.size();
  // The device provider: the first non-CPU device any node is on. None: nothing to copy.
  auto it = std::find_if(placement.node_device.begin(), placement.node_device.end(),
                         [](Device d) { return d.type != DeviceType::kCpu; });
  if (it == placement.node_device.end()) return out;
  const Device device = *it;

  // ORT's four sets, by value; each ordered by name as ORT's NodeArg sets are.
  auto by_name = [&](ValueId a, ValueId b) { return g.values[a].name < g.values[b].name; };
  std::set<ValueId, decltype(by_name)> provider_in(by_name), non_provider_in(by_name), provider_out(by_name),
      non_provider_out(by_name);
  std::vector<std::vector<NodeId>> device_readers(g.values.size()), device_writers(g.values.size());
  const NodeFacts facts(g, placement, ops, opset);
  for (NodeId i = 0; i < static_cast<NodeId>(n); ++i) {
    const Node& node = g.nodes[i];
    bool on_device = placement.node_device[i].type != DeviceType::kCpu;
    const OpFacts& f = facts[i];
    auto note_input = [&](ValueId v, bool read_on_device) {
      if (read_on_device) {
        provider_in.insert(v);
        device_readers[v].push_back(i);
      } else {
        non_provider_in.insert(v);
      }
    };
    for (size_t k = 0; k < node.inputs.size(); ++k)
      if (node.inputs[k] != kNoId) note_input(node.inputs[k], on_device && !f.is_cpu_input(static_cast<int>(k)));
    for (ValueId v : node.implicit_inputs) note_input(v, on_device);
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      ValueId v = node.outputs[k];
      if (v == kNoId) continue;
      if (on_device && !f.is_cpu_output(static_cast<int>(k))) {
        provider_out.insert(v);
        device_writers[v].push_back(i);
      } else {
        non_provider_out.insert(v);
      }
    }
  }

  std::set<std::string> node_names;
  for (const Node& node : g.nodes) node_names.insert(node.name);
  int name_counter = g.ort_name_counter;  // ORT's Graph::name_generator_, shared by value and node names
  auto unique_value_name = [&](const std::string& base) {
    std::string name = base;
    while (g.value_by_name.count(name)) name = base + "_token_" + std::to_string(name_counter++);
    return name;
  };
  auto unique_node_name = [&](const std::string& base) {
    std::string name = base;
    while (node_names.count(name)) name = base + "_token_" + std::to_string(name_counter++);
    node_names.insert(name);
    return name;
  };

  auto add_copy = [&](ValueId arg, bool to_device) {
    Value copy = g.values[arg];
    copy.name = unique_value_name(copy.name + "_" + ort_provider_type(device.type));
    copy.is_graph_input = copy.is_graph_output = copy.is_initializer = false;
    copy.producer = kNoId;
    copy.consumers.clear();
    copy.implicit_consumers.clear();
    ValueId fresh = add_value(g, std::move(copy));
    Node node;
    node.index = static_cast<NodeId>(g.nodes.size());
    node.name = unique_node_name("Memcpy");
    node.op_type = to_device ? "MemcpyFromHost" : "MemcpyToHost";
    node.inputs = {to_device ? arg : fresh};
    node.outputs = {to_device ? fresh : arg};
    // The device side of the value takes the new name; the host side keeps the old one.
    for (NodeId reader : device_readers[arg]) {
      Node& r = g.nodes[reader];
      std::replace(r.inputs.begin(), r.inputs.end(), arg, fresh);
      std::replace(r.implicit_inputs.begin(), r.implicit_inputs.end(), arg, fresh);
    }
    for (NodeId writer : device_writers[arg]) {
      Node& w = g.nodes[writer];
      std::replace(w.outputs.begin(), w.outputs.end(), arg, fresh);
    }
    g.nodes.push_back(std::move(node));
    out.placement.node_device.push_back(device);
    out.placement.reasons.push_back("");
    (to_device ? out.copies_to_device : out.copies_to_host)++;
  };

  // Graph inputs are copied by the runtime, unless both sides read them.
  for (ValueId v : graph.inputs)
    if (!g.values[v].is_initializer && provider_in.count(v) && non_provider_in.count(v)) add_copy(v, true);
  for (ValueId v : non_provider_out)
    if (provider_in.count(v)) add_copy(v, true);
  for (ValueId v : provider_out)
    if (non_provider_in.count(v)) add_copy(v, false);
  if (out.copies_to_device + out.copies_to_host) renumber_values(g);
  return out;
}

}  // namespace memplan::partition
