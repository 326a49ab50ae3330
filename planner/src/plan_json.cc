#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "memplan/file_io.h"
#include "memplan/json_writer.h"
#include "memplan/ordered_parts.h"
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

// A graph's plan: arenas, execution order, nodes (with the workspace an owner of bodies holds), release
// actions, streams, the bodies' plans in the same form (subgraphs) and values (with arena offsets). The
// top-level plan and every If/Loop/Scan body are written by these, so `validate` and `replay` read both the
// same way. Written as text directly (json_writer.h: a tree of a 100k-node plan costs seconds), with every
// object's keys in byte order, as the format has always had them.
void write_arenas(JsonWriter& w, const Layout* layout) {
  w.key("arenas").begin_array();
  if (layout)
    for (const Arena& a : layout->arenas) w.json(arena_to_json(a));
  w.end_array();
}

// Each node's workspaces in the layout's order (none without a layout).
std::vector<std::vector<const Workspace*>> workspaces_by_node(const Graph& g, const Layout* layout) {
  std::vector<std::vector<const Workspace*>> workspace(g.nodes.size());
  if (layout)
    for (const Workspace& ws : layout->workspaces)
      if (ws.arena >= 0) workspace[ws.node].push_back(&ws);
  return workspace;
}

void write_node(JsonWriter& w, const Node& n, const Plan& p, const std::vector<const Workspace*>& workspace) {
  w.begin_object()
      .field("domain", n.domain)
      .field("implicit_inputs", n.implicit_inputs)
      .field("index", n.index)
      .field("inputs", n.inputs)
      .field("name", n.name)
      .field("op_type", n.op_type)
      .field("outputs", n.outputs)
      .field("releases", p.node_releases[n.index])
      .field("stream", p.node_stream[n.index]);
  if (!workspace.empty()) {
    w.key("workspace").begin_array();
    for (const Workspace* ws : workspace)
      w.begin_object().field("arena", ws->arena).field("bytes", ws->bytes).field("offset", ws->offset).end_object();
    w.end_array();
  }
  w.end_object();
}

void write_nodes(JsonWriter& w, const Graph& g, const Plan& p, const Layout* layout) {
  const std::vector<std::vector<const Workspace*>> workspace = workspaces_by_node(g, layout);
  w.key("nodes").begin_array();
  for (const Node& n : g.nodes) write_node(w, n, p, workspace[n.index]);
  w.end_array();
}

void write_release_actions(JsonWriter& w, const Plan& p) {
  w.key("release_actions").begin_array();
  for (const ReleaseAction& r : p.release_actions)
    w.begin_object().field("ref_count", r.ref_count).field("value", r.value).end_object();
  w.end_array();
}

// Steps [first, last) of stream `i`, inside the "streams" list: the stream's object opened before the first of its
// steps and closed after its last, so that a long stream can be written in runs (write_plan_json's parts).
void write_stream_steps(JsonWriter& w, const Plan& p, size_t i, size_t first, size_t last,
                        const OffloadRecord* offload) {
  const LogicStream& s = p.streams[i];
  if (first == 0) {
    w.begin_object().field("device", partition::device_name(s.device));
    // Offload's copy streams say so (version 2); every other stream computes.
    if (offload && static_cast<int>(i) == offload->copy_in_stream) w.field("purpose", "copy-in");
    if (offload && static_cast<int>(i) == offload->copy_out_stream) w.field("purpose", "copy-out");
    w.key("steps").begin_array();
  }
  for (size_t k = first; k < last; ++k) {
    const Step& st = s.steps[k];
    const bool barrier = st.kind == StepKind::kBarrier, wait = st.kind == StepKind::kWaitOnEP;
    w.begin_object();
    if (barrier) w.field("barrier", st.barrier);
    if (wait) w.field("host_wait", st.host_wait);
    w.field("kind", step_kind_name(st.kind)).field("node", st.node);
    if (wait || st.kind == StepKind::kActivateNotification) w.field("notification", st.notification);
    if (barrier || st.kind == StepKind::kTriggerDownstream) w.field("trigger", st.trigger);
    w.end_object();
  }
  if (last == s.steps.size()) w.end_array().end_object();
}

void write_streams(JsonWriter& w, const Plan& p) {
  w.key("streams").begin_array();
  for (size_t i = 0; i < p.streams.size(); ++i) write_stream_steps(w, p, i, 0, p.streams[i].steps.size(), nullptr);
  w.end_array();
}

void write_offload(JsonWriter& w, const OffloadRecord& o) {
  w.key("offload").begin_object();
  w.field("before", o.before).field("budget", o.budget).field("bytes_moved", o.bytes_moved);
  w.key("bytes_per_us").json(nlohmann::json(o.bytes_per_us));
  w.key("compute_us").json(nlohmann::json(o.compute_us));
  w.field("copy_in_stream", o.copy_in_stream).field("copy_out_stream", o.copy_out_stream);
  w.field("device", partition::device_name(o.device));
  w.key("estimated_us").json(nlohmann::json(o.estimated_us));
  w.key("moved").begin_array();
  for (const auto& m : o.moved)
    w.begin_object()
        .field("copies", m.copies)
        .field("home", m.home)
        .field("source", m.source)
        .field("staging", m.staging)
        .field("weight", m.weight)
        .end_object();
  w.end_array().end_object();
}

// Per value: the home value of a staging copy (offload), -1 for every other value.
std::vector<ValueId> staging_homes(size_t values, const OffloadRecord* offload) {
  std::vector<ValueId> home;
  if (!offload) return home;
  home.assign(values, kNoId);
  for (const auto& m : offload->moved)
    for (ValueId s : m.staging) home[s] = m.home;
  return home;
}

void write_value(JsonWriter& w, const Value& v, const Plan& p, const Layout* layout,
                 const std::vector<ValueId>& staging_of = {}) {
  const ValuePlan& vp = p.values[v.index];
  const int arena = layout ? layout->value_arena[v.index] : -1;
  w.begin_object().field("alias", vp.alias);
  if (layout) {
    w.key("arena");
    arena >= 0 ? w.integer(arena) : w.null();
  }
  w.field("bytes", v.bytes)
      .field("consumers", v.consumers)
      .field("dtype", dtype_name(v.dtype))
      .field("first_use", vp.first_use)
      .field("graph_input", v.is_graph_input && !v.is_initializer)
      .field("graph_output", v.is_graph_output)
      .field("implicit_consumers", v.implicit_consumers)
      .field("index", v.index)
      .field("initializer", v.is_initializer)
      .field("inplace", vp.inplace)
      .field("inplace_of", vp.inplace_of)
      .field("kind", alloc_kind_name(vp.kind))
      .field("last_use", vp.last_use)
      .field("location", partition::device_name(vp.location))
      .field("name", v.name);
  if (layout) {
    w.key("offset");
    arena >= 0 ? w.value(layout->value_offset[v.index]) : w.null();
  }
  if (v.is_outer_scope) w.field("outer_scope", true);
  w.field("producer", v.producer).field("reused_buffer", vp.reused_buffer).key("shape");
  if (v.has_shape) {
    w.begin_array();
    for (const Dim& d : v.dims) d.known() ? w.integer(d.value) : d.param.empty() ? w.null() : w.string(d.param);
    w.end_array();
  } else {
    w.null();
  }
  if (!staging_of.empty() && staging_of[v.index] != kNoId) w.field("staging_of", staging_of[v.index]);
  w.end_object();
}

void write_values(JsonWriter& w, const Graph& g, const Plan& p, const Layout* layout) {
  w.key("values").begin_array();
  for (const Value& v : g.values) write_value(w, v, p, layout);
  w.end_array();
}

void write_body(JsonWriter& w, const SubgraphPlan& sp) {
  const Plan& p = sp.plan;
  w.begin_object();
  write_arenas(w, &sp.layout);
  w.field("attribute", sp.attribute).field("complete", sp.unsized.empty());
  w.field("execution_order", p.execution_order).field("graph", sp.graph->name);
  write_nodes(w, *sp.graph, p, &sp.layout);
  w.field("owner", sp.owner);
  write_release_actions(w, p);
  write_streams(w, p);
  w.key("subgraphs").begin_array();
  for (const SubgraphPlan& nested : sp.nested) write_body(w, nested);
  w.end_array();
  w.field("unsized_values", sp.unsized);
  write_values(w, *sp.graph, p, &sp.layout);
  w.end_object();
}

}  // namespace

// A plan's text is made in parts (plan_io.h): its start, runs of nodes, its middle, runs of each stream's steps, runs
// of values, its end. Runs of about 1-3 MB: enough to make a part worth a thread's turn, small enough that the parts
// waiting in memory (at most kPartsAhead) stay a few tens of MB on a 1M-node plan, and that their memory is used
// again (a part of all the steps, 42 MB on a 100k-node plan with copy streams, was fresh memory each time). Graphs
// with fewer values than kValuesOnTwoThreads are made on one thread.
constexpr size_t kNodesPerPart = 8192;
constexpr size_t kValuesPerPart = 4096;
constexpr size_t kStepsPerPart = 16384;
constexpr size_t kPartsAhead = 16;
constexpr size_t kValuesOnTwoThreads = 20000;

void write_plan_json(const PlanContext& ctx, const std::function<void(std::string_view)>& out, SpillFile* spill) {
  const Graph& g = ctx.graph;
  const Plan& p = ctx.plan;
  auto write_totals = [](JsonWriter& w, const std::vector<DeviceTotal>& totals) {
    w.key("device_totals").begin_array();
    for (const DeviceTotal& t : totals) w.json(device_total_json(t));
    w.end_array();
  };
  std::set<Device> devices;
  for (const auto& s : p.streams) devices.insert(s.device);
  for (const auto& v : p.values) devices.insert(v.location);
  // An incomplete plan (allocated values of unknown size, here or in a body) says so at the top: its totals are
  // lower bounds.
  const std::vector<ValueId> unsized = unsized_allocations(g, p);
  std::map<std::string, std::string> options = ctx.options;
  options["reuse"] = reuse_mode_name(p.reuse);
  const int version = ctx.offload ? kPlanFormatVersionOffload : kPlanFormatVersion;
  const std::vector<ValueId> staging_of = staging_homes(g.values.size(), ctx.offload);
  const std::vector<std::vector<const Workspace*>> workspace = workspaces_by_node(g, ctx.layout);

  // The parts: [start and the first run of nodes] [the other runs of nodes]... [the rest up to ORT's estimate] [ORT's
  // estimate] [the rest up to the values, and the first run of values] [the other runs of values]... [the end]. Each
  // part but the first continues the document where the part before it left it: inside the plan object, inside the
  // nodes or values list.
  const size_t node_count = g.nodes.size(), value_count = g.values.size();
  auto runs = [](size_t n, size_t per_part) { return n <= per_part ? 0 : (n - 1) / per_part; };  // after the first
  const size_t node_runs = runs(node_count, kNodesPerPart), value_runs = runs(value_count, kValuesPerPart);
  // The streams' runs of steps: (stream, first step); a stream without steps has one, empty.
  std::vector<std::pair<size_t, size_t>> step_runs;
  for (size_t s = 0; s < p.streams.size(); ++s)
    for (size_t k = 0; k == 0 || k < p.streams[s].steps.size(); k += kStepsPerPart) step_runs.push_back({s, k});
  const size_t middle = 1 + node_runs, ort_part = middle + 1, streams_start = middle + 2;
  const size_t values_start = streams_start + std::max<size_t>(1, step_runs.size());
  const size_t end = values_start + 1 + value_runs;
  // ORT's estimate, waited for where it is still being made.
  auto ort_text = [&] {
    const std::vector<DeviceTotal>* ort_rules = ctx.ort_rules           ? ctx.ort_rules
                                                : ctx.ort_rules_pending ? ctx.ort_rules_pending.wait()
                                                                        : nullptr;
    JsonWriter w = JsonWriter::continuing(1, {true});  // inside the plan object
    if (ort_rules) {
      w.key("ort_rules_estimate").begin_object();
      write_totals(w, *ort_rules);
      w.field("method", kOrtRulesMethod).end_object();
    }
    return w.take();
  };
  const bool estimate_pending = !ctx.ort_rules && ctx.ort_rules_pending;
  auto write_nodes_from = [&](JsonWriter& w, size_t first) {
    const size_t last = std::min(node_count, first + kNodesPerPart);
    for (size_t i = first; i < last; ++i) write_node(w, g.nodes[i], p, workspace[i]);
  };
  auto write_values_from = [&](JsonWriter& w, size_t first) {
    const size_t last = std::min(value_count, first + kValuesPerPart);
    for (size_t i = first; i < last; ++i) write_value(w, g.values[i], p, ctx.layout, staging_of);
  };
  auto make = [&](size_t part) -> std::string {
    if (part == 0) {
      JsonWriter w(1);
      w.begin_object();
      write_arenas(w, ctx.layout);
      w.field("complete", unsized.empty() && (!ctx.subgraphs || unsized_in_bodies(*ctx.subgraphs).empty()));
      if (ctx.totals) write_totals(w, *ctx.totals);
      w.key("devices").begin_array();
      for (Device d : devices) w.string(partition::device_name(d));
      w.end_array();
      w.field("execution_order", p.execution_order).field("format", "memplan.plan");
      w.field("generator", std::string("memplan ") + MEMPLAN_VERSION);
      w.key("model").begin_object();
      w.field("graph", g.name).field("path", ctx.model_path).field("sha256", ctx.model_sha256).end_object();
      w.key("nodes").begin_array();
      write_nodes_from(w, 0);
      return w.take();
    }
    if (part < middle) {
      JsonWriter w = JsonWriter::continuing(1, {true, false});  // inside the plan object, inside "nodes"
      write_nodes_from(w, part * kNodesPerPart);
      return w.take();
    }
    if (part == middle) {
      JsonWriter w = JsonWriter::continuing(1, {true, false}, /*innermost_empty=*/node_count == 0);
      w.end_array();
      if (ctx.offload) write_offload(w, *ctx.offload);
      w.key("options").begin_object();
      for (const auto& [k, v] : options) w.field(k, v);
      w.end_object();
      return w.take();
    }
    if (part == ort_part) return estimate_pending ? std::string() : ort_text();  // (pending: made as it goes out)
    if (part < values_start) {
      const size_t run = part - streams_start;
      JsonWriter w = JsonWriter::continuing(1, {true});  // inside the plan object
      if (run == 0) {
        write_release_actions(w, p);
        w.key("streams").begin_array();
      } else if (step_runs[run].second == 0) {
        w = JsonWriter::continuing(1, {true, false});  // inside "streams", after a stream
      } else {
        w = JsonWriter::continuing(1, {true, false, true, false});  // inside a stream's "steps", after a step
      }
      if (!step_runs.empty()) {
        const auto [stream, first] = step_runs[run];
        write_stream_steps(w, p, stream, first, std::min(p.streams[stream].steps.size(), first + kStepsPerPart),
                           ctx.offload);
      }
      if (run + 1 >= step_runs.size()) w.end_array();
      return w.take();
    }
    if (part == values_start) {
      JsonWriter w = JsonWriter::continuing(1, {true});  // inside the plan object
      w.key("subgraphs").begin_array();
      if (ctx.subgraphs)
        for (const SubgraphPlan& sp : *ctx.subgraphs) write_body(w, sp);
      w.end_array();
      w.field("unsized_values", unsized);
      w.key("values").begin_array();
      write_values_from(w, 0);
      return w.take();
    }
    if (part < end) {
      JsonWriter w = JsonWriter::continuing(1, {true, false});  // inside the plan object, inside "values"
      write_values_from(w, (part - values_start) * kValuesPerPart);
      return w.take();
    }
    JsonWriter w = JsonWriter::continuing(1, {true, false}, /*innermost_empty=*/value_count == 0);
    w.end_array().field("version", version).end_object();
    return w.take() + '\n';
  };
  // The parts go out in order, but where ORT's estimate is still being made when its turn comes, and a spill file
  // is at hand, the parts after it go there until it is ready (a 1M-node plan's estimate can take seconds more than
  // the plan, whose values' text is made meanwhile instead of waiting).
  const bool can_set_aside = estimate_pending && spill && spill->ok() && ctx.ort_rules_pending.ready;
  size_t next = 0;
  std::atomic<bool> set_aside{false};  // (read by the helper thread: it pauses meanwhile, see below)
  auto hand_on_set_aside = [&] {
    out(ort_text());
    spill->hand_on(out);
    set_aside = false;
  };
  // While the text is set aside, one thread makes it: the estimate is waited for because its work (ORT's view, a
  // child process at a lower priority, then its plan) is not done, and a second thread would take its core.
  make_parts_in_order(
      end + 1, value_count > kValuesOnTwoThreads ? 2 : 1, kPartsAhead, make,
      [&](std::string& text) {
        const size_t part = next++;
        if (part == ort_part && estimate_pending) {
          if (can_set_aside && !ctx.ort_rules_pending.ready())
            set_aside = true;
          else
            out(ort_text());
          return;
        }
        if (set_aside) {
          if (!ctx.ort_rules_pending.ready()) return spill->append(text);
          hand_on_set_aside();
        }
        out(text);
      },
      [&] { return set_aside.load(); });
  if (set_aside) hand_on_set_aside();
}

std::string plan_to_json(const PlanContext& ctx) {
  std::string text;
  write_plan_json(ctx, [&](std::string_view piece) { text += piece; });
  return text;
}

}  // namespace memplan::planner
