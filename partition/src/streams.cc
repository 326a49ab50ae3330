#include "memplan/partition/streams.h"

#include <algorithm>
#include <map>

#include "memplan/execution_order.h"

namespace memplan::partition {
namespace {

double count(const Graph& g, ValueId v) {
  if (v == kNoId) return 0;
  auto c = g.values[v].element_count();
  return c ? static_cast<double>(*c) : 0;
}

double product_from(const Value& v, size_t first) {
  double p = 1;
  for (size_t k = first; k < v.dims.size(); ++k) p *= v.dims[k].known() ? static_cast<double>(v.dims[k].value) : 0;
  return p;
}

}  // namespace

double node_flops(const Graph& g, NodeId id) {
  const Node& n = g.nodes[id];
  auto in = [&](size_t k) -> const Value* {
    return k < n.inputs.size() && n.inputs[k] != kNoId ? &g.values[n.inputs[k]] : nullptr;
  };
  double out = n.outputs.empty() ? 0 : count(g, n.outputs[0]);
  if (n.op_type == "Conv" && in(1)) return 2 * out * product_from(*in(1), 1);
  if (n.op_type == "ConvTranspose" && in(1)) return 2 * count(g, n.inputs[0]) * product_from(*in(1), 1);
  if ((n.op_type == "MatMul" || n.op_type == "Gemm") && in(0) && !in(0)->dims.empty()) {
    const Value& a = *in(0);
    size_t k_axis = a.dims.size() - 1;
    if (n.op_type == "Gemm" && n.int_attribute("transA", 0) && a.dims.size() == 2) k_axis = 0;
    double k = a.dims[k_axis].known() ? static_cast<double>(a.dims[k_axis].value) : 0;
    return 2 * out * k;
  }
  if ((n.op_type == "LSTM" || n.op_type == "GRU" || n.op_type == "RNN") && in(0) && in(1) && in(2) &&
      in(0)->dims.size() == 3 && in(1)->dims.size() == 3 && in(2)->dims.size() == 3) {
    const Value &x = *in(0), &w = *in(1), &r = *in(2);
    double steps = static_cast<double>(x.dims[0].value) * static_cast<double>(x.dims[1].value);
    double rows = static_cast<double>(w.dims[0].value) * static_cast<double>(w.dims[1].value);
    return 2 * steps * rows * static_cast<double>(w.dims[2].value + r.dims[2].value);
  }
  return 0;
}

double node_bytes(const Graph& g, NodeId id) {
  const Node& n = g.nodes[id];
  double bytes = 0;
  for (ValueId v : n.inputs)
    if (v != kNoId && g.values[v].bytes) bytes += static_cast<double>(*g.values[v].bytes);
  for (ValueId v : n.outputs)
    if (v != kNoId && g.values[v].bytes) bytes += static_cast<double>(*g.values[v].bytes);
  return bytes;
}

double node_cost_us(const Graph& g, NodeId n, DeviceType device, const CostModel& m) {
  bool gpu = device != DeviceType::kCpu;
  double flops = node_flops(g, n) / (gpu ? m.gpu_flops_per_us : m.cpu_flops_per_us);
  double bytes = node_bytes(g, n) / (gpu ? m.gpu_bytes_per_us : m.cpu_bytes_per_us);
  return std::max(flops, bytes) + (gpu ? m.gpu_launch_us : m.cpu_launch_us);
}

namespace {

// free_nodes may be shorter than the graph (empty: nothing is free).
bool is_free(const std::vector<bool>& free_nodes, NodeId i) {
  return static_cast<size_t>(i) < free_nodes.size() && free_nodes[i];
}

}  // namespace

std::vector<bool> alias_only_nodes(const Graph& graph, const Placement& placement, const OpTable& ops, int opset) {
  std::vector<bool> free(graph.nodes.size(), false);
  const NodeFacts facts(graph, placement, ops, opset);
  for (const Node& n : graph.nodes) {
    if (n.outputs.empty()) continue;
    const OpFacts& f = facts[n.index];
    bool aliased = !f.alias.empty();
    for (size_t k = 0; k < n.outputs.size() && aliased; ++k)
      aliased = n.outputs[k] == kNoId ||
                std::any_of(f.alias.begin(), f.alias.end(), [&](auto a) { return a.second == static_cast<int>(k); });
    // Dropout without a training_mode input is an identity at inference; ORT's EliminateDropout removes it.
    bool dropout = n.op_type == "Dropout" && n.domain.empty() && (n.inputs.size() < 3 || n.inputs[2] == kNoId);
    free[n.index] = aliased || dropout;
  }
  return free;
}

namespace {

struct SlotSchedule {
  std::map<DeviceType, int> first_slot;  // each device type's first slot; k slots each
  std::vector<Device> slot_device;
  std::vector<int> slot_of;  // by node
  double makespan_us = 0;
};

// List scheduling in execution order onto k slots per device type: each node goes where it starts earliest.
SlotSchedule assign_slots(const Graph& graph, const Placement& placement, const std::vector<NodeId>& order, int k,
                          const CostModel& model, const std::vector<bool>& free_nodes, const std::vector<double>& cost,
                          const std::vector<std::vector<NodeId>>& producers) {
  const size_t n = graph.nodes.size();
  SlotSchedule out;
  auto& first_slot = out.first_slot;
  auto& slot_device = out.slot_device;
  std::vector<double> finish(n, 0);
  // Candidate streams: k per device type, numbered device-major in order of first appearance.
  for (NodeId i : order) {
    Device d = placement.node_device[i];
    if (first_slot.emplace(d.type, static_cast<int>(slot_device.size())).second)
      for (int s = 0; s < k; ++s) slot_device.push_back(d);
  }
  std::vector<double> slot_free(slot_device.size(), 0);
  std::vector<int>& slot_of = out.slot_of;
  slot_of.assign(n, -1);
  // A free node takes no time on any stream: it is ready when its inputs are, and a consumer waits (and pays a
  // cross-stream sync) only for the real node behind it. origin: the slot of that real node, -1 for none
  // (a weight's Identity).
  std::vector<int> origin(n, -1);
  for (NodeId i : order) {
    int base = first_slot[placement.node_device[i].type];
    // Prefer the stream of the producer that finishes last: its chain continues without a wait.
    int preferred = -1, latest_origin = -1;
    double latest = -1;
    for (NodeId p : producers[i])
      if (finish[p] > latest && first_slot[placement.node_device[p].type] == base)
        latest = finish[p], preferred = slot_of[p], latest_origin = origin[p];
    if (is_free(free_nodes, i)) {
      for (NodeId p : producers[i]) finish[i] = std::max(finish[i], finish[p]);
      origin[i] = latest_origin;
      slot_of[i] = preferred;  // -1 when it hangs off no real node: settled below, by its consumers
      continue;
    }
    int best = -1;
    double best_start = 0;
    for (int s = base; s < base + k; ++s) {
      double start = slot_free[s];
      for (NodeId p : producers[i])
        start = std::max(start, finish[p] + (origin[p] < 0 || origin[p] == s ? 0 : model.sync_us));
      bool better = best == -1 || start < best_start - 1e-9 || (std::abs(start - best_start) <= 1e-9 && s == preferred);
      if (better) best = s, best_start = start;
    }
    slot_of[i] = best;
    origin[i] = best;
    finish[i] = best_start + cost[i];
    slot_free[best] = finish[i];
    out.makespan_us = std::max(out.makespan_us, finish[i]);
  }
  // Free nodes that hang off no real node (weights' Identity, Reshape of a constant) go to the stream of their
  // first consumer on the same device, so no stream waits on another for them; else the device's first.
  std::vector<std::vector<NodeId>> consumers(n);
  for (NodeId i : order)
    for (NodeId p : producers[i]) consumers[p].push_back(i);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    NodeId i = *it;
    if (slot_of[i] >= 0) continue;
    int base = first_slot[placement.node_device[i].type];
    slot_of[i] = base;
    for (NodeId c : consumers[i])  // in execution order
      if (first_slot[placement.node_device[c].type] == base && slot_of[c] >= 0) {
        slot_of[i] = slot_of[c];
        break;
      }
  }
  return out;
}

}  // namespace

StreamSplit split_streams(const Graph& graph, const Placement& placement, const std::vector<NodeId>& order,
                          int streams_per_device, const CostModel& model, const std::vector<bool>& free_nodes) {
  const size_t n = graph.nodes.size();
  const int k = std::max(1, streams_per_device);
  auto producers = input_node_edges(graph);
  std::vector<double> cost(n), longest(n, 0);
  StreamSplit result;
  for (NodeId i : order) {
    cost[i] = is_free(free_nodes, i) ? 0 : node_cost_us(graph, i, placement.node_device[i].type, model);
    result.serial_us += cost[i];
    double before = 0;
    for (NodeId p : producers[i]) before = std::max(before, longest[p]);
    longest[i] = before + cost[i];
    result.critical_path_us = std::max(result.critical_path_us, longest[i]);
  }

  SlotSchedule chosen = assign_slots(graph, placement, order, k, model, free_nodes, cost, producers);
  if (k > 1) {
    // Greedy list scheduling can lose to one stream (waits cost more than the overlap gains): keep the better.
    SlotSchedule single = assign_slots(graph, placement, order, 1, model, free_nodes, cost, producers);
    result.one_stream_us = single.makespan_us;
    if (single.makespan_us <= chosen.makespan_us) chosen = std::move(single), result.no_gain = true;
  }
  result.estimated_us = chosen.makespan_us;
  if (k == 1) result.one_stream_us = chosen.makespan_us;
  const auto& first_slot = chosen.first_slot;
  const auto& slot_device = chosen.slot_device;
  const auto& slot_of = chosen.slot_of;

  // Drop unused slots; keep device-major order, streams numbered by first node.
  std::vector<int> stream_of_slot(slot_device.size(), -1);
  Partition& p = result.partition;
  p.node_stream.assign(n, -1);
  for (NodeId i : order) {
    int s = slot_of[i];
    if (stream_of_slot[s] == -1) {
      stream_of_slot[s] = static_cast<int>(p.stream_device.size());
      p.stream_device.push_back(slot_device[s]);
    }
    p.node_stream[i] = stream_of_slot[s];
  }
  // Renumber so streams of one device type are adjacent, in order of first appearance.
  std::vector<int> rank(p.stream_device.size());
  std::vector<int> idx(p.stream_device.size());
  for (size_t s = 0; s < idx.size(); ++s) idx[s] = static_cast<int>(s);
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
    return first_slot.at(p.stream_device[a].type) < first_slot.at(p.stream_device[b].type);
  });
  std::vector<Device> devices(idx.size());
  for (size_t r = 0; r < idx.size(); ++r) rank[idx[r]] = static_cast<int>(r), devices[r] = p.stream_device[idx[r]];
  p.stream_device = devices;
  for (NodeId i = 0; i < static_cast<NodeId>(n); ++i)
    if (p.node_stream[i] >= 0) p.node_stream[i] = rank[p.node_stream[i]];
  p.streams.assign(p.stream_device.size(), {});
  for (NodeId i : order) p.streams[p.node_stream[i]].push_back(i);
  return result;
}

}  // namespace memplan::partition
