#include "memplan/partition/placement.h"

#include <nlohmann/json.hpp>
#include <queue>
#include <string_view>
#include <unordered_map>

#include "memplan/error.h"
#include "memplan/execution_order.h"
#include "memplan/json_input.h"
#include "memplan/partition/provider.h"

namespace memplan::partition {

std::string device_name(Device d) {
  const Provider& p = provider(d.type);
  return std::string(p.device_word) + (p.numbered ? ":" + std::to_string(d.id) : "");
}

std::string provider_name(DeviceType t) {
  return std::string(provider(t).op_table);
}

std::string ort_provider_type(DeviceType t) {
  return std::string(provider(t).ort_type);
}

std::optional<Device> parse_device(const std::string& text) {
  std::string kind = text, id;
  if (auto colon = text.find(':'); colon != std::string::npos)
    kind = text.substr(0, colon), id = text.substr(colon + 1);
  const Provider* named = nullptr;
  for (const Provider& p : providers())
    if (p.selectable && (kind == p.device_word || kind == p.op_table)) named = &p;
  if (!named) return std::nullopt;
  Device d;
  d.type = named->type;
  if (!id.empty()) {
    if (id.find_first_not_of("0123456789") != std::string::npos || id.size() > 3) return std::nullopt;
    d.id = std::stoi(id);
  }
  if (!named->numbered && d.id != 0) return std::nullopt;
  return d;
}

PlacementRules default_rules(Device device) {
  const Provider& p = provider(device.type);
  if (!p.builtin_rules) {
    PlacementRules r;
    r.device = device;
    r.cpu_fallback = false;
    return r;
  }
  PlacementRules r =
      parse_placement_rules(p.builtin_rules, "built-in placement rules (" + std::string(p.builtin_rules_source) + ")");
  r.device = device;
  return r;
}

PlacementRules parse_placement_rules(const std::string& text, const std::string& source) {
  nlohmann::json j = parse_json_input(text, source);
  if (!j.is_object() || json_string(j, "format") != "memplan.placement")
    fail_input(source, "not a placement file: expected {\"format\": \"memplan.placement\", ...}");
  PlacementRules r;
  try {
    std::string device = j.value("device", "gpu");
    auto d = parse_device(device);
    if (!d) fail_input(source, "\"device\": '" + device + "' is not a device (cpu, gpu, gpu:N)");
    r.device = *d;
    for (const auto& op : j.value("cpu_ops", std::vector<std::string>{})) r.cpu_ops.insert(op);
    for (const auto& dom : j.value("cpu_domains", std::vector<std::string>{})) r.cpu_domains.insert(dom);
    for (const auto& n : j.value("cpu_nodes", std::vector<std::string>{})) r.cpu_nodes.insert(n);
    r.cpu_fallback = j.value("cpu_fallback", true);
    r.cpu_fallback_max_initializer_elements = j.value("cpu_fallback_max_initializer_elements", int64_t{100});
  } catch (const nlohmann::json::exception& e) {
    fail_input(source, std::string("malformed placement rules: ") + e.what());
  }
  return r;
}

OpFacts facts_for(const Graph& graph, NodeId n, const Placement& placement, const OpTable& ops, int opset) {
  const Node& node = graph.nodes[n];
  return ops.lookup(node.op_type, node.domain, opset, provider_name(placement.node_device[n].type));
}

NodeFacts::NodeFacts(const Graph& graph, const Placement& placement, const OpTable& ops, int opset) {
  struct Key {
    std::string_view op, domain;
    DeviceType provider;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<std::string_view>()(k.op) * 31 + std::hash<std::string_view>()(k.domain) * 7 +
             static_cast<size_t>(k.provider);
    }
  };
  // (the keys view the graph's strings, which outlive this constructor)
  std::unordered_map<Key, uint32_t, KeyHash> index;
  of_node_.resize(graph.nodes.size());
  for (const Node& node : graph.nodes) {
    const DeviceType provider = placement.node_device[node.index].type;
    auto [it, added] = index.try_emplace(Key{node.op_type, node.domain, provider}, 0);
    if (added) {
      it->second = static_cast<uint32_t>(distinct_.size());
      distinct_.push_back(facts_for(graph, node.index, placement, ops, opset));
    }
    of_node_[node.index] = it->second;
  }
}

namespace {

// float16, bfloat16 and the float8 types.
bool is_reduced_float(DType t) {
  return dtype_class(t) == DTypeClass::kHalfFloat || dtype_class(t) == DTypeClass::kFloat8;
}

}  // namespace

Placement place_nodes(const Graph& graph, int opset, const PlacementRules& rules, const OpTable& ops) {
  const size_t n = graph.nodes.size();
  Placement p;
  p.node_device.assign(n, rules.device);
  p.reasons.assign(n, "");
  if (rules.device.type == DeviceType::kCpu) return p;

  const Device cpu{DeviceType::kCpu, 0};
  const std::string provider = provider_name(rules.device.type);
  auto names = ort_node_names(graph, default_order(graph));
  std::vector<bool> on_device(n, true);
  for (NodeId i = 0; i < static_cast<NodeId>(n); ++i) {
    const Node& node = graph.nodes[i];
    std::string why;
    if (rules.cpu_nodes.count(names[i]))
      why = "pinned to the CPU by the placement rules";
    else if (rules.cpu_ops.count(node.op_type))
      why = "no " + provider + " kernel for " + node.op_type;
    else if (rules.cpu_domains.count(node.domain))
      why = "no " + provider + " kernels in domain " + node.domain;
    else if (!ops.lookup(node.op_type, node.domain, opset, provider).has_kernel)
      why = "no " + provider + " kernel";
    else {
      auto is_string = [&](ValueId v) { return v != kNoId && graph.values[v].dtype == kDTypeString; };
      if (std::any_of(node.inputs.begin(), node.inputs.end(), is_string) ||
          std::any_of(node.outputs.begin(), node.outputs.end(), is_string))
        why = "string tensors stay on the CPU";
    }
    if (!why.empty()) {
      on_device[i] = false;
      p.node_device[i] = cpu;
      p.reasons[i] = why;
    }
  }
  if (!rules.cpu_fallback) return p;

  // ORT's GetCpuPreferredNodes: starting from the consumers of CPU outputs (Shape on the GPU writes to
  // CPU memory), move to the CPU every node whose inputs are all CPU tensors, small initializers or
  // graph inputs, and which does not read them as declared CPU inputs anyway.
  auto order = default_order(graph);
  std::vector<size_t> position(n);
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = k;
  auto later = [&](NodeId a, NodeId b) { return position[a] > position[b]; };
  std::priority_queue<NodeId, std::vector<NodeId>, decltype(later)> candidates(later);
  std::vector<bool> cpu_value(graph.values.size(), false);
  auto push_consumers = [&](ValueId v) {
    for (NodeId c : graph.values[v].consumers) candidates.push(c);
  };
  for (NodeId i = 0; i < static_cast<NodeId>(n); ++i) {
    const Node& node = graph.nodes[i];
    if (!on_device[i]) continue;
    OpFacts f = ops.lookup(node.op_type, node.domain, opset, provider);
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (node.outputs[k] != kNoId && f.is_cpu_output(static_cast<int>(k))) {
        cpu_value[node.outputs[k]] = true;
        push_consumers(node.outputs[k]);
      }
  }
  std::vector<bool> visited(n, false);
  while (!candidates.empty()) {
    NodeId cur = candidates.top();
    candidates.pop();
    if (visited[cur]) continue;
    visited[cur] = true;
    const Node& node = graph.nodes[cur];
    if (!on_device[cur]) {
      for (ValueId out : node.outputs)
        if (out != kNoId) {
          cpu_value[out] = true;
          push_consumers(out);
        }
      continue;
    }
    OpFacts f = ops.lookup(node.op_type, node.domain, opset, provider);
    bool to_cpu = true;
    for (size_t k = 0; k < node.inputs.size() && to_cpu; ++k) {
      ValueId in = node.inputs[k];
      if (in == kNoId) continue;
      const Value& v = graph.values[in];
      if (is_reduced_float(v.dtype))
        to_cpu = false;
      else if ((v.is_initializer && v.element_count() &&
                static_cast<int64_t>(*v.element_count()) <= rules.cpu_fallback_max_initializer_elements) ||
               (v.is_graph_input && !v.is_initializer))
        continue;
      else if (!cpu_value[in] || f.is_cpu_input(static_cast<int>(k)))
        to_cpu = false;
    }
    if (!to_cpu) continue;
    on_device[cur] = false;
    p.node_device[cur] = cpu;
    p.reasons[cur] = "CPU fallback: a small computation on CPU tensors (as ORT's GetCpuPreferredNodes)";
    for (ValueId out : node.outputs)
      if (out != kNoId) {
        cpu_value[out] = true;
        push_consumers(out);
      }
  }
  return p;
}

}  // namespace memplan::partition
