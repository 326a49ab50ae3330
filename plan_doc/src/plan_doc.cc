#include "memplan/plan_doc/plan_doc.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "memplan/chain_roots.h"
#include "memplan/error.h"
#include "memplan/file_kind.h"
#include "memplan/json_input.h"
#include "memplan/text_escape.h"

namespace memplan::plan_doc {

namespace {

using nlohmann::json;

// A field that is missing or of the wrong type or range: read_plan_doc names the section and field.
struct FieldError {
  std::string what;
};

const json& field(const json& obj, const char* key) {
  if (!obj.is_object()) throw FieldError{"expected an object"};
  auto it = obj.find(key);
  if (it == obj.end()) throw FieldError{std::string("\"") + key + "\" is missing"};
  return *it;
}

int64_t checked_integer(const json& v, const char* key, int64_t lo, int64_t hi) {
  if (!v.is_number_integer())
    throw FieldError{std::string("\"") + key + "\" is " + json_excerpt(v, 40) + ", not an integer"};
  if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(hi)
                             : v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    throw FieldError{std::string("\"") + key + "\" is " + json_excerpt(v, 40) + ", outside " + std::to_string(lo) +
                     ".." + std::to_string(hi)};
  return v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>()) : v.get<int64_t>();
}

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

int int_field(const json& obj, const char* key, int lo = -1) {
  return static_cast<int>(checked_integer(field(obj, key), key, lo, kIntMax));
}
int int_field_or(const json& obj, const char* key, int fallback, int lo = -1) {
  return obj.contains(key) ? int_field(obj, key, lo) : fallback;
}
uint64_t u64_field(const json& obj, const char* key) {
  const json& v = field(obj, key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
    throw FieldError{std::string("\"") + key + "\" is " + json_excerpt(v, 40) + ", not a non-negative integer"};
  return v.get<uint64_t>();
}
std::string string_field(const json& obj, const char* key) {
  const json& v = field(obj, key);
  if (!v.is_string()) throw FieldError{std::string("\"") + key + "\" is " + json_excerpt(v, 40) + ", not a string"};
  return v.get<std::string>();
}
bool bool_field_or(const json& obj, const char* key, bool fallback) {
  if (!obj.contains(key)) return fallback;
  const json& v = obj.at(key);
  if (!v.is_boolean())
    throw FieldError{std::string("\"") + key + "\" is " + json_excerpt(v, 40) + ", not true or false"};
  return v.get<bool>();
}
std::vector<int> int_list(const json& obj, const char* key, bool optional = false) {
  if (optional && !obj.contains(key)) return {};
  const json& v = field(obj, key);
  if (!v.is_array()) throw FieldError{std::string("\"") + key + "\" is " + json_excerpt(v, 40) + ", not a list"};
  std::vector<int> out;
  out.reserve(v.size());
  for (const json& e : v) out.push_back(static_cast<int>(checked_integer(e, key, -1, kIntMax)));
  return out;
}
const json& list_field(const json& obj, const char* key) {
  const json& v = field(obj, key);
  if (!v.is_array()) throw FieldError{std::string("\"") + key + "\" is " + json_excerpt(v, 40) + ", not a list"};
  return v;
}

bool one_of(const std::string& s, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (s == n) return true;
  return false;
}

// The part of a plan every graph has, the top-level one and each body: streams, nodes, values, releases, arenas,
// the execution order, and the bodies, recursively. `prefix` names the body in error messages.
void read_graph_plan(const json& j, PlanDoc& d, std::string& where, const std::string& prefix) {
  auto at = [](const std::string& section, size_t i) { return section + "[" + std::to_string(i) + "]"; };
  const json& streams = list_field(j, "streams");
  for (size_t s = 0; s < streams.size(); ++s) {
    where = prefix + at("streams", s);
    StreamDoc sd;
    sd.device = string_field(streams[s], "device");
    const json& steps = list_field(streams[s], "steps");
    for (size_t k = 0; k < steps.size(); ++k) {
      where = prefix + at("streams", s) + ".steps[" + std::to_string(k) + "]";
      const json& st = steps[k];
      StepDoc step;
      step.kind = string_field(st, "kind");
      if (!one_of(step.kind, {"LaunchKernel", "Barrier", "TriggerDownstream", "WaitOnEP", "ActivateNotification"}))
        throw FieldError{"\"kind\" is '" + terminal_text(step.kind) +
                         "', not LaunchKernel, Barrier, TriggerDownstream, WaitOnEP or ActivateNotification"};
      step.node = int_field(st, "node");
      step.barrier = int_field_or(st, "barrier", -1);
      step.trigger = int_field_or(st, "trigger", -1);
      step.notification = int_field_or(st, "notification", -1);
      step.host_wait = bool_field_or(st, "host_wait", false);
      sd.steps.push_back(step);
    }
    d.streams.push_back(std::move(sd));
  }
  const json& nodes = list_field(j, "nodes");
  for (size_t i = 0; i < nodes.size(); ++i) {
    where = prefix + at("nodes", i);
    const json& n = nodes[i];
    NodeDoc nd;
    nd.index = int_field(n, "index");
    nd.name = string_field(n, "name");
    nd.op_type = string_field(n, "op_type");
    nd.stream = int_field(n, "stream");
    nd.inputs = int_list(n, "inputs");
    nd.outputs = int_list(n, "outputs");
    nd.implicit_inputs = int_list(n, "implicit_inputs");
    nd.releases = int_list(n, "releases");
    if (n.contains("workspace"))
      for (const json& w : list_field(n, "workspace"))
        nd.workspace.push_back({int_field(w, "arena", 0), u64_field(w, "offset"), u64_field(w, "bytes")});
    d.nodes.push_back(std::move(nd));
  }
  const json& values = list_field(j, "values");
  for (size_t i = 0; i < values.size(); ++i) {
    where = prefix + at("values", i);
    const json& v = values[i];
    ValueDoc vd;
    vd.index = int_field(v, "index");
    vd.name = string_field(v, "name");
    vd.kind = string_field(v, "kind");
    if (!one_of(vd.kind, {"PreExisting", "AllocateStatically", "Allocate", "AllocateOutput", "Reuse", "Share",
                          "AllocatedExternally", "NotSet"}))
      throw FieldError{"\"kind\" is '" + terminal_text(vd.kind) + "', not an allocation kind (Allocate, Reuse, ...)"};
    vd.location = string_field(v, "location");
    vd.dtype = string_field(v, "dtype");
    if (!field(v, "bytes").is_null()) vd.bytes = u64_field(v, "bytes");
    vd.graph_input = bool_field_or(v, "graph_input", false);
    vd.initializer = bool_field_or(v, "initializer", false);
    vd.graph_output = bool_field_or(v, "graph_output", false);
    vd.inplace = bool_field_or(v, "inplace", false);
    vd.alias = bool_field_or(v, "alias", false);
    vd.outer_scope = bool_field_or(v, "outer_scope", false);
    vd.reused_buffer = int_field(v, "reused_buffer");
    vd.inplace_of = int_field_or(v, "inplace_of", -1);
    vd.producer = int_field(v, "producer");
    vd.consumers = int_list(v, "consumers");
    vd.implicit_consumers = int_list(v, "implicit_consumers", /*optional=*/true);
    vd.first_use = int_field(v, "first_use");
    vd.last_use = int_field(v, "last_use");
    if (v.contains("arena") && !v["arena"].is_null()) {
      vd.arena = int_field(v, "arena");
      vd.offset = u64_field(v, "offset");
    }
    d.values.push_back(std::move(vd));
  }
  const json& releases = list_field(j, "release_actions");
  for (size_t i = 0; i < releases.size(); ++i) {
    where = prefix + at("release_actions", i);
    d.releases.push_back({int_field(releases[i], "value"), int_field(releases[i], "ref_count", 0)});
  }
  const json& arenas = list_field(j, "arenas");
  for (size_t i = 0; i < arenas.size(); ++i) {
    where = prefix + at("arenas", i);
    const json& a = arenas[i];
    ArenaDoc ad;
    ad.name = string_field(a, "name");
    ad.location = string_field(a, "location");
    ad.purpose = string_field(a, "purpose");
    if (!one_of(ad.purpose, {"activations", "outputs", "weights", "bodies"}))
      throw FieldError{"\"purpose\" is '" + terminal_text(ad.purpose) +
                       "', not activations, outputs, weights or bodies"};
    ad.algorithm = string_field(a, "algorithm");
    ad.bytes = u64_field(a, "bytes");
    ad.lower_bound = u64_field(a, "lower_bound");
    ad.alignment = u64_field(a, "alignment");
    // (a power of two, at most 1 GiB: what --align accepts; 0 would divide by zero in every checker)
    if (ad.alignment == 0 || (ad.alignment & (ad.alignment - 1)) != 0 || ad.alignment > (uint64_t{1} << 30))
      throw FieldError{"\"alignment\" is " + std::to_string(ad.alignment) + ", not a power of two up to 1 GiB"};
    const json& optimal = field(a, "optimal");
    if (!optimal.is_boolean()) throw FieldError{"\"optimal\" is not true or false"};
    ad.optimal = optimal.get<bool>();
    ad.multi_stream = bool_field_or(a, "multi_stream", false);
    d.arenas.push_back(ad);
  }
  where = prefix + "execution_order";
  d.execution_order = int_list(j, "execution_order");
  if (!j.contains("subgraphs")) return;
  const json& subgraphs = list_field(j, "subgraphs");
  for (size_t i = 0; i < subgraphs.size(); ++i) {
    const std::string here = prefix + at("subgraphs", i);
    where = here;
    const json& sub = subgraphs[i];
    // Plans written before bodies had layouts list kinds only; they are read without their bodies.
    if (!sub.is_object() || !sub.contains("streams")) continue;
    SubgraphDoc sd;
    sd.owner = int_field(sub, "owner");
    sd.attribute = string_field(sub, "attribute");
    sd.plan.source =
        d.source + " (body '" + terminal_text(sd.attribute) + "' of node " + std::to_string(sd.owner) + ")";
    sd.plan.version = d.version;
    sd.plan.graph = string_field(sub, "graph");
    sd.plan.complete = bool_field_or(sub, "complete", true);
    read_graph_plan(sub, sd.plan, where, here + ".");
    d.subgraphs.push_back(std::move(sd));
  }
}

}  // namespace

PlanDoc read_plan_doc(const std::string& text, const std::string& source) {
  expect_file_kind(text, source, FileKind::kPlan);
  return read_parsed_plan_doc(parse_json_input(text, source), source);
}

PlanDoc read_parsed_plan_doc(const json& j, const std::string& source) {
  if (!j.is_object() || json_string(j, "format") != "memplan.plan")
    fail_input(source, "not a memplan plan (expected \"format\": \"memplan.plan\"); write one with memplan plan");
  PlanDoc d;
  d.source = source;
  std::string where = "version";
  try {
    d.version = int_field(j, "version");
    if (d.version != 1)
      fail_input(source, "plan format version " + std::to_string(d.version) +
                             " is not supported (this memplan reads version 1)");
    where = "model";
    const json& model = field(j, "model");
    d.model_path = string_field(model, "path");
    d.model_sha256 = string_field(model, "sha256");
    d.graph = string_field(model, "graph");
    where = "options";
    const json& options = field(j, "options");
    if (!options.is_object()) throw FieldError{"expected an object of strings"};
    for (const auto& [k, v] : options.items()) {
      if (!v.is_string()) throw FieldError{"\"" + terminal_text(k) + "\" is not a string"};
      d.options[k] = v.get<std::string>();
    }
    d.complete = bool_field_or(j, "complete", true);
    read_graph_plan(j, d, where, "");
    where = "ort_rules_estimate";
    if (j.contains("ort_rules_estimate")) {
      const json& e = j.at("ort_rules_estimate");
      d.ort_rules_method = string_field(e, "method");
      d.ort_rules.emplace();
      for (const json& t : list_field(e, "device_totals")) {
        DeviceTotal dt;
        dt.device = string_field(t, "device");
        dt.activations = u64_field(t, "activations");
        dt.outputs = u64_field(t, "outputs");
        dt.weights = u64_field(t, "weights");
        dt.inputs = u64_field(t, "inputs");
        const json& complete = field(t, "complete");
        if (!complete.is_boolean()) throw FieldError{"\"complete\" is not true or false"};
        dt.unsized = complete.get<bool>() ? 0 : 1;
        d.ort_rules->push_back(dt);
      }
    }
  } catch (const FieldError& e) {
    fail_input(source, "malformed plan in \"" + where + "\": " + e.what);
  } catch (const nlohmann::json::exception& e) {
    fail_input(source, "malformed plan in \"" + where + "\": " + e.what());
  }
  check_plan_structure(d);
  return d;
}

void check_plan_structure(const PlanDoc& d) {
  const std::string& source = d.source;
  // Every index must be in range, so the checkers can index without guarding.
  const int nn = static_cast<int>(d.nodes.size()), nv = static_cast<int>(d.values.size());
  const int ns = static_cast<int>(d.streams.size()), na = static_cast<int>(d.arenas.size());
  const int steps_total = [&] {
    size_t n = 0;
    for (const StreamDoc& s : d.streams) n += s.steps.size();
    return static_cast<int>(std::min<size_t>(n, kIntMax));
  }();
  auto in = [](int i, int n) { return i >= 0 && i < n; };
  auto value_text = [&](size_t i) {
    return "value " + std::to_string(i) + " '" + terminal_text(d.values[i].name) + "'";
  };
  if (ns > kMaxPlanStreams)
    fail_input(source, "the plan has " + std::to_string(ns) + " streams; memplan plans at most " +
                           std::to_string(kMaxPlanStreams) + " (64 per device)");
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    const NodeDoc& n = d.nodes[i];
    const std::string node = "node " + std::to_string(i);
    if (n.index != static_cast<int>(i))
      fail_input(source, "nodes[" + std::to_string(i) + "] has index " + std::to_string(n.index));
    if (!in(n.stream, ns))
      fail_input(source, node + " names stream " + std::to_string(n.stream) + ", which does not exist");
    for (int v : n.inputs)
      if (v != -1 && !in(v, nv))
        fail_input(source, node + " reads value " + std::to_string(v) + ", which does not exist");
    for (int v : n.outputs)
      if (v != -1 && !in(v, nv))
        fail_input(source, node + " writes value " + std::to_string(v) + ", which does not exist");
    for (int v : n.implicit_inputs)
      if (!in(v, nv)) fail_input(source, node + " reads value " + std::to_string(v) + ", which does not exist");
    for (int r : n.releases)
      if (!in(r, static_cast<int>(d.releases.size())))
        fail_input(source, node + " performs release action " + std::to_string(r) + ", which does not exist");
    for (const WorkspaceDoc& w : n.workspace) {
      if (!in(w.arena, na))
        fail_input(source, node + "'s workspace is in arena " + std::to_string(w.arena) + ", which does not exist");
      if (w.bytes > std::numeric_limits<uint64_t>::max() - w.offset)
        fail_input(source, node + "'s workspace: offset + bytes overflows");
    }
  }
  const int order_size = static_cast<int>(d.execution_order.size());
  for (size_t i = 0; i < d.values.size(); ++i) {
    const ValueDoc& v = d.values[i];
    if (v.index != static_cast<int>(i))
      fail_input(source, "values[" + std::to_string(i) + "] has index " + std::to_string(v.index));
    if (!in(v.reused_buffer, nv))
      fail_input(source,
                 value_text(i) + " reuses buffer " + std::to_string(v.reused_buffer) + ", which does not exist");
    if (v.inplace_of != -1 && !in(v.inplace_of, nv))
      fail_input(source, value_text(i) + " is in place of a value that does not exist");
    if (v.producer != -1 && !in(v.producer, nn))
      fail_input(source, value_text(i) + " has producer " + std::to_string(v.producer) + ", which does not exist");
    for (const auto* list : {&v.consumers, &v.implicit_consumers})
      for (int c : *list)
        if (!in(c, nn))
          fail_input(source, value_text(i) + " has consumer " + std::to_string(c) + ", which does not exist");
    if (v.arena != -1 && !in(v.arena, na))
      fail_input(source, value_text(i) + " is in arena " + std::to_string(v.arena) + ", which does not exist");
    // Lifetimes are positions in the execution order (-1: never live).
    if (v.first_use < -1 || v.last_use < v.first_use || v.last_use >= std::max(order_size, 1))
      fail_input(source, value_text(i) + " lives from step " + std::to_string(v.first_use) + " to step " +
                             std::to_string(v.last_use) + ", outside the execution order's " +
                             std::to_string(order_size) + " steps");
    if (v.arena != -1 && v.bytes && *v.bytes > std::numeric_limits<uint64_t>::max() - v.offset)
      fail_input(source, value_text(i) + ": offset + bytes overflows");
  }
  // In-place chains must end: every reader follows them to their root.
  const std::vector<int32_t> roots = inplace_roots(d);
  for (size_t i = 0; i < roots.size(); ++i)
    if (roots[i] == kOnCycle)
      fail_input(source, value_text(i) +
                             " is on (or leads into) a cycle of \"inplace_of\"; no value can be in place "
                             "of itself");
  for (const ReleaseDoc& r : d.releases)
    if (!in(r.value, nv))
      fail_input(source, "a release action frees value " + std::to_string(r.value) + ", which does not exist");
  // Synchronisation indices: a plan has at most one barrier, trigger or notification per step.
  for (size_t s = 0; s < d.streams.size(); ++s)
    for (const StepDoc& st : d.streams[s].steps) {
      const std::string step = "a " + st.kind + " step of stream " + std::to_string(s);
      if (!in(st.node, nn))
        fail_input(source, step + " names node " + std::to_string(st.node) + ", which does not exist");
      const bool barrier = st.kind == "Barrier", trigger = barrier || st.kind == "TriggerDownstream",
                 notification = st.kind == "WaitOnEP" || st.kind == "ActivateNotification";
      if (trigger && !in(st.trigger, steps_total))
        fail_input(source, step + " has trigger " + std::to_string(st.trigger) + "; expected 0.." +
                               std::to_string(steps_total - 1) + " (one per step at most)");
      if (barrier && !in(st.barrier, steps_total))
        fail_input(source, step + " has barrier " + std::to_string(st.barrier) + "; expected 0.." +
                               std::to_string(steps_total - 1));
      if (notification && !in(st.notification, steps_total))
        fail_input(source, step + " has notification " + std::to_string(st.notification) + "; expected 0.." +
                               std::to_string(steps_total - 1) + " (one per step at most)");
    }
  for (int n : d.execution_order)
    if (!in(n, nn)) fail_input(source, "execution_order names node " + std::to_string(n) + ", which does not exist");
  for (const SubgraphDoc& sub : d.subgraphs) {
    if (!in(sub.owner, nn))
      fail_input(source, "a body names owner node " + std::to_string(sub.owner) + ", which does not exist");
    check_plan_structure(sub.plan);
  }
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
  // A body's own arenas are inside its owner's workspace; only what it could not size adds to the totals.
  std::vector<const PlanDoc*> bodies;
  for (const SubgraphDoc& sub : plan.subgraphs) bodies.push_back(&sub.plan);
  while (!bodies.empty()) {
    const PlanDoc* body = bodies.back();
    bodies.pop_back();
    for (int v : unsized_allocations(*body)) ++total_for(totals, body->values[v].location).unsized;
    for (const SubgraphDoc& sub : body->subgraphs) bodies.push_back(&sub.plan);
  }
  sort_by_total(totals);
  return totals;
}

const DeviceTotal* ort_total(const PlanDoc& plan, const std::string& device) {
  return plan.ort_rules ? find_total(*plan.ort_rules, device) : nullptr;
}

int outer_value_source(const PlanDoc& parent, const NodeDoc& owner, const std::string& name) {
  for (int v : owner.implicit_inputs) {
    const std::string& have = parent.values[v].name;
    if (have == name || (have.size() > name.size() + 1 && have.rfind(name + "_", 0) == 0 &&
                         have.ends_with("ExecutionProvider") && have.find('_', name.size() + 1) == std::string::npos))
      return v;
  }
  return -1;
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
