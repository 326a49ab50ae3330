// Splitting each device's nodes into up to K streams that run independent branches concurrently.
//
// Cost model (documented in the README): a node's time is max(FLOPs / peak FLOP rate, bytes moved /
// bandwidth) plus a launch overhead, with per-device-type rates; a cross-stream dependency costs a
// synchronisation delay. Nodes are list-scheduled in execution order onto the stream where they can
// start earliest. Any assignment is deadlock-free: every stream runs its nodes in one global
// topological order and waits only on earlier nodes.
#pragma once

#include <vector>

#include "memplan/graph.h"
#include "memplan/partition/partition.h"

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
};

StreamSplit split_streams(const Graph& graph, const Placement& placement, const std::vector<NodeId>& order,
                          int streams_per_device, const CostModel& model = {});

}  // namespace memplan::partition
