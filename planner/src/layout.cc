#include "memplan/planner/layout.h"

#include <chrono>
#include <climits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "memplan/arena/bound.h"
#include "memplan/chain_roots.h"
#include "memplan/sync_knowledge.h"

namespace memplan::planner {

nlohmann::ordered_json arena_to_json(const Arena& a) {
  nlohmann::ordered_json j = {
      {"name", a.name},
      {"location", partition::device_name(a.location)},
      {"purpose", a.purpose},
      {"bytes", a.bytes},
      {"lower_bound", a.lower_bound},
      {"alignment", a.alignment},
      {"algorithm", a.algorithm},
      {"optimal", a.optimal},
      {"buffers", a.buffers},
      {"distinct_buffer_bytes", a.distinct_buffer_bytes},
      {"same_shape_reuse_bytes", a.distinct_buffer_bytes},  // the old, misleading name; kept for readers of version 1
      {"multi_stream", a.multi_stream}};
  if (!a.note.empty()) j["note"] = a.note;
  return j;
}

namespace {

// A unit of the layout: a value and every value that takes its memory in place (Alias, MayInplace, Share
// chains). Freelist reuse is ORT's bookkeeping and does not bind offsets: the packer may do better.
struct Unit {
  ValueId root;
  std::vector<ValueId> members;
  uint64_t bytes = 0;
  int first = 0, last = 0;  // program counters, inclusive
  NodeId producer = kNoId;
  Device location;
  int workspace = -1;  // a node's workspace (index into the options' workspaces): no members, held for its step
};

// Each value's in-place chain root, computed once (the planner makes no cycles; a value on one is its own root).
std::vector<ValueId> unit_roots(const Plan& plan) {
  std::vector<int32_t> parent(plan.values.size());
  for (size_t v = 0; v < plan.values.size(); ++v) parent[v] = plan.values[v].inplace_of;
  std::vector<ValueId> roots = chain_roots(parent);
  for (size_t v = 0; v < roots.size(); ++v)
    if (roots[v] < 0) roots[v] = static_cast<ValueId>(v);
  return roots;
}

const char* purpose_of(AllocKind k, bool pack_outputs, bool one_arena = false) {
  if (one_arena)
    return k == AllocKind::kAllocate || k == AllocKind::kReuse || k == AllocKind::kAllocateOutput ||
                   k == AllocKind::kAllocateStatically
               ? "activations"
               : nullptr;
  switch (k) {
    case AllocKind::kAllocate:
    case AllocKind::kReuse:
      return "activations";
    case AllocKind::kAllocateOutput:
      return pack_outputs ? "activations" : "outputs";
    case AllocKind::kAllocateStatically:
      return "weights";
    default:
      return nullptr;
  }
}

// ORT's memory pattern: the buffer a value takes from the freelist is the original allocation, so one unit
// holds the root and every value reusing it (in place or from the freelist).
ValueId buffer_root(const Plan& plan, const std::vector<ValueId>& unit_root, ValueId v) {
  for (int guard = 0; guard < 1 << 20; ++guard) {
    ValueId r = unit_root[v];
    ValueId next = plan.values[r].reused_buffer;
    if (next == kNoId || next == r) return r;
    v = next;
  }
  return v;
}

// Units grouped by (location, purpose), with their members. With ort_pattern, units are whole reuse chains
// held until the last read of any member, and a chain nobody reads is never released (ORT gives it no release
// action), so it lives to the end of the run.
// Workspaces join the activation arena of their device, held for their node's step.
std::map<std::pair<Device, std::string>, std::vector<Unit>> group_units(const Graph& g, const Plan& plan,
                                                                        const LayoutOptions& options,
                                                                        bool ort_pattern) {
  const bool pack_outputs = options.pack_outputs || options.one_arena;
  // Units by root value (a vector, not a map: one per value at most), and per root in ORT mode the last step reading
  // any member.
  constexpr int kNotRead = INT_MIN;
  std::vector<Unit> units(g.values.size());
  std::vector<int> last_read(ort_pattern ? g.values.size() : 0, kNotRead);
  const std::vector<ValueId> unit_root = unit_roots(plan);
  for (const Value& v : g.values) {
    ValueId r = ort_pattern ? buffer_root(plan, unit_root, v.index) : unit_root[v.index];
    const char* purpose = purpose_of(plan.values[r].kind, pack_outputs, options.one_arena);
    if (!purpose || !g.values[r].bytes) continue;
    Unit& u = units[r];
    if (u.members.empty()) {
      u.root = r;
      u.first = plan.values[r].first_use;
      u.last = plan.values[r].last_use;
      u.producer = g.values[r].producer;
      u.location = plan.values[r].location;
    }
    u.members.push_back(v.index);
    u.bytes = std::max(u.bytes, v.bytes.value_or(0));
    u.first = std::min(u.first, plan.values[v.index].first_use);
    u.last = std::max(u.last, plan.values[v.index].last_use);
    if (ort_pattern && (!v.consumers.empty() || !v.implicit_consumers.empty() || v.is_graph_output))
      last_read[r] = std::max(last_read[r], plan.values[v.index].last_use);
  }
  // Each group's vector made at its final size (100k units moved once, not at every doubling). Consecutive units
  // mostly share a group: the map is looked up once per run of them.
  std::map<std::pair<Device, std::string>, std::vector<Unit>> groups;
  using Key = std::pair<Device, std::string_view>;
  auto key_of = [&](ValueId r) {
    return Key{plan.values[r].location, purpose_of(plan.values[r].kind, pack_outputs, options.one_arena)};
  };
  auto for_each_unit = [&](const auto& take) {
    std::optional<Key> last_key;
    std::vector<Unit>* group = nullptr;
    for (Unit& u : units) {
      if (u.members.empty()) continue;
      const Key key = key_of(u.root);
      if (key != last_key) group = &groups[{key.first, std::string(key.second)}];
      last_key = key;
      take(u, *group);
    }
  };
  std::map<std::vector<Unit>*, size_t> sizes;
  for_each_unit([&](Unit&, std::vector<Unit>& group) { ++sizes[&group]; });
  for (auto& [group, size] : sizes) group->reserve(size);
  for_each_unit([&](Unit& u, std::vector<Unit>& group) {
    const ValueId r = u.root;
    if (ort_pattern)
      u.last = last_read[r] != kNotRead ? std::max(last_read[r], u.first)
                                        : std::max(u.first, static_cast<int>(plan.execution_order.size()) - 1);
    group.push_back(std::move(u));
  });
  if (!options.workspaces.empty()) {
    std::vector<int> pc(g.nodes.size(), -1);
    for (size_t k = 0; k < plan.execution_order.size(); ++k) pc[plan.execution_order[k]] = static_cast<int>(k);
    for (size_t w = 0; w < options.workspaces.size(); ++w) {
      const Workspace& ws = options.workspaces[w];
      if (!ws.bytes || ws.node == kNoId || pc[ws.node] < 0) continue;
      Unit u;
      u.root = kNoId;
      u.bytes = ws.bytes;
      u.first = u.last = pc[ws.node];
      u.producer = ws.node;
      u.location = ws.location;
      u.workspace = static_cast<int>(w);
      groups[{ws.location, options.workspaces_apart ? "bodies" : "activations"}].push_back(std::move(u));
    }
  }
  return groups;
}

std::vector<sync::Stream> sync_streams(const Plan& plan) {
  std::vector<sync::Stream> out;
  for (const LogicStream& ls : plan.streams) {
    sync::Stream s;
    s.on_cpu = ls.device.type == partition::DeviceType::kCpu;
    for (const Step& st : ls.steps) {
      sync::Step step;
      step.node = st.node;
      step.host_wait = st.host_wait;
      switch (st.kind) {
        case StepKind::kLaunchKernel:
          step.kind = sync::StepKind::kLaunch;
          break;
        case StepKind::kBarrier:
          step.kind = sync::StepKind::kBarrier;
          step.id = st.trigger;
          break;
        case StepKind::kTriggerDownstream:
          step.kind = sync::StepKind::kTrigger;
          step.id = st.trigger;
          break;
        case StepKind::kWaitOnEP:
          step.kind = sync::StepKind::kWait;
          step.id = st.notification;
          break;
        case StepKind::kActivateNotification:
          step.kind = sync::StepKind::kActivate;
          step.id = st.notification;
          break;
      }
      s.steps.push_back(step);
    }
    out.push_back(std::move(s));
  }
  return out;
}

// The plan's synchronisation as the validator simulates it; nullptr on one stream, where intervals decide.
std::unique_ptr<sync::Knowledge> synchronisation(const Graph& g, const Plan& plan) {
  if (plan.streams.size() <= 1) return nullptr;
  return std::make_unique<sync::Knowledge>(sync::simulate(sync_streams(plan), g.nodes.size()));
}

// Per unit and stream, the positions of the last host-side and the last device-side access to the unit's memory
// (-1: none), with the synchronisation model the validator and replay use (memplan/sync_knowledge.h). Flat, a row of
// `streams` per unit (two small vectors per unit were 200,000 allocations on a 100k-unit arena).
struct LastAccess {
  size_t streams = 0;
  std::vector<int> host, device;
  const int* host_of(size_t unit) const { return host.data() + unit * streams; }
  const int* device_of(size_t unit) const { return device.data() + unit * streams; }
};

LastAccess last_accesses(const Graph& g, const Plan& plan, const sync::Knowledge& known,
                         const std::vector<Unit>& units) {
  LastAccess last;
  last.streams = known.stream_on_cpu.size();
  last.host.assign(units.size() * last.streams, -1);
  last.device.assign(units.size() * last.streams, -1);
  for (size_t i = 0; i < units.size(); ++i) {
    const Unit& u = units[i];
    int* host_row = last.host.data() + i * last.streams;
    int* device_row = last.device.data() + i * last.streams;
    auto touch_memory = [&](NodeId n, bool cpu_memory) {
      const sync::Launch& l = known.launches[n];
      if (l.stream < 0) return;
      const bool host = sync::host_access(g.nodes[n].op_type, known.stream_on_cpu[l.stream], cpu_memory);
      int& slot = (host ? host_row : device_row)[l.stream];
      slot = std::max(slot, l.position);
    };
    if (u.workspace >= 0) touch_memory(u.producer, u.location.type == partition::DeviceType::kCpu);
    for (ValueId m : u.members) {
      const Value& v = g.values[m];
      const bool cpu_memory = plan.values[m].location.type == partition::DeviceType::kCpu;
      auto touch = [&](NodeId n) { touch_memory(n, cpu_memory); };
      if (v.producer != kNoId) touch(v.producer);
      for (NodeId c : v.consumers) touch(c);
      for (NodeId c : v.implicit_consumers) touch(c);
    }
  }
  return last;
}

// `known`: the plan's synchronisation, simulated once per layout; nullptr on one stream.
arena::Problem build_problem(const Graph& g, const Plan& plan, const sync::Knowledge* known,
                             const std::vector<Unit>& units, uint64_t alignment) {
  arena::Problem p;
  p.buffers.reserve(units.size());
  for (const Unit& u : units) {
    arena::Buffer b;
    b.id = u.workspace >= 0 ? "workspace of node " + std::to_string(u.producer) : std::to_string(u.root);
    b.lower = std::max(0, u.first);
    b.upper = std::max(u.last, u.first) + 1;
    b.size = u.bytes;
    b.alignment = alignment;
    p.buffers.push_back(std::move(b));
  }
  if (!known) return p;
  // Disjoint intervals in the global order are not enough across streams: B may take A's memory only if
  // every access to A is over before B's first writer starts, as the streams' synchronisation orders them
  // (host-side accesses such as Shape's on a device stream are not ordered by that stream's device order).
  const LastAccess last = last_accesses(g, plan, *known, units);
  // Whether b's writer starts only after every access to a is over, as the streams' synchronisation orders them.
  auto after = [&](size_t a, NodeId writer, bool writer_host) {
    const int* issued = known->issued(writer);
    const int* completed = known->completed_before(writer, writer_host);
    const int *host = last.host_of(a), *device = last.device_of(a);
    for (size_t t = 0; t < last.streams; ++t)
      if (!(issued[t] > host[t] && completed[t] > device[t])) return false;
    return true;
  };
  // The units b that some a lies entirely before, by their writer's stream and whether it writes from the host.
  // Along one such list what a writer knows only grows, so the writers ordered after a given a are a suffix of
  // it, found by bisection: only the pairs that conflict are visited, not all pairs.
  struct Written {
    int64_t lower;
    size_t unit;
    NodeId writer;
  };
  const size_t streams = known->stream_on_cpu.size();
  std::vector<std::vector<Written>> lists(2 * streams);
  std::vector<size_t> unwritten;  // no writer on any stream: nothing orders them after anything
  for (size_t b = 0; b < units.size(); ++b) {
    const NodeId writer = units[b].producer;
    if (writer == kNoId || known->launches[writer].stream < 0) {
      unwritten.push_back(b);
      continue;
    }
    const sync::Launch& w = known->launches[writer];
    const bool host = sync::host_access(g.nodes[writer].op_type, known->stream_on_cpu[w.stream],
                                        units[b].location.type == partition::DeviceType::kCpu);
    lists[2 * static_cast<size_t>(w.stream) + (host ? 1 : 0)].push_back({p.buffers[b].lower, b, writer});
  }
  for (auto& list : lists)
    std::stable_sort(list.begin(), list.end(), [](const Written& x, const Written& y) { return x.lower < y.lower; });
  // The unwritten units that start at or after a's end are a suffix of them by start (an arena of weights holds
  // tens of thousands, none after another: a scan per unit was quadratic there).
  std::stable_sort(unwritten.begin(), unwritten.end(),
                   [&](size_t x, size_t y) { return p.buffers[x].lower < p.buffers[y].lower; });
  // Each unit's conflicts are runs of these lists: found once, kept as (unit, list, run), then walked twice, to
  // count each unit's conflicts and to fill its list at its final size. (The pairs themselves, tens of millions on a
  // wide graph on 4 streams at 1M nodes, were 400 MB of fresh memory.) List lists.size() is `unwritten`.
  struct Run {
    uint32_t unit, list, from, until;
  };
  std::vector<Run> runs;
  for (size_t a = 0; a < units.size(); ++a) {
    const int64_t end = p.buffers[a].upper;
    for (size_t l = 0; l < lists.size(); ++l) {
      const auto& list = lists[l];
      auto from =
          std::lower_bound(list.begin(), list.end(), end, [](const Written& x, int64_t t) { return x.lower < t; });
      // The writers not ordered after a are a prefix of [from, end), usually short: gallop to its end, then bisect
      // the last step (a bisection of the whole suffix evaluated `after` ~17 times per unit and list).
      auto not_after = [&](const Written& x) { return !after(a, x.writer, l % 2); };
      auto lo = from, hi = from;
      for (size_t step = 1; hi != list.end() && not_after(*hi); step *= 2) {
        lo = hi + 1;
        hi = static_cast<size_t>(list.end() - lo) > step ? lo + static_cast<std::ptrdiff_t>(step) : list.end();
      }
      auto until = std::partition_point(lo, hi, not_after);
      if (from != until)
        runs.push_back({static_cast<uint32_t>(a), static_cast<uint32_t>(l), static_cast<uint32_t>(from - list.begin()),
                        static_cast<uint32_t>(until - list.begin())});
    }
    auto it = std::lower_bound(unwritten.begin(), unwritten.end(), end,
                               [&](size_t b, int64_t t) { return p.buffers[b].lower < t; });
    if (it != unwritten.end())
      runs.push_back({static_cast<uint32_t>(a), static_cast<uint32_t>(lists.size()),
                      static_cast<uint32_t>(it - unwritten.begin()), static_cast<uint32_t>(unwritten.size())});
  }
  // Calls f(a, b) for every conflict, a before b.
  auto each_conflict = [&](auto&& f) {
    for (const Run& r : runs)
      for (uint32_t k = r.from; k < r.until; ++k) {
        const size_t b = r.list < lists.size() ? lists[r.list][k].unit : unwritten[k];
        if (b != r.unit) f(static_cast<size_t>(r.unit), b);
      }
  };
  std::vector<size_t> count(units.size(), 0);
  each_conflict([&](size_t a, size_t b) { ++count[a], ++count[b]; });
  p.extra_conflicts.assign(units.size(), {});
  for (size_t u = 0; u < units.size(); ++u) p.extra_conflicts[u].reserve(count[u]);
  each_conflict([&](size_t a, size_t b) {
    p.extra_conflicts[a].push_back(static_cast<int>(b));
    p.extra_conflicts[b].push_back(static_cast<int>(a));
  });
  for (auto& c : p.extra_conflicts) std::sort(c.begin(), c.end());
  return p;
}

// The distinct root buffers of `units` side by side (workspaces included): what the plan's reuse alone, without
// offset sharing, needs.
uint64_t distinct_buffer_bytes(const Graph& g, const Plan& plan, const std::vector<Unit>& units, uint64_t alignment) {
  uint64_t bytes = 0;
  std::vector<ValueId> roots;
  for (const Unit& u : units) {
    for (ValueId m : u.members) roots.push_back(plan.values[m].reused_buffer);
    if (u.workspace >= 0) bytes += arena::aligned_size(arena::Buffer{"", 0, 0, u.bytes, alignment});
  }
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  for (ValueId r : roots)
    if (g.values[r].bytes) bytes += arena::aligned_size(arena::Buffer{"", 0, 0, *g.values[r].bytes, alignment});
  return bytes;
}

}  // namespace

Layout compute_layout(const Graph& g, const Plan& plan, const partition::Partition& partition,
                      const LayoutOptions& options) {
  Layout layout;
  layout.pack_outputs = options.pack_outputs;
  layout.ort_memory_pattern = options.ort_memory_pattern;
  layout.one_arena = options.one_arena;
  layout.workspaces_apart = options.workspaces_apart;
  layout.workspaces = options.workspaces;
  layout.value_arena.assign(g.values.size(), -1);
  layout.value_offset.assign(g.values.size(), 0);
  const auto known = synchronisation(g, plan);
  double search_spent = 0;  // the exact searches' work so far, in seconds of budget
  // Under ORT's memory pattern the units are longer-lived than the values need; the lower bound stays the one
  // of the values themselves (what validate recomputes), so the gap shows what ORT's pattern costs.
  std::map<std::pair<Device, std::string>, std::vector<Unit>> plain;
  if (options.ort_memory_pattern && options.bounds) plain = group_units(g, plan, options, false);
  for (const auto& [key, units] : group_units(g, plan, options, options.ort_memory_pattern)) {
    Arena a;
    a.location = key.first;
    a.purpose = key.second;
    a.name = partition::device_name(key.first) + (a.purpose == "activations" ? "" : "/" + a.purpose);
    a.alignment = options.alignment;
    a.buffers = units.size();
    a.multi_stream = partition.streams.size() > 1;
    arena::Problem p = build_problem(g, plan, known.get(), units, options.alignment);
    if (options.bounds) a.distinct_buffer_bytes = distinct_buffer_bytes(g, plan, units, options.alignment);
    // --time-budget is for the whole layout: each arena's exact search gets the work the ones before left (work,
    // not wall time, so that the layout is the same on any machine: work_budget.h).
    arena::SolveOptions solve_options = options.solve;
    solve_options.lower_bound = options.bounds;
    solve_options.time_budget_s = std::max(0.0, options.solve.time_budget_s - search_spent);
    arena::Solution s = arena::solve(p, solve_options);
    search_spent += s.work_seconds;
    a.bytes = s.peak;
    a.lower_bound = s.lower_bound;
    if (options.ort_memory_pattern && options.bounds) {
      // The bound reads extra conflicts only on small arenas: on large ones, building them is wasted work.
      const auto& values = plain[key];
      const bool cliques = values.size() <= arena::kCliqueBoundMaxBuffers;
      a.lower_bound =
          arena::lower_bound(build_problem(g, plan, cliques ? known.get() : nullptr, values, options.alignment));
      a.optimal = s.peak == a.lower_bound;
    }
    a.algorithm = s.algorithm;
    if (!options.ort_memory_pattern) a.optimal = s.optimal;
    a.seconds = s.seconds;
    a.note = s.note;
    int index = static_cast<int>(layout.arenas.size());
    for (size_t i = 0; i < units.size(); ++i) {
      for (ValueId m : units[i].members) {
        layout.value_arena[m] = index;
        layout.value_offset[m] = s.offsets[i];
      }
      if (units[i].workspace >= 0) {
        layout.workspaces[units[i].workspace].arena = index;
        layout.workspaces[units[i].workspace].offset = s.offsets[i];
      }
    }
    layout.arenas.push_back(a);
  }
  layout.search_work_s = search_spent;
  return layout;
}

arena::Problem arena_problem(const Graph& g, const Plan& plan, const Layout& layout, int arena) {
  const Arena& a = layout.arenas[arena];
  LayoutOptions options;
  options.pack_outputs = layout.pack_outputs;
  options.one_arena = layout.one_arena;
  options.workspaces = layout.workspaces;
  options.workspaces_apart = layout.workspaces_apart;
  auto groups = group_units(g, plan, options, layout.ort_memory_pattern);
  return build_problem(g, plan, synchronisation(g, plan).get(), groups[{a.location, a.purpose}], a.alignment);
}

}  // namespace memplan::planner
