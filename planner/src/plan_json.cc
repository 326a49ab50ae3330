#include <openssl/evp.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "memplan/file_io.h"
#include "memplan/planner/allocation_planner.h"
#include "memplan/planner/layout.h"
#include "memplan/planner/pipeline.h"
#include "memplan/planner/plan_io.h"
#include "memplan/planner/subgraphs.h"
#include "memplan/text_escape.h"

namespace memplan::planner {

namespace {
std::string to_hex(const unsigned char* digest, unsigned int length) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) out += hex[digest[i] >> 4], out += hex[digest[i] & 15];
  return out;
}
}  // namespace

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  return to_hex(digest, length);
}

std::string sha256_file_hex(const std::string& path) {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) throw std::runtime_error("OpenSSL: no SHA-256");
  read_file_in_pieces(path, [&](const char* data, size_t n) { EVP_DigestUpdate(ctx.get(), data, n); });
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &length);
  return to_hex(digest, length);
}

namespace {

using json = nlohmann::ordered_json;

// A graph's plan: streams, nodes (with the workspace an owner of bodies holds), values (with arena offsets),
// release actions, arenas, the execution order and the bodies' plans in the same form. The top-level plan and
// every If/Loop/Scan body are written by it, so `validate` and `replay` read both the same way.
json graph_plan_json(const Graph& g, const Plan& p, const Layout* layout, const std::vector<SubgraphPlan>* bodies);

json body_json(const SubgraphPlan& sp) {
  json j = {{"owner", sp.owner}, {"attribute", sp.attribute}, {"graph", sp.graph->name}};
  j["complete"] = sp.unsized.empty();
  j["unsized_values"] = sp.unsized;
  json plan = graph_plan_json(*sp.graph, sp.plan, &sp.layout, &sp.nested);
  for (auto it = plan.begin(); it != plan.end(); ++it) j[it.key()] = std::move(it.value());
  return j;
}

json graph_plan_json(const Graph& g, const Plan& p, const Layout* layout, const std::vector<SubgraphPlan>* bodies) {
  json j;
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

  std::vector<json> workspace(g.nodes.size(), json::array());
  if (layout)
    for (const Workspace& w : layout->workspaces)
      if (w.arena >= 0) workspace[w.node].push_back({{"arena", w.arena}, {"offset", w.offset}, {"bytes", w.bytes}});
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
    if (!workspace[n.index].empty()) node["workspace"] = std::move(workspace[n.index]);
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
    if (v.is_outer_scope) value["outer_scope"] = true;
    if (layout) {
      int a = layout->value_arena[v.index];
      value["arena"] = a >= 0 ? json(a) : json(nullptr);
      value["offset"] = a >= 0 ? json(layout->value_offset[v.index]) : json(nullptr);
    }
    values.push_back(std::move(value));
  }
  j["values"] = std::move(values);

  json releases = json::array();
  for (const ReleaseAction& r : p.release_actions) releases.push_back({{"value", r.value}, {"ref_count", r.ref_count}});
  j["release_actions"] = std::move(releases);

  json arenas = json::array();
  if (layout)
    for (const Arena& a : layout->arenas) arenas.push_back(arena_to_json(a));
  j["arenas"] = arenas;
  j["execution_order"] = p.execution_order;
  json subgraphs = json::array();
  if (bodies)
    for (const SubgraphPlan& sp : *bodies) subgraphs.push_back(body_json(sp));
  j["subgraphs"] = std::move(subgraphs);
  return j;
}

}  // namespace

std::string plan_to_json(const PlanContext& ctx) {
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
  // An incomplete plan (allocated values of unknown size, here or in a body) says so at the top: its totals are
  // lower bounds.
  json unsized = json::array();
  for (ValueId id : unsized_allocations(g, p)) unsized.push_back(id);
  j["complete"] = unsized.empty() && (!ctx.subgraphs || unsized_in_bodies(*ctx.subgraphs).empty());
  j["unsized_values"] = std::move(unsized);

  json body = graph_plan_json(g, p, ctx.layout, ctx.subgraphs);
  for (const char* key : {"streams", "nodes", "values", "release_actions", "arenas"}) j[key] = std::move(body[key]);
  auto totals_json = [](const std::vector<DeviceTotal>& totals) {
    json out = json::array();
    for (const DeviceTotal& t : totals) out.push_back(device_total_json(t));
    return out;
  };
  if (ctx.totals) j["device_totals"] = totals_json(*ctx.totals);
  if (ctx.ort_rules)
    j["ort_rules_estimate"] = {{"method", kOrtRulesMethod}, {"device_totals", totals_json(*ctx.ort_rules)}};
  j["execution_order"] = std::move(body["execution_order"]);
  j["subgraphs"] = std::move(body["subgraphs"]);
  return dump_json(j, 1) + "\n";
}

}  // namespace memplan::planner
