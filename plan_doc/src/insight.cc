#include "memplan/plan_doc/insight.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace memplan::plan_doc {
namespace {

uint64_t align(uint64_t v, uint64_t a) {
  return a ? (v + a - 1) / a * a : v;
}
}  // namespace

std::string layer_prefix(const std::string& name) {
  if (name.empty() || name[0] != '/') return "(top level)";
  size_t second = name.find('/', 1);
  if (second == std::string::npos) return "(top level)";
  size_t third = name.find('/', second + 1);
  return third == std::string::npos ? name.substr(0, second) : name.substr(0, third);
}

PlanInsight analyse(const PlanDoc& p) {
  PlanInsight in;
  std::map<int, ArenaInsight> by_arena;
  for (size_t a = 0; a < p.arenas.size(); ++a) {
    ArenaInsight& ai = by_arena[static_cast<int>(a)];
    ai.arena = static_cast<int>(a);
    ai.bytes = p.arenas[a].bytes;
    ai.lower_bound = p.arenas[a].lower_bound;
  }
  std::map<int, std::set<int>> roots;
  for (const ValueDoc& v : p.values) {
    if (v.graph_input && v.bytes) in.input_bytes += *v.bytes;
    if (v.arena < 0 || !v.bytes) continue;
    ArenaInsight& ai = by_arena[v.arena];
    uint64_t al = p.arenas[v.arena].alignment;
    ai.no_reuse_bytes += align(*v.bytes, al);
    if (roots[v.arena].insert(v.reused_buffer).second && p.values[v.reused_buffer].bytes)
      ai.distinct_buffer_bytes += align(*p.values[v.reused_buffer].bytes, al);
  }
  // Each value's in-place chain root, once: a chain's members share memory.
  std::vector<int32_t> root = inplace_roots(p);
  for (size_t v = 0; v < root.size(); ++v)
    if (root[v] < 0) root[v] = static_cast<int32_t>(v);  // a cycle (a broken plan): each value on its own
  // The peak: program counter where the bytes of distinct live regions add up most.
  const int steps = static_cast<int>(p.execution_order.size());
  for (auto& [a, ai] : by_arena) {
    std::vector<int64_t> delta(static_cast<size_t>(steps) + 2, 0);
    // One region per in-place chain (its members share memory and follow one another in time).
    std::map<int, std::pair<std::pair<int, int>, uint64_t>> units;  // chain root -> (span, bytes)
    for (const ValueDoc& v : p.values) {
      if (v.arena != a || !v.bytes) continue;
      auto [it, fresh] = units.emplace(root[v.index], std::pair{std::pair{v.first_use, v.last_use}, *v.bytes});
      if (!fresh) {
        it->second.first = {std::min(it->second.first.first, v.first_use),
                            std::max(it->second.first.second, v.last_use)};
        it->second.second = std::max(it->second.second, *v.bytes);
      }
    }
    for (const auto& [root, unit] : units) {
      int f = std::max(0, unit.first.first), l = std::clamp(unit.first.second, f, std::max(steps - 1, 0));
      delta[f] += static_cast<int64_t>(unit.second);
      delta[l + 1] -= static_cast<int64_t>(unit.second);
    }
    // Workspaces: held for their owner's step.
    std::vector<int> step_of(p.nodes.size(), -1);
    for (int t = 0; t < steps; ++t) step_of[p.execution_order[t]] = t;
    std::vector<std::pair<int, uint64_t>> held;  // (node, bytes) in this arena
    for (const NodeDoc& n : p.nodes)
      for (const WorkspaceDoc& w : n.workspace)
        if (w.arena == a && w.bytes && step_of[n.index] >= 0) {
          held.push_back({n.index, w.bytes});
          delta[step_of[n.index]] += static_cast<int64_t>(w.bytes);
          delta[step_of[n.index] + 1] -= static_cast<int64_t>(w.bytes);
        }
    int64_t live = 0;
    for (int t = 0; t < std::max(steps, 1); ++t) {
      live += delta[t];
      if (static_cast<uint64_t>(live) > ai.peak_live) ai.peak_live = static_cast<uint64_t>(live), ai.peak_step = t;
    }
    for (const ValueDoc& v : p.values)
      if (v.arena == a && v.bytes && v.first_use <= ai.peak_step && v.last_use >= ai.peak_step)
        ai.live_at_peak.push_back(v.index);
    std::stable_sort(ai.live_at_peak.begin(), ai.live_at_peak.end(),
                     [&](int x, int y) { return *p.values[x].bytes > *p.values[y].bytes; });
    for (const auto& [node, bytes] : held)
      if (step_of[node] == ai.peak_step) ai.workspaces_at_peak.push_back({node, bytes});
    std::stable_sort(ai.workspaces_at_peak.begin(), ai.workspaces_at_peak.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
    std::map<std::string, uint64_t> by_op, by_prefix;
    std::set<int> counted;  // members of one in-place chain share memory: count the chain once
    for (int v : ai.live_at_peak) {
      if (p.arenas[a].purpose == "weights") break;  // initializers: alive throughout, no peak to explain
      if (!counted.insert(root[v]).second) continue;
      const ValueDoc& d = p.values[v];
      by_op[d.producer >= 0 ? p.nodes[d.producer].op_type : "(graph input)"] += *d.bytes;
      by_prefix[layer_prefix(d.name)] += *d.bytes;
    }
    for (const auto& [node, bytes] : ai.workspaces_at_peak) {
      by_op[p.nodes[node].op_type + " (bodies)"] += bytes;
      by_prefix[layer_prefix(p.nodes[node].name)] += bytes;
    }
    auto sorted = [](const std::map<std::string, uint64_t>& m) {
      std::vector<std::pair<std::string, uint64_t>> out(m.begin(), m.end());
      std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      return out;
    };
    ai.peak_by_op = sorted(by_op);
    ai.peak_by_prefix = sorted(by_prefix);
    in.arenas.push_back(ai);
  }
  // Largest arena first: that is where a reader's attention should go.
  std::stable_sort(in.arenas.begin(), in.arenas.end(),
                   [](const ArenaInsight& a, const ArenaInsight& b) { return a.bytes > b.bytes; });
  for (const ValueDoc& v : p.values)
    if (v.bytes && !v.initializer) in.largest.push_back(v.index);
  std::stable_sort(in.largest.begin(), in.largest.end(),
                   [&](int x, int y) { return *p.values[x].bytes > *p.values[y].bytes; });
  return in;
}

}  // namespace memplan::plan_doc
