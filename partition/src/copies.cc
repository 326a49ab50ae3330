#include "memplan/partition/copies.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

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

  // ORT's four sets of values (provider inputs and outputs, non-provider inputs and outputs), as a mark per value:
  // the copies only need the values in two of them at once, visited by name as ORT's NodeArg sets order them.
  // (Four name-ordered sets of every value cost a 144,000-node GPU plan 0.12 s.)
  enum : uint8_t { kProviderIn = 1, kNonProviderIn = 2, kProviderOut = 4, kNonProviderOut = 8 };
  std::vector<uint8_t> sets(g.values.size(), 0);
  std::vector<std::vector<NodeId>> device_readers(g.values.size()), device_writers(g.values.size());
  const NodeFacts facts(g, placement, ops, opset);
  for (NodeId i = 0; i < static_cast<NodeId>(n); ++i) {
    const Node& node = g.nodes[i];
    bool on_device = placement.node_device[i].type != DeviceType::kCpu;
    const OpFacts& f = facts[i];
    auto note_input = [&](ValueId v, bool read_on_device) {
      if (read_on_device) {
        sets[v] |= kProviderIn;
        device_readers[v].push_back(i);
      } else {
        sets[v] |= kNonProviderIn;
      }
    };
    for (size_t k = 0; k < node.inputs.size(); ++k)
      if (node.inputs[k] != kNoId) note_input(node.inputs[k], on_device && !f.is_cpu_input(static_cast<int>(k)));
    for (ValueId v : node.implicit_inputs) note_input(v, on_device);
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      ValueId v = node.outputs[k];
      if (v == kNoId) continue;
      if (on_device && !f.is_cpu_output(static_cast<int>(k))) {
        sets[v] |= kProviderOut;
        device_writers[v].push_back(i);
      } else {
        sets[v] |= kNonProviderOut;
      }
    }
  }
  auto has_both = [&](size_t v, uint8_t a, uint8_t b) { return (sets[v] & a) && (sets[v] & b); };
  auto in_both = [&](uint8_t a, uint8_t b) {
    std::vector<ValueId> both;
    for (size_t v = 0; v < sets.size(); ++v)
      if (has_both(v, a, b)) both.push_back(static_cast<ValueId>(v));
    std::sort(both.begin(), both.end(), [&](ValueId x, ValueId y) { return g.values[x].name < g.values[y].name; });
    return both;
  };
  // Graph inputs are copied by the runtime, unless both sides read them.
  std::vector<ValueId> inputs_to_device;
  for (ValueId v : g.inputs)
    if (!g.values[v].is_initializer && has_both(v, kProviderIn, kNonProviderIn)) inputs_to_device.push_back(v);
  const std::vector<ValueId> to_device = in_both(kNonProviderOut, kProviderIn);
  const std::vector<ValueId> to_host = in_both(kProviderOut, kNonProviderIn);
  if (inputs_to_device.empty() && to_device.empty() && to_host.empty()) return out;

  std::unordered_set<std::string> node_names;
  node_names.reserve(g.nodes.size());
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

  for (ValueId v : inputs_to_device) add_copy(v, true);
  for (ValueId v : to_device) add_copy(v, true);
  for (ValueId v : to_host) add_copy(v, false);
  if (out.copies_to_device + out.copies_to_host) renumber_values(g);
  return out;
}

}  // namespace memplan::partition
