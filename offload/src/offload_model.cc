#include "memplan/offload/offload_model.h"

#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string_view>

#include "memplan/device_totals.h"
#include "memplan/error.h"
#include "memplan/graph_edit.h"

namespace memplan::offload {

namespace {

// A value like `like` (type and shape), produced by nothing yet and read by nothing.
Value fresh_value(const Value& like, std::string name) {
  Value v = like;
  v.name = std::move(name);
  v.is_graph_input = v.is_graph_output = v.is_initializer = v.is_outer_scope = false;
  v.producer = kNoId;
  v.consumers.clear();
  v.implicit_consumers.clear();
  return v;
}

std::string mb(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

// Why no choice fits, in the model's words: the step, and the largest buffers on the device there.
std::string explain(const planner::PlannedModel& planned, const PlanProblem& pp, const Result& r) {
  const Graph& g = planned.graph();
  if (r.peak_at < 0 || r.peak_at >= static_cast<int>(planned.plan.execution_order.size())) return r.why;
  const Node& node = g.nodes[planned.plan.execution_order[r.peak_at]];
  std::vector<std::pair<uint64_t, std::string>> live;
  for (size_t i = 0; i < pp.problem.buffers.size(); ++i) {
    const Buffer& b = pp.problem.buffers[i];
    const Choice& c = r.choices[i];
    bool on = false;
    if (!c.offloaded) on = b.weight || (!b.uses.empty() && b.uses.front() <= r.peak_at && r.peak_at <= b.uses.back());
    for (const auto& s : c.residencies) on = on || (s.from <= r.peak_at && r.peak_at <= s.until);
    if (!on) continue;
    const bool used_here = std::binary_search(b.uses.begin(), b.uses.end(), r.peak_at);
    const std::string name =
        pp.buffer_value[i] == kNoId ? "a body's workspace" : "'" + g.values[pp.buffer_value[i]].name + "'";
    live.push_back({b.bytes, name + (used_here ? " (read or written there)" : !b.offloadable ? " (kept)" : "")});
  }
  std::sort(live.rbegin(), live.rend());
  std::string top;
  for (size_t k = 0; k < live.size() && k < 4; ++k) top += (k ? ", " : "") + live[k].second + " " + mb(live[k].first);
  return "step " + std::to_string(r.peak_at) + " (" + describe_node(node) + ") needs " + mb(r.peak) +
         " on the device, more than the " + mb(pp.problem.budget) +
         " left for what offload can place, and nothing live there can move: " + top;
}

}  // namespace

partition::PartitionedModel with_copies(const partition::PartitionedModel& parts, const PlanProblem& pp,
                                        const Result& choice, const partition::Device& device,
                                        planner::OffloadRecord& record) {
  // Room for the copies and their values made before the model is copied into it (copy-assigning a vector keeps
  // room it already has; growing after the copy moved 144,000 nodes and values once more).
  size_t copies = 0;
  for (size_t i = 0; i < pp.problem.buffers.size(); ++i) {
    const Choice& c = choice.choices[i];
    if (!c.offloaded || c.residencies.empty()) continue;
    copies += pp.problem.buffers[i].weight ? 0 : 1;
    for (const Residency& s : c.residencies) copies += s.copy_in ? 1 : 0;
  }
  partition::PartitionedModel out;
  Graph& g = out.placed.graph;
  auto& placement = out.placed.placement;
  g.nodes.reserve(parts.placed.graph.nodes.size() + copies);
  g.values.reserve(parts.placed.graph.values.size() + copies);
  placement.node_device.reserve(parts.placed.graph.nodes.size() + copies);
  placement.reasons.reserve(parts.placed.graph.nodes.size() + copies);
  out = parts;
  g.value_by_name.reserve(g.values.size() + copies);
  const std::vector<NodeId>& order = parts.order;
  const int steps = static_cast<int>(order.size());
  std::vector<int> pc(g.nodes.size(), -1);
  for (int t = 0; t < steps; ++t) pc[order[t]] = t;

  // Node and value names in use: the values' from the graph's table, views of the nodes' names in `parts` (not
  // copied), and the names added here.
  const Graph& before = parts.placed.graph;
  absl::flat_hash_set<std::string_view> names_before;
  const bool values_listed = before.value_by_name.size() == before.values.size();  // (one entry per value)
  names_before.reserve(before.nodes.size() + (values_listed ? 0 : before.values.size()));
  for (const Node& n : before.nodes) names_before.insert(n.name);
  if (!values_listed)
    for (const Value& v : before.values) names_before.insert(v.name);
  absl::flat_hash_set<std::string> names_added;
  auto taken = [&](const std::string& name) {
    return names_before.count(name) || before.value_by_name.count(name) || names_added.count(name);
  };
  auto unique = [&](const std::string& base) {
    std::string name = base;
    for (int k = 1; taken(name); ++k) name = base + "_" + std::to_string(k);
    names_added.insert(name);
    return name;
  };
  auto add_copy = [&](const char* op, ValueId from, ValueId to, const std::string& name) {
    Node n;
    n.index = static_cast<NodeId>(g.nodes.size());
    n.name = unique(name);
    n.op_type = op;
    n.inputs = {from};
    n.outputs = {to};
    g.nodes.push_back(std::move(n));
    placement.node_device.push_back(device);
    placement.reasons.push_back("");
    return static_cast<NodeId>(g.nodes.size() - 1);
  };

  std::vector<std::vector<NodeId>> copy_ins(steps), copy_outs(steps);  // issued before / after each step
  std::vector<std::pair<NodeId, NodeId>> edges = parts.partition.order_edges;
  struct Names {
    std::string home, source;
    std::vector<std::string> staging;
    std::vector<NodeId> copies;
    bool weight = false;
  };
  std::vector<Names> moved;
  for (size_t i = 0; i < pp.problem.buffers.size(); ++i) {
    const Choice& c = choice.choices[i];
    if (!c.offloaded || c.residencies.empty()) continue;  // (a weight nobody reads: nothing to copy)
    const Buffer& b = pp.problem.buffers[i];
    const ValueId root = pp.buffer_value[i];
    const std::string root_name = g.values[root].name;
    Names m;
    m.weight = b.weight;
    ValueId home = root;
    if (!b.weight) {
      home = add_value(g, fresh_value(g.values[root], unique(root_name + "_host")));
      const NodeId out_node = add_copy("MemcpyToHost", root, home, "OffloadOut_" + root_name);
      copy_outs[b.uses.front()].push_back(out_node);
      // The step after the hold reuses memory only once the copy-out has read it.
      if (c.residencies.front().until + 1 < steps) edges.push_back({out_node, order[c.residencies.front().until + 1]});
      m.source = root_name;
      m.copies.push_back(out_node);
    }
    m.home = g.values[home].name;
    // Who reads what, as planned (before the rewiring below): the value, or for a weight also its views.
    std::vector<std::pair<NodeId, ValueId>> readers;
    std::set<ValueId> views(pp.buffer_views[i].begin(), pp.buffer_views[i].end());
    for (ValueId m : views) {
      for (NodeId c : g.values[m].consumers) readers.push_back({c, m});
    }
    for (NodeId c : g.values[root].consumers) readers.push_back({c, root});
    for (size_t r = 0; r < c.residencies.size(); ++r) {
      const Residency& s = c.residencies[r];
      if (!s.copy_in) continue;
      const std::string staged_name = unique(root_name + "_staged_" + std::to_string(r));
      const ValueId staged = add_value(g, fresh_value(g.values[root], staged_name));
      const NodeId in_node = add_copy("MemcpyFromHost", home, staged, "OffloadIn_" + root_name);
      copy_ins[s.from].push_back(in_node);
      // Not before the step ahead of it: its staging region may hold what that step still reads.
      if (s.from > 0) edges.push_back({order[s.from - 1], in_node});
      // A reader in this residency reads the staging copy instead: of the value itself, or of a view of it (a node
      // making a view now views the copy; any other reader of a view reads the copy directly, the same bytes).
      for (auto [reader, read] : readers)
        if (pc[reader] >= s.first_use && pc[reader] <= s.last_use) {
          auto& in = g.nodes[reader].inputs;
          std::replace(in.begin(), in.end(), read, staged);
        }
      m.staging.push_back(staged_name);
      m.copies.push_back(in_node);
    }
    moved.push_back(std::move(m));
  }
  renumber_values(g);

  // The order: copy-ins just before the step they are issued at, copy-outs just after their producer.
  out.order.clear();
  for (int t = 0; t < steps; ++t) {
    out.order.insert(out.order.end(), copy_ins[t].begin(), copy_ins[t].end());
    out.order.push_back(order[t]);
    out.order.insert(out.order.end(), copy_outs[t].begin(), copy_outs[t].end());
  }
  // Streams: the compute streams as they were, then one copy stream per direction that has copies.
  partition::Partition& p = out.partition;
  p.node_stream.resize(g.nodes.size(), -1);
  const int first_new = static_cast<int>(p.stream_device.size());
  record.copy_in_stream = record.copy_out_stream = -1;
  int next = first_new;
  bool any_in = false, any_out = false;
  for (int t = 0; t < steps; ++t) any_in = any_in || !copy_ins[t].empty(), any_out = any_out || !copy_outs[t].empty();
  if (any_in) record.copy_in_stream = next++, p.stream_device.push_back(device);
  if (any_out) record.copy_out_stream = next++, p.stream_device.push_back(device);
  for (int t = 0; t < steps; ++t) {
    for (NodeId n : copy_ins[t]) p.node_stream[n] = record.copy_in_stream;
    for (NodeId n : copy_outs[t]) p.node_stream[n] = record.copy_out_stream;
  }
  p.streams.assign(p.stream_device.size(), {});
  for (NodeId n : out.order) p.streams[p.node_stream[n]].push_back(n);
  p.order_edges = std::move(edges);

  record.device = device;
  record.moved.clear();
  auto id = [&](const std::string& name) { return g.value_by_name.at(name); };
  for (const Names& m : moved) {
    planner::OffloadRecord::Moved r;
    r.weight = m.weight;
    r.home = id(m.home);
    r.source = m.source.empty() ? kNoId : id(m.source);
    for (const auto& s : m.staging) r.staging.push_back(id(s));
    r.copies = m.copies;
    record.moved.push_back(std::move(r));
  }
  return out;
}

OffloadOutcome offload_model(Model model, const planner::PlanRequest& request, const OffloadOptions& options) {
  OffloadOutcome out;
  // The plan before offload is kept only when it fits as it is: ORT's estimate (a second plan and layout, which waits
  // for ORT's view of the shapes) is made for it then, and otherwise only for the plan that replaces it.
  planner::PlanRequest first_request = request;
  first_request.ort_rules_estimate = false;
  out.planned = planner::plan_model(std::move(model), first_request);
  // --time-budget is the command's: each round's layout searches with what the layouts before it left.
  planner::PlanRequest round_request = request;
  auto spend = [&](const planner::PlannedModel& planned) {
    double& left = round_request.layout.solve.time_budget_s;
    left = std::max(0.0, left - planned.layout.search_work_s);
  };
  spend(out.planned);
  const std::string device = partition::device_name(options.device);
  const DeviceTotal* total = find_total(out.planned.totals, device);
  if (!total) throw Error(ExitCode::kUsage, "--offload: the plan puts nothing on " + device);
  out.before = out.after = total->total();
  if (out.before <= options.budget) {
    out.fits = true;
    if (request.ort_rules_estimate) out.planned.ort_rules = planner::ort_rules_estimate(out.planned, request);
    return out;
  }
  if (!total->complete()) {
    out.why = "the plan is incomplete (values of unknown size), so what to move cannot be chosen";
    return out;
  }
  if (total->inputs >= options.budget) {
    out.why = "the graph inputs the caller places on " + device + " alone take " + mb(total->inputs);
    return out;
  }
  PlanProblem pp = offload_problem(out.planned, options.device, options.cost);
  pp.problem.scope = options.scope;
  pp.problem.bytes_per_us = options.bytes_per_us;
  // From here on the plan before offload serves only `explain` (its graph and order) and is replaced by the round that
  // fits (or, with none, reported as not fitting): its steps and layout go now, so the rounds reuse their memory.
  {
    std::vector<NodeId> order = std::move(out.planned.plan.execution_order);
    out.planned.plan = {};
    out.planned.plan.execution_order = std::move(order);
    out.planned.layout = {};
    out.planned.subgraphs.clear();
  }
  // The model without copies: each round adds its copies to this (a reference: out.planned is replaced only when a
  // round fits, and the loop ends there).
  const partition::PartitionedModel& original = out.planned.parts;
  // The choice counts live bytes; the plan lays out activations, outputs and weights in arenas of their own, each as
  // large as its own peak, so its total can exceed them (and the layout may fragment). The target the choice gets is
  // searched: below `low` no choice fits, from `high` up the layout is too large. The first guess after a layout
  // too large takes off the gap between that layout and the live bytes; then bisection.
  const uint64_t available = options.budget - total->inputs;
  uint64_t low = 0, high = available + 1, target = available;
  std::string last_choice_failure;
  for (out.rounds = 1; out.rounds <= options.max_rounds; ++out.rounds) {
    pp.problem.budget = target;
    const Result choice = choose_offload(pp.problem);
    uint64_t next = 0;
    if (!choice.fits) {
      last_choice_failure = explain(out.planned, pp, choice);
      low = target;
      next = low + (high - low) / 2;
    } else {
      planner::OffloadRecord record;
      planner::PlannedModel candidate =
          planner::plan_partitioned(with_copies(original, pp, choice, options.device, record), round_request);
      spend(candidate);
      const DeviceTotal* t = find_total(candidate.totals, device);
      const uint64_t after = t ? t->total() : 0;
      if (after <= options.budget) {
        record.budget = options.budget;
        record.before = out.before;
        record.bytes_per_us = options.bytes_per_us;
        record.compute_us = choice.compute_us;
        record.estimated_us = choice.estimated_us;
        record.bytes_moved = choice.bytes_moved;
        candidate.offload = std::move(record);
        out.planned = std::move(candidate);
        out.after = after;
        out.fits = true;
        out.why.clear();
        break;
      }
      high = target;
      out.why = "the nearest plan found needs " + mb(after) +
                " (its arenas' peaks add up to more than the live bytes "
                "the choice counts)";
      const uint64_t placed = after - std::min(after, t ? t->inputs : 0);  // the arenas, without the caller's inputs
      const uint64_t gap = placed > choice.peak ? placed - choice.peak : 0;
      next = low == 0 && available > gap ? std::min(available - gap, target - std::min(target, after - options.budget))
                                         : low + (high - low) / 2;
    }
    if (next <= low || next >= high) next = low + (high - low) / 2;
    if (high - low <= std::max<uint64_t>(available / 1000, 4096)) break;  // within 0.1%: nothing between
    target = next;
  }
  if (!out.fits && out.why.empty()) out.why = last_choice_failure;
  if (!out.fits && !last_choice_failure.empty() && out.why != last_choice_failure)
    out.why += "; with less, " + last_choice_failure;
  return out;
}

}  // namespace memplan::offload
