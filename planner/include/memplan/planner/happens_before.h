// Which nodes of a partitioned graph are known complete before another starts, by stream order and the
// synchronisation ORT's steps give every cross-stream edge.
#pragma once

#include <cstddef>
#include <vector>

#include "memplan/graph.h"
#include "memplan/partition/partition.h"

namespace memplan::planner {

// For each node, a vector clock over streams: entry s = how many nodes of stream s are complete before the
// node starts, by stream order and the synchronisation steps. a happens-before b iff
// clock[b][stream(a)] > position of a in its stream.
struct HappensBefore {
  std::vector<int> node_stream;
  std::vector<int> position;  // within its stream
  size_t streams = 0;
  std::vector<int> clocks;  // node-major: clocks[node * streams + stream]
  int clock(NodeId n, size_t s) const { return clocks[static_cast<size_t>(n) * streams + s]; }
  bool before(NodeId a, NodeId b) const { return clock(b, node_stream[a]) > position[a]; }
};

// Throws Error(kBadInput) when the streams deadlock (a stream waits on a node another stream runs after it).
HappensBefore happens_before(const Graph& graph, const partition::Partition& partition);

}  // namespace memplan::planner
