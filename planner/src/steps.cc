// The steps each stream executes: kernel launches, and the triggers, barriers, notifications and waits that
// synchronise the streams as ORT's BuildExecutionPlan emits them.
#include <algorithm>
#include <utility>
#include <vector>

#include "adjacency.h"
#include "memplan/partition/provider.h"
#include "planner_phases.h"

namespace memplan::planner {

using partition::DeviceType;

namespace {

// ORT's node edges for synchronisation: each node's consumers (explicit or implicit) and producers, each once and in
// index order (ORT de-duplicates them), with the partition's ordering edges.
struct NodeEdges {
  Adjacency out_nodes, in_nodes;
};

NodeEdges node_edges(const PlanInput& in) {
  const Graph& g = in.graph;
  std::vector<std::pair<NodeId, NodeId>> edges = producer_consumer_edges(g);
  edges.insert(edges.end(), in.partition.order_edges.begin(), in.partition.order_edges.end());
  const size_t nn = g.nodes.size();
  return {Adjacency(nn, edges, /*from_first=*/true), Adjacency(nn, edges, /*from_first=*/false)};
}

// Per node, its trigger (-1: none): one for each node with a consumer on another stream, numbered in stream order.
std::vector<int> assign_triggers(const PlanInput& in, const Plan& plan, const Adjacency& out_nodes) {
  std::vector<int> trigger_of(in.graph.nodes.size(), -1);
  int triggers = 0;
  for (size_t i = 0; i < in.partition.streams.size(); ++i)
    for (NodeId n : in.partition.streams[i])
      for (NodeId c : out_nodes.of(n))
        if (plan.node_stream[c] != static_cast<int>(i)) {
          trigger_of[n] = triggers++;
          break;
        }
  return trigger_of;
}

// Who waits for whom: (consumer, producer, host wait).
struct Wait {
  NodeId consumer, producer;
  bool host;
};

// The waits, ordered by consumer then producer as ORT's map of maps visits them, the first one found for a pair
// kept; and each waited-for producer's notification (`notification_of`, -1: none; its owner added to the plan).
std::vector<Wait> assign_notifications(const PlanInput& in, Plan& plan, const Adjacency& out_nodes,
                                       std::vector<int>& notification_of) {
  const Graph& g = in.graph;
  const auto& streams = in.partition.streams;
  notification_of.assign(g.nodes.size(), -1);
  std::vector<Wait> waits;
  auto notify = [&](NodeId n, size_t stream) {
    if (notification_of[n] < 0) {
      notification_of[n] = static_cast<int>(plan.notification_owners.size());
      plan.notification_owners.push_back(static_cast<int>(stream));
    }
  };
  auto has_wait_handle = [](Device from) { return partition::provider(from.type).has_wait_handle; };
  for (size_t i = 0; i < streams.size(); ++i) {
    Device stream_device = in.partition.stream_device[i];
    for (NodeId n : streams[i]) {
      const Node& node = g.nodes[n];
      if (node.op_type == "Shape" || stream_device.type == DeviceType::kCpu) continue;
      for (NodeId c : out_nodes.of(n)) {
        bool direct = false;
        for (ValueId out : node.outputs) {
          if (out == kNoId) continue;
          const auto& cin = g.nodes[c].inputs;
          if (std::find(cin.begin(), cin.end(), out) == cin.end()) continue;
          direct = true;
          bool output_on_cpu = plan.values[out].location.type == DeviceType::kCpu;
          if ((plan.node_stream[c] != static_cast<int>(i) || output_on_cpu) && has_wait_handle(stream_device)) {
            notify(n, i);
            waits.push_back({c, n, output_on_cpu});
          }
        }
        if (!direct && plan.node_stream[c] != static_cast<int>(i) && has_wait_handle(stream_device)) {
          notify(n, i);
          bool downstream_on_cpu = in.partition.stream_device[plan.node_stream[c]].type == DeviceType::kCpu;
          waits.push_back({c, n, downstream_on_cpu});
        }
      }
    }
  }
  std::stable_sort(waits.begin(), waits.end(), [](const Wait& a, const Wait& b) {
    return a.consumer != b.consumer ? a.consumer < b.consumer : a.producer < b.producer;
  });
  waits.erase(
      std::unique(waits.begin(), waits.end(),
                  [](const Wait& a, const Wait& b) { return a.consumer == b.consumer && a.producer == b.producer; }),
      waits.end());
  return waits;
}

// Each stream's steps, node by node: a barrier per producer on another stream, its waits, the launch, then its
// notification and trigger.
void emit_steps(const PlanInput& in, Plan& plan, const Adjacency& in_nodes, const std::vector<int>& trigger_of,
                const std::vector<int>& notification_of, const std::vector<Wait>& waits) {
  const auto& streams = in.partition.streams;
  const size_t nn = in.graph.nodes.size();
  std::vector<size_t> first_wait(nn + 1, 0);  // waits of node n: [first_wait[n], first_wait[n + 1])
  for (const Wait& w : waits) ++first_wait[static_cast<size_t>(w.consumer) + 1];
  for (size_t n = 0; n < nn; ++n) first_wait[n + 1] += first_wait[n];
  plan.streams.resize(streams.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    LogicStream& ls = plan.streams[i];
    ls.device = in.partition.stream_device[i];
    size_t steps = 0;  // (counted first: grown by doubling, the steps of a long stream were written three times)
    for (NodeId n : streams[i]) {
      for (NodeId p : in_nodes.of(n)) steps += plan.node_stream[p] != static_cast<int>(i);
      steps += first_wait[n + 1] - first_wait[n] + 1 + (notification_of[n] >= 0) + (trigger_of[n] >= 0);
    }
    ls.steps.reserve(steps);
    for (NodeId n : streams[i]) {
      for (NodeId p : in_nodes.of(n)) {
        if (plan.node_stream[p] == static_cast<int>(i)) continue;
        int trigger = trigger_of[p];
        int barrier = plan.num_barriers++;
        plan.downstream_map[trigger].push_back({static_cast<int>(i), static_cast<int>(ls.steps.size())});
        ls.steps.push_back({StepKind::kBarrier, n, barrier, trigger, -1});
      }
      for (size_t k = first_wait[n]; k < first_wait[n + 1]; ++k) {
        // A CPU stream always waits on the host.
        bool host_wait = waits[k].host || ls.device.type == DeviceType::kCpu;
        ls.steps.push_back({StepKind::kWaitOnEP, n, -1, -1, notification_of[waits[k].producer], host_wait});
      }
      ls.steps.push_back({StepKind::kLaunchKernel, n, -1, -1, -1});
      if (notification_of[n] >= 0) ls.steps.push_back({StepKind::kActivateNotification, n, -1, -1, notification_of[n]});
      if (trigger_of[n] >= 0) ls.steps.push_back({StepKind::kTriggerDownstream, n, -1, trigger_of[n], -1});
    }
  }
}

}  // namespace

// Flat tables rather than a map per node: on a 144,000-node plan with a copy stream the maps and the steps' growth
// were a third of the planner's time.
void build_execution_plan(const PlanInput& in, Plan& plan) {
  const NodeEdges edges = node_edges(in);
  const std::vector<int> trigger_of = assign_triggers(in, plan, edges.out_nodes);
  std::vector<int> notification_of;
  const std::vector<Wait> waits = assign_notifications(in, plan, edges.out_nodes, notification_of);
  emit_steps(in, plan, edges.in_nodes, trigger_of, notification_of, waits);
}

}  // namespace memplan::planner
