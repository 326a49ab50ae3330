#include "memplan/planner/layout.h"

#include <map>
#include <nlohmann/json.hpp>

namespace memplan::planner {

nlohmann::ordered_json arena_to_json(const Arena& a) {
  return {{"name", a.name},
          {"location", partition::device_name(a.location)},
          {"purpose", a.purpose},
          {"bytes", a.bytes},
          {"lower_bound", a.lower_bound},
          {"alignment", a.alignment},
          {"algorithm", a.algorithm},
          {"optimal", a.optimal},
          {"buffers", a.buffers},
          {"same_shape_reuse_bytes", a.same_shape_reuse_bytes},
          {"multi_stream", a.multi_stream}};
}

namespace {

struct Root {
  ValueId value;
  int first = 0, last = 0;         // program counters, inclusive
  std::vector<int> last_use_per_stream;  // position in stream of the last node using it (-1: none)
  NodeId producer = kNoId;
};

const char* purpose_of(AllocKind k, bool pack_outputs) {
  switch (k) {
    case AllocKind::kAllocate: return "activations";
    case AllocKind::kAllocateOutput: return pack_outputs ? "activations" : "outputs";
    case AllocKind::kAllocateStatically: return "weights";
    default: return nullptr;
  }
}

}  // namespace

static std::map<std::pair<Device, std::string>, std::vector<ValueId>> group_roots(const Graph& g, const Plan& plan,
                                                                                  bool pack_outputs) {
  std::map<std::pair<Device, std::string>, std::vector<ValueId>> groups;
  for (const Value& v : g.values) {
    const ValuePlan& vp = plan.values[v.index];
    if (vp.reused_buffer != v.index) continue;  // not a root
    const char* purpose = purpose_of(vp.kind, pack_outputs);
    if (!purpose || !v.bytes) continue;
    groups[{vp.location, purpose}].push_back(v.index);
  }
  return groups;
}

static Problem build_problem(const Graph& g, const Plan& plan, const partition::Partition& partition,
                             const std::vector<ValueId>& roots, uint64_t alignment, bool& multi_stream) {
  const size_t s = partition.streams.size();
  std::vector<int> position(g.nodes.size(), 0);
  for (const auto& stream : partition.streams)
    for (size_t p = 0; p < stream.size(); ++p) position[stream[p]] = static_cast<int>(p);
  std::map<ValueId, size_t> slot;
  std::vector<Root> info(roots.size());
  for (size_t i = 0; i < roots.size(); ++i) {
    slot[roots[i]] = i;
    info[i].value = roots[i];
    info[i].first = plan.values[roots[i]].first_use;
    info[i].last = plan.values[roots[i]].last_use;
    info[i].last_use_per_stream.assign(s, -1);
    info[i].producer = g.values[roots[i]].producer;
  }
  // A root lives from its first definition to the last use of any value sharing it.
  for (const Value& v : g.values) {
    auto it = slot.find(plan.values[v.index].reused_buffer);
    if (it == slot.end()) continue;
    Root& r = info[it->second];
    r.first = std::min(r.first, plan.values[v.index].first_use);
    r.last = std::max(r.last, plan.values[v.index].last_use);
    auto touch = [&](NodeId n) {
      int st = partition.node_stream[n];
      r.last_use_per_stream[st] = std::max(r.last_use_per_stream[st], position[n]);
    };
    if (v.producer != kNoId) touch(v.producer);
    for (NodeId c : v.consumers) touch(c);
    for (NodeId c : v.implicit_consumers) touch(c);
  }
  Problem p;
  for (size_t i = 0; i < roots.size(); ++i) {
    Buffer b;
    b.id = roots[i];
    b.lower = std::max(0, info[i].first);
    b.upper = std::max(info[i].last, info[i].first) + 1;
    b.size = *g.values[roots[i]].bytes;
    b.alignment = alignment;
    p.buffers.push_back(b);
  }
  multi_stream = s > 1;
  if (!multi_stream) return p;
  // Disjoint intervals in the global order are not enough across streams: B may take A's memory only
  // if every node that used A happens before B's producer (vector clocks over streams).
  HappensBefore hb = happens_before(g, partition);
  p.extra_conflicts.assign(roots.size(), {});
  for (size_t a = 0; a < roots.size(); ++a)
    for (size_t b = 0; b < roots.size(); ++b) {
      if (a == b || p.buffers[a].upper > p.buffers[b].lower) continue;  // only a strictly before b
      NodeId first_writer = info[b].producer;
      bool ordered = first_writer != kNoId;
      for (size_t t = 0; ordered && t < s; ++t)
        if (info[a].last_use_per_stream[t] >= 0 && hb.clock[first_writer][t] <= info[a].last_use_per_stream[t]) ordered = false;
      if (!ordered) {
        p.extra_conflicts[a].push_back(static_cast<int>(b));
        p.extra_conflicts[b].push_back(static_cast<int>(a));
      }
    }
  for (auto& c : p.extra_conflicts) std::sort(c.begin(), c.end());
  return p;
}

Layout compute_layout(const Graph& g, const Plan& plan, const partition::Partition& partition, const LayoutOptions& options) {
  Layout layout;
  layout.value_arena.assign(g.values.size(), -1);
  layout.value_offset.assign(g.values.size(), 0);
  for (const auto& [key, roots] : group_roots(g, plan, options.pack_outputs)) {
    Arena a;
    a.location = key.first;
    a.purpose = key.second;
    a.name = partition::device_name(key.first) + (a.purpose == "activations" ? "" : "/" + a.purpose);
    a.alignment = options.alignment;
    a.buffers = roots.size();
    bool multi = false;
    Problem p = build_problem(g, plan, partition, roots, options.alignment, multi);
    a.multi_stream = multi;
    for (const Buffer& b : p.buffers) a.same_shape_reuse_bytes += aligned_size(b);
    Solution s = solve(p, options.solve);
    a.bytes = s.peak;
    a.lower_bound = s.lower_bound;
    a.algorithm = s.algorithm;
    a.optimal = s.optimal;
    a.seconds = s.seconds;
    int index = static_cast<int>(layout.arenas.size());
    for (size_t i = 0; i < roots.size(); ++i) {
      layout.value_arena[roots[i]] = index;
      layout.value_offset[roots[i]] = s.offsets[i];
    }
    layout.arenas.push_back(a);
  }
  // Reuse and Share values sit in their root's region.
  for (const Value& v : g.values) {
    ValueId root = plan.values[v.index].reused_buffer;
    if (root != v.index && layout.value_arena[root] >= 0) {
      layout.value_arena[v.index] = layout.value_arena[root];
      layout.value_offset[v.index] = layout.value_offset[root];
    }
  }
  return layout;
}

Problem arena_problem(const Graph& g, const Plan& plan, const partition::Partition& partition, const Layout& layout,
                      int arena) {
  const Arena& a = layout.arenas[arena];
  std::vector<ValueId> roots;
  for (const Value& v : g.values)
    if (plan.values[v.index].reused_buffer == v.index && layout.value_arena[v.index] == arena) roots.push_back(v.index);
  bool multi = false;
  return build_problem(g, plan, partition, roots, a.alignment, multi);
}

}  // namespace memplan::planner
