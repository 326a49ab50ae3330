// The whole partition stage in one call: op table, placement, copy insertion, streams.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "memplan/execution_order.h"
#include "memplan/memory_order.h"
#include "memplan/partition/copies.h"
#include "memplan/partition/partition.h"
#include "memplan/partition/streams.h"

namespace memplan::partition {

struct PartitionRequest {
  Device device;                   // --device
  std::string placement_file;      // --placement (replaces the device's default rules)
  std::string op_properties_file;  // --op-properties (extends the built-in table)
  std::string config_file;         // --partition: an ORT DeviceBasedPartitioner config to apply
  int streams_per_device = 1;      // --streams-per-device
  OrderKind order = OrderKind::kDefault;
  double order_time_budget_s = 1.0;  // for --order memory's search
};

struct PartitionedModel {
  OpTable ops;
  int opset = 0;
  PlacedGraph placed;         // graph with copy nodes, and its placement
  std::vector<NodeId> order;  // execution order of placed.graph
  Partition partition;
  std::optional<StreamSplit> split;   // when streams_per_device > 1
  std::optional<MemoryOrder> memory;  // --order memory: what the search found (the order is `order`)
  std::vector<std::string> warnings;
};

// Throws Error(kBadInput) for bad files, Error(kUsage) for inconsistent requests.
PartitionedModel partition_model(const Model& model, const PartitionRequest& request);
// The same without a copy of the graph: the model's graph becomes the result's (model.graph is left empty; a 100k-node
// graph's copy was most of this stage's time).
PartitionedModel partition_model(Model&& model, const PartitionRequest& request);

}  // namespace memplan::partition
