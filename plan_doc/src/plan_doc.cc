#include "memplan/plan_doc/plan_doc.h"

#include <limits>

#include "memplan/chain_roots.h"
#include "memplan/error.h"
#include "memplan/text_escape.h"

namespace memplan::plan_doc {

namespace {

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

bool in(int i, int n) {
  return i >= 0 && i < n;
}

std::string value_text(const PlanDoc& d, size_t i) {
  return "value " + std::to_string(i) + " '" + terminal_text(d.values[i].name) + "'";
}

// Each value's indices (nodes too, when `nodes_read`), lifetime and offset, and that in-place chains end.
void check_values(const PlanDoc& d, bool nodes_read) {
  const std::string& source = d.source;
  const int nn = static_cast<int>(d.nodes.size()), nv = static_cast<int>(d.values.size());
  const int na = static_cast<int>(d.arenas.size());
  const int order_size = static_cast<int>(d.execution_order.size());
  for (size_t i = 0; i < d.values.size(); ++i) {
    const ValueDoc& v = d.values[i];
    if (v.index != static_cast<int>(i))
      fail_input(source, "values[" + std::to_string(i) + "] has index " + std::to_string(v.index));
    if (!in(v.reused_buffer, nv))
      fail_input(source,
                 value_text(d, i) + " reuses buffer " + std::to_string(v.reused_buffer) + ", which does not exist");
    if (v.inplace_of != -1 && !in(v.inplace_of, nv))
      fail_input(source, value_text(d, i) + " is in place of a value that does not exist");
    if (nodes_read) {
      if (v.producer != -1 && !in(v.producer, nn))
        fail_input(source, value_text(d, i) + " has producer " + std::to_string(v.producer) + ", which does not exist");
      for (const auto* list : {&v.consumers, &v.implicit_consumers})
        for (int c : *list)
          if (!in(c, nn))
            fail_input(source, value_text(d, i) + " has consumer " + std::to_string(c) + ", which does not exist");
    }
    if (v.arena != -1 && !in(v.arena, na))
      fail_input(source, value_text(d, i) + " is in arena " + std::to_string(v.arena) + ", which does not exist");
    // Lifetimes are positions in the execution order (-1: never live).
    if (v.first_use < -1 || v.last_use < v.first_use || v.last_use >= std::max(order_size, 1))
      fail_input(source, value_text(d, i) + " lives from step " + std::to_string(v.first_use) + " to step " +
                             std::to_string(v.last_use) + ", outside the execution order's " +
                             std::to_string(order_size) + " steps");
    if (v.arena != -1 && v.bytes && *v.bytes > std::numeric_limits<uint64_t>::max() - v.offset)
      fail_input(source, value_text(d, i) + ": offset + bytes overflows");
  }
  // In-place chains must end: every reader follows them to their root.
  const std::vector<int32_t> roots = inplace_roots(d);
  for (size_t i = 0; i < roots.size(); ++i)
    if (roots[i] == kOnCycle)
      fail_input(source, value_text(d, i) +
                             " is on (or leads into) a cycle of \"inplace_of\"; no value can be in place "
                             "of itself");
}

void check_staging(const PlanDoc& d) {
  const std::string& source = d.source;
  const int nv = static_cast<int>(d.values.size());
  for (size_t i = 0; i < d.values.size(); ++i)
    if (d.values[i].staging_of != -1 && !in(d.values[i].staging_of, nv))
      fail_input(source, value_text(d, i) + " is a staging copy of value " + std::to_string(d.values[i].staging_of) +
                             ", which does not exist");
}

}  // namespace

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
  check_values(d, /*nodes_read=*/true);
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
  // Offload (version 2): every index in range; whether the copies are sound is validate's question.
  check_staging(d);
  if (d.offload) {
    const OffloadDoc& o = *d.offload;
    if (d.version < 2)
      fail_input(source, "\"offload\" needs plan format version 2, and the plan says " + std::to_string(d.version));
    for (int s : {o.copy_in_stream, o.copy_out_stream})
      if (s != -1 && !in(s, ns))
        fail_input(source, "offload names copy stream " + std::to_string(s) + ", which does not exist");
    for (size_t k = 0; k < o.moved.size(); ++k) {
      const auto& m = o.moved[k];
      const std::string what = "offload.moved[" + std::to_string(k) + "]";
      if (!in(m.home, nv))
        fail_input(source, what + " has home value " + std::to_string(m.home) + ", which does not exist");
      if (m.source != -1 && !in(m.source, nv))
        fail_input(source, what + " has source value " + std::to_string(m.source) + ", which does not exist");
      for (int v : m.staging)
        if (!in(v, nv)) fail_input(source, what + " has staging value " + std::to_string(v) + ", which does not exist");
      for (int n : m.copies)
        if (!in(n, nn)) fail_input(source, what + " has copy node " + std::to_string(n) + ", which does not exist");
    }
  }
  for (const SubgraphDoc& sub : d.subgraphs) {
    if (!in(sub.owner, nn))
      fail_input(source, "a body names owner node " + std::to_string(sub.owner) + ", which does not exist");
    check_plan_structure(sub.plan);
  }
}

void check_values_structure(const PlanDoc& d) {
  check_values(d, /*nodes_read=*/false);
  check_staging(d);
  for (const SubgraphDoc& sub : d.subgraphs) check_values_structure(sub.plan);
}

std::vector<sync::Stream> sync_streams(const PlanDoc& plan, int skip_stream, int skip_step) {
  std::vector<sync::Stream> streams;
  streams.reserve(plan.streams.size());
  for (size_t i = 0; i < plan.streams.size(); ++i) {
    sync::Stream s;
    s.on_cpu = plan.streams[i].on_cpu();
    for (size_t k = 0; k < plan.streams[i].steps.size(); ++k) {
      if (static_cast<int>(i) == skip_stream && static_cast<int>(k) == skip_step) continue;
      const StepDoc& st = plan.streams[i].steps[k];
      sync::Step step;
      step.node = st.node;
      step.host_wait = st.host_wait;
      if (st.kind == "LaunchKernel") {
        step.kind = sync::StepKind::kLaunch;
      } else if (st.kind == "Barrier" || st.kind == "TriggerDownstream") {
        step.kind = st.kind == "Barrier" ? sync::StepKind::kBarrier : sync::StepKind::kTrigger;
        step.id = st.trigger;
      } else {
        step.kind = st.kind == "WaitOnEP" ? sync::StepKind::kWait : sync::StepKind::kActivate;
        step.id = st.notification;
      }
      s.steps.push_back(step);
    }
    streams.push_back(std::move(s));
  }
  return streams;
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
    const int owners[2] = {valid(v.inplace_of) && valid(up[v.inplace_of]) ? up[v.inplace_of] : -1,
                           valid(v.reused_buffer) && v.reused_buffer != v.index ? v.reused_buffer : -1};
    for (int u : owners)
      if (u >= 0 && !plan.values[u].bytes) {
        out.push_back(text(v.index) + " (" + std::to_string(*v.bytes) + " bytes) is placed in the memory of " +
                      text(u) + ", whose size is unknown, so its bytes live nowhere the plan places; fix the " +
                      "unknown size (see memplan inspect MODEL) and plan again");
        break;
      }
  }
  return out;
}

}  // namespace memplan::plan_doc
