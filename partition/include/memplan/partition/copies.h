// Copy nodes where a value crosses devices, inserted as ONNX Runtime's MemcpyTransformer does:
// MemcpyFromHost before a device node that reads a host value (not as a CPU input), MemcpyToHost after a
// device node whose output a host node reads. Graph inputs and outputs are copied by the runtime, not by
// nodes, unless an input feeds both sides. Names follow ORT: nodes "Memcpy", "Memcpy_token_N"; values
// "<name>_CUDAExecutionProvider".
#pragma once

#include "memplan/graph.h"
#include "memplan/partition/placement.h"

namespace memplan::partition {

struct PlacedGraph {
  Graph graph;          // a new view with the copy nodes appended
  Placement placement;  // covering the copy nodes too
  int copies_to_device = 0;
  int copies_to_host = 0;
};

PlacedGraph insert_copies(Graph graph, const Placement& placement, const OpTable& ops, int opset);

}  // namespace memplan::partition
