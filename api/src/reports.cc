// The JSON reports of `memplan inspect`, shared by the command line and the library API.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "memplan/api/internal.h"
#include "memplan/device_totals.h"
#include "memplan/graph_summary.h"
#include "memplan/text_escape.h"

namespace memplan::api {
namespace {

nlohmann::ordered_json value_json(const Value& v) {
  nlohmann::ordered_json j;
  j["name"] = v.name;
  j["dtype"] = std::string(dtype_name(v.dtype));
  if (v.has_shape) {
    nlohmann::ordered_json dims = nlohmann::ordered_json::array();
    for (const Dim& d : v.dims) {
      if (d.known())
        dims.push_back(d.value);
      else
        dims.push_back(d.param.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.param));
    }
    j["shape"] = dims;
  } else {
    j["shape"] = nullptr;
  }
  j["bytes"] = v.bytes ? nlohmann::ordered_json(*v.bytes) : nlohmann::ordered_json(nullptr);
  if (!v.unknown_reason.empty()) j["unknown_reason"] = v.unknown_reason;
  return j;
}

nlohmann::ordered_json breakdown_json(const std::vector<std::pair<std::string, uint64_t>>& parts, size_t top) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < parts.size() && i < top; ++i)
    out.push_back({{"name", parts[i].first}, {"bytes", parts[i].second}});
  return out;
}

}  // namespace

std::string inspect_model_json(const Model& model, OrderKind order, bool values) {
  const GraphSummary s = summarize(model, order);
  const Graph& g = model.graph;
  std::vector<std::pair<std::string, size_t>> ops(s.op_histogram.begin(), s.op_histogram.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  nlohmann::ordered_json j;
  j["format"] = "memplan.inspect";
  j["version"] = 1;
  j["model"] = {
      {"path", model.path}, {"graph", g.name}, {"ir_version", model.ir_version}, {"producer", model.producer_name}};
  nlohmann::ordered_json opsets = nlohmann::ordered_json::object();
  for (const auto& [domain, version] : model.opsets) opsets[domain.empty() ? "ai.onnx" : domain] = version;
  j["model"]["opsets"] = opsets;
  j["nodes"] = s.nodes;
  j["nodes_in_subgraphs"] = s.nodes_in_subgraphs;
  j["values"] = s.values;
  j["subgraphs"] = s.subgraphs;
  j["constant_nodes_folded"] = model.constant_nodes_folded;
  j["ort_casts_removed"] = model.ort_casts_removed;
  j["ort_functions_inlined"] = model.ort_functions_inlined;
  j["inputs"] = nlohmann::ordered_json::array();
  for (ValueId id : g.inputs)
    if (!g.values[id].is_initializer) j["inputs"].push_back(value_json(g.values[id]));
  j["outputs"] = nlohmann::ordered_json::array();
  for (ValueId id : g.outputs) j["outputs"].push_back(value_json(g.values[id]));
  j["initializers"] = {{"count", s.initializer_count}, {"bytes", s.initializer_bytes}};
  j["activations"] = {{"count", s.activation_count},
                      {"bytes", s.activation_bytes},
                      {"complete", s.unknown_size.empty()}};  // false: bytes leave the unknown_size values out
  nlohmann::ordered_json unknown_names = nlohmann::ordered_json::array(), reasons = nlohmann::ordered_json::object();
  for (const auto& u : s.unknown_size) {
    unknown_names.push_back(u.name);
    reasons[u.name] = u.reason;
  }
  j["unknown_size"] = {
      {"count", s.unknown_size.size()}, {"names", unknown_names}, {"reasons", reasons}, {"free_dims", s.free_dims}};
  j["shape_pass"] = {{"inference_rounds", model.shape_pass_rounds},
                     {"evaluated_nodes", model.shape_pass_evaluated_nodes}};
  j["non_tensor_values"] = s.non_tensor_values;
  nlohmann::ordered_json hist = nlohmann::ordered_json::object();
  for (const auto& [op, n] : ops) hist[op] = n;
  j["op_types"] = hist;
  j["execution_order"] = {{"kind", order_kind_name(order)}, {"nodes", s.order_names}};
  j["warnings"] = model.warnings;
  if (values) {
    j["value_list"] = nlohmann::ordered_json::array();
    for (const Value& v : g.values) j["value_list"].push_back(value_json(v));
  }
  return dump_json(j, 2) + "\n";
}

std::string inspect_plan_json(const std::string& path, const plan_doc::PlanDoc& plan,
                              const plan_doc::PlanInsight& insight, size_t top) {
  auto value_name = [&](int v) { return plan.values[v].name; };
  auto unsized = plan_doc::unsized_allocations(plan);
  nlohmann::ordered_json j;
  j["format"] = "memplan.inspect-plan";
  j["version"] = 1;
  j["plan"] = path;
  j["model"] = plan.model_path;
  j["complete"] = unsized.empty();
  j["unsized_values"] = nlohmann::ordered_json::array();
  for (int v : unsized) j["unsized_values"].push_back(value_name(v));
  j["devices"] = nlohmann::ordered_json::array();
  for (const DeviceTotal& t : plan_doc::device_totals(plan)) {
    const DeviceTotal* ort = plan_doc::ort_total(plan, t.device);
    auto d = device_total_json(t);
    d["ort_rules_total"] = ort ? nlohmann::ordered_json(ort->total()) : nlohmann::ordered_json();
    j["devices"].push_back(d);
  }
  j["ort_rules_method"] = plan.ort_rules ? nlohmann::ordered_json(plan.ort_rules_method) : nlohmann::ordered_json();
  j["input_bytes"] = insight.input_bytes;
  j["arenas"] = nlohmann::ordered_json::array();
  for (const auto& ai : insight.arenas) {
    const auto& a = plan.arenas[ai.arena];
    nlohmann::ordered_json live = nlohmann::ordered_json::array();
    for (size_t i = 0; i < ai.live_at_peak.size() && i < top; ++i)
      live.push_back({{"value", value_name(ai.live_at_peak[i])}, {"bytes", *plan.values[ai.live_at_peak[i]].bytes}});
    nlohmann::ordered_json held = nlohmann::ordered_json::array();
    for (size_t i = 0; i < ai.workspaces_at_peak.size() && i < top; ++i) {
      const auto& [node, bytes] = ai.workspaces_at_peak[i];
      held.push_back({{"node", plan.nodes[node].name}, {"op_type", plan.nodes[node].op_type}, {"bytes", bytes}});
    }
    j["arenas"].push_back(
        {{"name", a.name},
         {"device", a.location},
         {"purpose", a.purpose},
         {"bytes", a.bytes},
         {"lower_bound", a.lower_bound},
         {"efficiency", a.bytes ? static_cast<double>(a.lower_bound) / static_cast<double>(a.bytes) : 1.0},
         {"peak_step", ai.peak_step},
         {"live_at_peak", live},
         {"bodies_at_peak", held},
         {"peak_by_op_type", breakdown_json(ai.peak_by_op, top)},
         {"peak_by_layer_prefix", breakdown_json(ai.peak_by_prefix, top)},
         {"no_reuse_bytes", ai.no_reuse_bytes},
         {"distinct_buffer_bytes", ai.distinct_buffer_bytes}});
  }
  j["largest"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < insight.largest.size() && i < top; ++i)
    j["largest"].push_back({{"value", value_name(insight.largest[i])},
                            {"bytes", *plan.values[insight.largest[i]].bytes},
                            {"kind", plan.values[insight.largest[i]].kind}});
  return dump_json(j, 2) + "\n";
}

}  // namespace memplan::api
