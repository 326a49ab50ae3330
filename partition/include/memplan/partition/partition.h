// Logical streams: which nodes run on which stream, in ONNX Runtime's DeviceBasedPartitioner format
// {"type":"DeviceBasedPartitioner","streams":[[node names]...],"devices":["0","1"]}.
#pragma once

#include <string>
#include <vector>

#include "memplan/graph.h"
#include "memplan/partition/placement.h"

namespace memplan::partition {

struct Partition {
  std::vector<Device> stream_device;         // per stream
  std::vector<std::vector<NodeId>> streams;  // per stream, its nodes in execution order
  std::vector<int> node_stream;              // per node
  // (a, b): b starts after a completes though no value passes between them. Offload's copies use them: a copy-in
  // waits until the step before its staging region is needed, a step waits for a copy-out reading memory it reuses.
  // The planner synchronises them as it does data edges.
  std::vector<std::pair<NodeId, NodeId>> order_edges;
};

// ORT's default: one stream per device type, in order of first appearance in `order`.
Partition default_partition(const Graph& graph, const Placement& placement, const std::vector<NodeId>& order);

struct PartitionConfig {
  std::vector<std::vector<std::string>> streams;
  std::vector<std::string> devices;
};

// Throws Error(kBadInput) naming `source`: not JSON, wrong or missing type, malformed streams or
// devices, stream and device counts that differ.
PartitionConfig parse_partition_config(const std::string& text, const std::string& source);

// Maps a config onto the graph. Nodes are named as ORT names them (unnamed ones OpType + counter in
// default order); each stream runs its nodes in `order`, not config order. Errors (kBadInput): a node in
// no stream, a node in two streams, a node whose device differs from its stream's. Names matching no
// node are reported in `warnings` (ORT ignores them silently).
Partition apply_partition_config(const Graph& graph, const Placement& placement, const std::vector<NodeId>& order,
                                 const PartitionConfig& config, const std::string& source,
                                 std::vector<std::string>& warnings);

// The config ORT would write for this partition: compact JSON, keys sorted, no trailing newline.
std::string write_partition_config(const Graph& graph, const Partition& partition);

}  // namespace memplan::partition
