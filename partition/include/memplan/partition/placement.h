// Which device each node runs on. Default: everything on the CPU. With a GPU, nodes go to the GPU
// except what the placement rules send to the CPU.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "memplan/graph.h"
#include "memplan/partition/device.h"
#include "memplan/partition/op_table.h"

namespace memplan::partition {

struct PlacementRules {
  Device device;                      // where nodes go by default
  std::set<std::string> cpu_ops;      // ops with no kernel on `device`
  std::set<std::string> cpu_domains;  // whole domains without kernels on `device`
  std::set<std::string> cpu_nodes;    // nodes the user pins to the CPU (by ORT name)
  bool cpu_fallback = true;           // ORT's CPU fallback for small shape computations
  int64_t cpu_fallback_max_initializer_elements = 100;
};

// Rules for a device: all-CPU, or the shipped ones for a GPU (data/placement/cuda.json).
PlacementRules default_rules(Device device);
// Reads a placement file (format documented in docs/partition.md). Throws Error(kBadInput).
PlacementRules parse_placement_rules(const std::string& text, const std::string& source);

struct Placement {
  std::vector<Device> node_device;   // per node
  std::vector<std::string> reasons;  // per node: why it is on the CPU when the rules' device is not
};

// `opset` is the model's ai.onnx opset, used for op-table lookups.
Placement place_nodes(const Graph& graph, int opset, const PlacementRules& rules, const OpTable& ops);

// The op facts of node `n` as placed (the provider of its device).
OpFacts facts_for(const Graph& graph, NodeId n, const Placement& placement, const OpTable& ops, int opset);

// facts_for of every node, each distinct (op, domain, provider) looked up once: a graph of a million nodes has a
// few dozen distinct ones, and the partition and both plans read them node by node.
class NodeFacts {
 public:
  NodeFacts() = default;
  NodeFacts(const Graph& graph, const Placement& placement, const OpTable& ops, int opset);
  const OpFacts& operator[](NodeId n) const { return distinct_[of_node_[static_cast<size_t>(n)]]; }

 private:
  std::vector<OpFacts> distinct_;
  std::vector<uint32_t> of_node_;  // per node: its facts in distinct_
};

}  // namespace memplan::partition
