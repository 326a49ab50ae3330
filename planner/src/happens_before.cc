#include "memplan/planner/happens_before.h"

#include <algorithm>

#include "memplan/error.h"

namespace memplan::planner {

HappensBefore happens_before(const Graph& graph, const partition::Partition& partition) {
  const size_t n = graph.nodes.size(), s = partition.streams.size();
  HappensBefore hb;
  hb.node_stream = partition.node_stream;
  hb.position.assign(n, 0);
  hb.streams = s;
  hb.clocks.assign(n * s, 0);
  for (size_t k = 0; k < s; ++k)
    for (size_t p = 0; p < partition.streams[k].size(); ++p) hb.position[partition.streams[k][p]] = static_cast<int>(p);
  // Producers on other streams: ORT synchronises on every such edge (Barrier, and WaitOnEP where the
  // producer's device needs it), so their completion precedes the consumer.
  std::vector<std::vector<NodeId>> producers(n);
  for (const Node& node : graph.nodes) {
    for_each_input_value(node, [&](ValueId v) {
      if (graph.values[v].producer != kNoId) producers[node.index].push_back(graph.values[v].producer);
    });
  }
  for (auto [a, b] : partition.order_edges) producers[b].push_back(a);
  // Process in an order consistent with all dependencies: repeatedly take the next node of each stream
  // whose cross-stream producers are done (a Kahn pass over streams).
  std::vector<size_t> next(s, 0);
  std::vector<bool> done(n, false);
  size_t remaining = n;
  bool progress = true;
  while (remaining && progress) {
    progress = false;
    for (size_t k = 0; k < s; ++k) {
      while (next[k] < partition.streams[k].size()) {
        NodeId node = partition.streams[k][next[k]];
        bool ready = std::all_of(producers[node].begin(), producers[node].end(), [&](NodeId p) { return done[p]; });
        if (!ready) break;
        int* c = &hb.clocks[static_cast<size_t>(node) * s];
        if (next[k] > 0) {
          const int* prev = &hb.clocks[static_cast<size_t>(partition.streams[k][next[k] - 1]) * s];
          std::copy(prev, prev + s, c);
        }
        c[k] = static_cast<int>(next[k]);
        for (NodeId p : producers[node]) {
          // A Shape on a device stream synchronises nothing (ORT gives it no notification): its output is
          // ready on launch, but nothing before it on its stream is known complete.
          // (the name compared last: on one stream no producer is on another)
          if (hb.node_stream[p] != static_cast<int>(k) &&
              partition.stream_device[hb.node_stream[p]].type != partition::DeviceType::kCpu &&
              graph.nodes[p].op_type == "Shape")
            continue;
          const int* pc = &hb.clocks[static_cast<size_t>(p) * s];
          for (size_t t = 0; t < s; ++t) c[t] = std::max(c[t], pc[t]);
          int ps = hb.node_stream[p];
          c[ps] = std::max(c[ps], hb.position[p] + 1);
        }
        done[node] = true;
        --remaining;
        ++next[k];
        progress = true;
      }
    }
  }
  if (remaining)
    throw Error(ExitCode::kBadInput,
                "the partition's streams deadlock: a stream waits on a node that runs after it in another stream");
  return hb;
}

}  // namespace memplan::planner
