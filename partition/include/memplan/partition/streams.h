// Splitting each device's nodes into up to K streams that run independent branches concurrently.
//
// Cost model (documented in docs/partition.md): a node's time is max(FLOPs / peak FLOP rate, bytes moved /
// bandwidth) plus a launch overhead, with per-device-type rates; a cross-stream dependency costs a
// synchronisation delay. Nodes are list-scheduled in execution order onto the stream where they can
// start earliest. Any assignment is deadlock-free: every stream runs its nodes in one global
// topological order and waits only on earlier nodes.
#pragma once

#include <vector>

#include "memplan/graph.h"
#include "memplan/partition/op_table.h"
#include "memplan/partition/partition.h"
#include "memplan/partition/placement.h"

namespace memplan::partition {

struct CostModel {
  double cpu_flops_per_us = 50e3;  // 50 GFLOP/s
  double cpu_bytes_per_us = 20e3;  // 20 GB/s
  double cpu_launch_us = 1;
  double gpu_flops_per_us = 50e6;  // 50 TFLOP/s
  double gpu_bytes_per_us = 2e6;   // 2 TB/s
  double gpu_launch_us = 5;
  double sync_us = 10;  // one cross-stream wait
};

// Multiply-adds times two for Conv, ConvTranspose, MatMul, Gemm, Einsum-free estimates; 0 otherwise.
double node_flops(const Graph& graph, NodeId n);
// Bytes read and written (inputs and outputs with a known size).
double node_bytes(const Graph& graph, NodeId n);
double node_cost_us(const Graph& graph, NodeId n, DeviceType device, const CostModel& model);

struct StreamSplit {
  Partition partition;
  double serial_us = 0;         // every node one after another
  double critical_path_us = 0;  // the longest dependency chain: no split can beat it
  double estimated_us = 0;      // the schedule's makespan, synchronisation included
  double one_stream_us = 0;     // the makespan with one stream per device: the baseline of the speed-up
  bool no_gain = false;         // K streams were no faster than one per device, so one was kept
};

// Nodes ONNX Runtime runs without work: ops whose output is an alias of their input (Identity, Reshape,
// Squeeze, Unsqueeze, Flatten, ... per the op table) and inference Dropout, which ORT removes at level basic.
// They cost nothing in the schedule, so a stream never gets them as its "parallel work".
std::vector<bool> alias_only_nodes(const Graph& graph, const Placement& placement, const OpTable& ops, int opset);

// `free_nodes` (by node index, may be empty) cost nothing; see alias_only_nodes.
StreamSplit split_streams(const Graph& graph, const Placement& placement, const std::vector<NodeId>& order,
                          int streams_per_device, const CostModel& model = {},
                          const std::vector<bool>& free_nodes = {});

}  // namespace memplan::partition
