#include <openssl/evp.h>

#include <nlohmann/json.hpp>
#include <set>

#include "memplan/planner/allocation_planner.h"
#include "memplan/planner/layout.h"
#include "memplan/planner/pipeline.h"
#include "memplan/planner/plan_io.h"
#include "memplan/text_escape.h"

namespace memplan::planner {

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) out += hex[digest[i] >> 4], out += hex[digest[i] & 15];
  return out;
}

namespace {

// A subgraph's plan: its values' kinds and buffers, its nodes' releases and steps, nested bodies.
nlohmann::ordered_json subgraph_json(const SubgraphPlan& sp) {
  using json = nlohmann::ordered_json;
  const Graph& g = *sp.graph;
  const Plan& p = sp.plan;
  json values = json::array();
  for (const Value& v : g.values) {
    const ValuePlan& vp = p.values[v.index];
    values.push_back({{"index", v.index},
                      {"name", v.name},
                      {"kind", alloc_kind_name(vp.kind)},
                      {"location", partition::device_name(vp.location)},
                      {"bytes", v.bytes ? json(*v.bytes) : json(nullptr)},
                      {"outer_scope", v.is_outer_scope},
                      {"reused_buffer", vp.reused_buffer},
                      {"inplace_of", vp.inplace_of},
                      {"first_use", vp.first_use},
                      {"last_use", vp.last_use}});
  }
  json nodes = json::array();
  for (const Node& n : g.nodes)
    nodes.push_back({{"index", n.index},
                     {"name", n.name},
                     {"op_type", n.op_type},
                     {"inputs", n.inputs},
                     {"outputs", n.outputs},
                     {"releases", p.node_releases[n.index]}});
  json releases = json::array();
  for (const ReleaseAction& r : p.release_actions) releases.push_back({{"value", r.value}, {"ref_count", r.ref_count}});
  json nested = json::array();
  for (const SubgraphPlan& n : sp.nested) nested.push_back(subgraph_json(n));
  return {{"owner", sp.owner},
          {"attribute", sp.attribute},
          {"graph", g.name},
          {"execution_order", p.execution_order},
          {"nodes", nodes},
          {"values", values},
          {"release_actions", releases},
          {"subgraphs", nested}};
}

}  // namespace

std::string plan_to_json(const PlanContext& ctx) {
  using json = nlohmann::ordered_json;
  const Graph& g = ctx.graph;
  const Plan& p = ctx.plan;
  json j;
  j["format"] = "memplan.plan";
  j["version"] = kPlanFormatVersion;
  j["generator"] = std::string("memplan ") + MEMPLAN_VERSION;
  j["model"] = {{"path", ctx.model_path}, {"sha256", ctx.model_sha256}, {"graph", g.name}};
  json options = json::object();
  for (const auto& [k, v] : ctx.options) options[k] = v;
  options["reuse"] = reuse_mode_name(p.reuse);
  j["options"] = options;

  std::set<Device> devices;
  for (const auto& s : p.streams) devices.insert(s.device);
  for (const auto& v : p.values) devices.insert(v.location);
  json dev = json::array();
  for (Device d : devices) dev.push_back(partition::device_name(d));
  j["devices"] = dev;
  // An incomplete plan (allocated values of unknown size) says so at the top: its totals are lower bounds.
  json unsized = json::array();
  for (ValueId id : unsized_allocations(g, p)) unsized.push_back(id);
  j["complete"] = unsized.empty();
  j["unsized_values"] = std::move(unsized);

  json streams = json::array();
  for (const LogicStream& s : p.streams) {
    json steps = json::array();
    for (const Step& st : s.steps) {
      json step = {{"kind", step_kind_name(st.kind)}, {"node", st.node}};
      if (st.kind == StepKind::kBarrier) step["barrier"] = st.barrier, step["trigger"] = st.trigger;
      if (st.kind == StepKind::kTriggerDownstream) step["trigger"] = st.trigger;
      if (st.kind == StepKind::kWaitOnEP || st.kind == StepKind::kActivateNotification)
        step["notification"] = st.notification;
      if (st.kind == StepKind::kWaitOnEP) step["host_wait"] = st.host_wait;
      steps.push_back(std::move(step));
    }
    streams.push_back({{"device", partition::device_name(s.device)}, {"steps", steps}});
  }
  j["streams"] = std::move(streams);

  json nodes = json::array();
  for (const Node& n : g.nodes) {
    json node = {{"index", n.index},
                 {"name", n.name},
                 {"op_type", n.op_type},
                 {"domain", n.domain},
                 {"stream", p.node_stream[n.index]},
                 {"inputs", n.inputs},
                 {"outputs", n.outputs},
                 {"implicit_inputs", n.implicit_inputs},
                 {"releases", p.node_releases[n.index]}};
    nodes.push_back(std::move(node));
  }
  j["nodes"] = std::move(nodes);

  json values = json::array();
  for (const Value& v : g.values) {
    const ValuePlan& vp = p.values[v.index];
    json shape = nullptr;
    if (v.has_shape) {
      shape = json::array();
      for (const Dim& d : v.dims)
        d.known() ? shape.push_back(d.value) : shape.push_back(d.param.empty() ? json(nullptr) : json(d.param));
    }
    json value = {{"index", v.index},
                  {"name", v.name},
                  {"kind", alloc_kind_name(vp.kind)},
                  {"location", partition::device_name(vp.location)},
                  {"dtype", std::string(dtype_name(v.dtype))},
                  {"shape", shape},
                  {"bytes", v.bytes ? json(*v.bytes) : json(nullptr)},
                  {"graph_input", v.is_graph_input && !v.is_initializer},
                  {"initializer", v.is_initializer},
                  {"graph_output", v.is_graph_output},
                  {"reused_buffer", vp.reused_buffer},
                  {"inplace", vp.inplace},
                  {"inplace_of", vp.inplace_of},
                  {"alias", vp.alias},
                  {"producer", v.producer},
                  {"consumers", v.consumers},
                  {"implicit_consumers", v.implicit_consumers},
                  {"first_use", vp.first_use},
                  {"last_use", vp.last_use}};
    if (ctx.arenas && ctx.value_arena) {
      int a = (*ctx.value_arena)[v.index];
      value["arena"] = a >= 0 ? json(a) : json(nullptr);
      value["offset"] = a >= 0 ? json((*ctx.offsets)[v.index]) : json(nullptr);
    }
    values.push_back(std::move(value));
  }
  j["values"] = std::move(values);

  json releases = json::array();
  for (const ReleaseAction& r : p.release_actions) releases.push_back({{"value", r.value}, {"ref_count", r.ref_count}});
  j["release_actions"] = std::move(releases);

  json arenas = json::array();
  if (ctx.arenas)
    for (const Arena& a : *ctx.arenas) arenas.push_back(arena_to_json(a));
  j["arenas"] = arenas;
  auto totals_json = [](const std::vector<DeviceTotal>& totals) {
    json out = json::array();
    for (const DeviceTotal& t : totals) out.push_back(device_total_json(t));
    return out;
  };
  if (ctx.totals) j["device_totals"] = totals_json(*ctx.totals);
  if (ctx.ort_rules)
    j["ort_rules_estimate"] = {{"method", kOrtRulesMethod}, {"device_totals", totals_json(*ctx.ort_rules)}};
  j["execution_order"] = p.execution_order;
  json subgraphs = json::array();
  if (ctx.subgraphs)
    for (const SubgraphPlan& sp : *ctx.subgraphs) subgraphs.push_back(subgraph_json(sp));
  j["subgraphs"] = std::move(subgraphs);
  return dump_json(j, 1) + "\n";
}

}  // namespace memplan::planner
