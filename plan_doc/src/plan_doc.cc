#include "memplan/plan_doc/plan_doc.h"

#include <nlohmann/json.hpp>

#include "memplan/chain_roots.h"
#include "memplan/error.h"
#include "memplan/file_kind.h"

namespace memplan::plan_doc {

PlanDoc read_plan_doc(const std::string& text, const std::string& source) {
  expect_file_kind(text, source, FileKind::kPlan);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail_input(source, std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object() || j.value("format", "") != "memplan.plan")
    fail_input(source, "not a memplan plan (expected \"format\": \"memplan.plan\"); write one with memplan plan");
  PlanDoc d;
  d.source = source;
  std::string where;
  try {
    d.version = j.at("version").get<int>();
    if (d.version != 1)
      fail_input(source, "plan format version " + std::to_string(d.version) +
                             " is not supported (this memplan reads version 1)");
    where = "model";
    d.model_path = j.at("model").at("path").get<std::string>();
    d.model_sha256 = j.at("model").at("sha256").get<std::string>();
    d.graph = j.at("model").at("graph").get<std::string>();
    where = "options";
    d.options = j.at("options").get<std::map<std::string, std::string>>();
    where = "streams";
    for (const auto& s : j.at("streams")) {
      StreamDoc sd;
      sd.device = s.at("device").get<std::string>();
      for (const auto& st : s.at("steps")) {
        StepDoc step;
        step.kind = st.at("kind").get<std::string>();
        step.node = st.at("node").get<int>();
        step.barrier = st.value("barrier", -1);
        step.trigger = st.value("trigger", -1);
        step.notification = st.value("notification", -1);
        step.host_wait = st.value("host_wait", false);
        sd.steps.push_back(step);
      }
      d.streams.push_back(std::move(sd));
    }
    where = "nodes";
    for (const auto& n : j.at("nodes")) {
      NodeDoc nd;
      nd.index = n.at("index").get<int>();
      nd.name = n.at("name").get<std::string>();
      nd.op_type = n.at("op_type").get<std::string>();
      nd.stream = n.at("stream").get<int>();
      nd.inputs = n.at("inputs").get<std::vector<int>>();
      nd.outputs = n.at("outputs").get<std::vector<int>>();
      nd.implicit_inputs = n.at("implicit_inputs").get<std::vector<int>>();
      nd.releases = n.at("releases").get<std::vector<int>>();
      d.nodes.push_back(std::move(nd));
    }
    where = "values";
    for (const auto& v : j.at("values")) {
      ValueDoc vd;
      vd.index = v.at("index").get<int>();
      vd.name = v.at("name").get<std::string>();
      vd.kind = v.at("kind").get<std::string>();
      vd.location = v.at("location").get<std::string>();
      vd.dtype = v.at("dtype").get<std::string>();
      if (!v.at("bytes").is_null()) vd.bytes = v.at("bytes").get<uint64_t>();
      vd.graph_input = v.value("graph_input", false);
      vd.initializer = v.value("initializer", false);
      vd.graph_output = v.value("graph_output", false);
      vd.inplace = v.value("inplace", false);
      vd.alias = v.value("alias", false);
      vd.reused_buffer = v.at("reused_buffer").get<int>();
      vd.inplace_of = v.value("inplace_of", -1);
      vd.producer = v.at("producer").get<int>();
      vd.consumers = v.at("consumers").get<std::vector<int>>();
      vd.implicit_consumers = v.value("implicit_consumers", std::vector<int>{});
      vd.first_use = v.at("first_use").get<int>();
      vd.last_use = v.at("last_use").get<int>();
      if (v.contains("arena") && !v["arena"].is_null()) {
        vd.arena = v["arena"].get<int>();
        vd.offset = v.at("offset").get<uint64_t>();
      }
      d.values.push_back(std::move(vd));
    }
    where = "release_actions";
    for (const auto& r : j.at("release_actions"))
      d.releases.push_back({r.at("value").get<int>(), r.at("ref_count").get<int>()});
    where = "arenas";
    for (const auto& a : j.at("arenas")) {
      ArenaDoc ad;
      ad.name = a.at("name").get<std::string>();
      ad.location = a.at("location").get<std::string>();
      ad.purpose = a.at("purpose").get<std::string>();
      ad.algorithm = a.at("algorithm").get<std::string>();
      ad.bytes = a.at("bytes").get<uint64_t>();
      ad.lower_bound = a.at("lower_bound").get<uint64_t>();
      ad.alignment = a.at("alignment").get<uint64_t>();
      ad.optimal = a.at("optimal").get<bool>();
      ad.multi_stream = a.value("multi_stream", false);
      d.arenas.push_back(ad);
    }
    where = "execution_order";
    d.execution_order = j.at("execution_order").get<std::vector<int>>();
    where = "ort_rules_estimate";
    if (j.contains("ort_rules_estimate")) {
      const auto& e = j.at("ort_rules_estimate");
      d.ort_rules_method = e.at("method").get<std::string>();
      d.ort_rules.emplace();
      for (const auto& t : e.at("device_totals")) {
        DeviceTotal dt;
        dt.device = t.at("device").get<std::string>();
        dt.activations = t.at("activations").get<uint64_t>();
        dt.outputs = t.at("outputs").get<uint64_t>();
        dt.weights = t.at("weights").get<uint64_t>();
        dt.inputs = t.at("inputs").get<uint64_t>();
        dt.unsized = t.at("complete").get<bool>() ? 0 : 1;
        d.ort_rules->push_back(dt);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    fail_input(source, "malformed plan in \"" + where + "\": " + e.what());
  }
  // Every index must be in range, so the checkers can index without guarding.
  const int nn = static_cast<int>(d.nodes.size()), nv = static_cast<int>(d.values.size());
  auto in = [](int i, int n) { return i >= 0 && i < n; };
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    const NodeDoc& n = d.nodes[i];
    if (n.index != static_cast<int>(i))
      fail_input(source, "nodes[" + std::to_string(i) + "] has index " + std::to_string(n.index));
    if (!in(n.stream, static_cast<int>(d.streams.size())))
      fail_input(source,
                 "node " + std::to_string(i) + " names stream " + std::to_string(n.stream) + ", which does not exist");
    for (int v : n.inputs)
      if (v != -1 && !in(v, nv))
        fail_input(source,
                   "node " + std::to_string(i) + " reads value " + std::to_string(v) + ", which does not exist");
    for (int v : n.outputs)
      if (v != -1 && !in(v, nv))
        fail_input(source,
                   "node " + std::to_string(i) + " writes value " + std::to_string(v) + ", which does not exist");
    for (int v : n.implicit_inputs)
      if (!in(v, nv))
        fail_input(source,
                   "node " + std::to_string(i) + " reads value " + std::to_string(v) + ", which does not exist");
    for (int r : n.releases)
      if (!in(r, static_cast<int>(d.releases.size())))
        fail_input(source, "node " + std::to_string(i) + " performs release action " + std::to_string(r) +
                               ", which does not exist");
  }
  for (size_t i = 0; i < d.values.size(); ++i) {
    const ValueDoc& v = d.values[i];
    if (v.index != static_cast<int>(i))
      fail_input(source, "values[" + std::to_string(i) + "] has index " + std::to_string(v.index));
    if (!in(v.reused_buffer, nv))
      fail_input(source,
                 "value '" + v.name + "' reuses buffer " + std::to_string(v.reused_buffer) + ", which does not exist");
    if (v.inplace_of != -1 && !in(v.inplace_of, nv))
      fail_input(source, "value '" + v.name + "' is in place of a value that does not exist");
    if (v.producer != -1 && !in(v.producer, nn))
      fail_input(source,
                 "value '" + v.name + "' has producer " + std::to_string(v.producer) + ", which does not exist");
    for (int c : v.consumers)
      if (!in(c, nn))
        fail_input(source, "value '" + v.name + "' has consumer " + std::to_string(c) + ", which does not exist");
    if (v.arena != -1 && !in(v.arena, static_cast<int>(d.arenas.size())))
      fail_input(source, "value '" + v.name + "' is in arena " + std::to_string(v.arena) + ", which does not exist");
  }
  for (const ReleaseDoc& r : d.releases)
    if (!in(r.value, nv))
      fail_input(source, "a release action frees value " + std::to_string(r.value) + ", which does not exist");
  for (const StreamDoc& s : d.streams)
    for (const StepDoc& st : s.steps)
      if (!in(st.node, nn))
        fail_input(source, "a step names node " + std::to_string(st.node) + ", which does not exist");
  for (int n : d.execution_order)
    if (!in(n, nn)) fail_input(source, "execution_order names node " + std::to_string(n) + ", which does not exist");
  return d;
}

std::vector<int> unsized_allocations(const PlanDoc& plan) {
  std::vector<int> out;
  for (const ValueDoc& v : plan.values)
    if (!v.bytes && (v.kind == "Allocate" || v.kind == "AllocateOutput" || v.kind == "AllocateStatically"))
      out.push_back(v.index);
  return out;
}

std::vector<DeviceTotal> device_totals(const PlanDoc& plan) {
  std::vector<DeviceTotal> totals;
  for (const ArenaDoc& a : plan.arenas) add_arena_bytes(totals, a.location, a.purpose, a.bytes);
  for (const ValueDoc& v : plan.values)
    if (v.graph_input && v.bytes) total_for(totals, v.location).inputs += *v.bytes;
  for (int v : unsized_allocations(plan)) ++total_for(totals, plan.values[v].location).unsized;
  sort_by_total(totals);
  return totals;
}

const DeviceTotal* ort_total(const PlanDoc& plan, const std::string& device) {
  return plan.ort_rules ? find_total(*plan.ort_rules, device) : nullptr;
}

std::vector<int32_t> inplace_roots(const PlanDoc& plan) {
  std::vector<int32_t> parent(plan.values.size());
  for (size_t v = 0; v < plan.values.size(); ++v) parent[v] = plan.values[v].inplace_of;
  return chain_roots(parent);
}

std::vector<std::string> unsized_dependencies(const PlanDoc& plan) {
  std::vector<std::string> out;
  auto text = [&](int v) { return "value " + std::to_string(v) + " '" + plan.values[v].name + "'"; };
  // The nearest value of unknown size up each in-place chain, for all values at once: with the chains cut below
  // every such value, the root of a value's parent is it (or the chain's top, of known size).
  const auto n = static_cast<int>(plan.values.size());
  auto valid = [&](int u) { return u >= 0 && u < n; };
  std::vector<int32_t> cut(plan.values.size(), -1);
  for (const ValueDoc& v : plan.values)
    if (v.bytes && valid(v.inplace_of)) cut[v.index] = v.inplace_of;
  const std::vector<int32_t> up = chain_roots(cut);
  for (const ValueDoc& v : plan.values) {
    if (!v.bytes) continue;
    // Every value whose memory v's bytes are in: its in-place chain, and the buffer it reuses.
    std::vector<int> owners;
    if (valid(v.inplace_of) && valid(up[v.inplace_of])) owners.push_back(up[v.inplace_of]);
    if (valid(v.reused_buffer) && v.reused_buffer != v.index) owners.push_back(v.reused_buffer);
    for (int u : owners)
      if (!plan.values[u].bytes) {
        out.push_back(text(v.index) + " (" + std::to_string(*v.bytes) + " bytes) is placed in the memory of " +
                      text(u) + ", whose size is unknown, so its bytes live nowhere the plan places; fix the " +
                      "unknown size (see memplan inspect MODEL) and plan again");
        break;
      }
  }
  return out;
}

}  // namespace memplan::plan_doc
