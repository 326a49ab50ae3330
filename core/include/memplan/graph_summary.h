// What `memplan inspect MODEL` reports, computed from the graph view alone.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "memplan/execution_order.h"
#include "memplan/graph.h"

namespace memplan {

struct GraphSummary {
  size_t nodes = 0;  // main graph
  size_t nodes_in_subgraphs = 0;
  size_t values = 0;                           // main graph
  size_t subgraphs = 0;                        // recursively
  std::map<std::string, size_t> op_histogram;  // main graph and subgraphs
  size_t initializer_count = 0;
  uint64_t initializer_bytes = 0;
  size_t activation_count = 0;  // node outputs with a known size (main graph and subgraphs)
  uint64_t activation_bytes = 0;
  // Tensors (or values of no known type) whose byte size is unknown, as "path: name" for subgraphs,
  // each with the reason (Value::unknown_reason).
  struct Unknown {
    std::string name;
    std::string reason;
  };
  std::vector<Unknown> unknown_size;
  // Symbolic dims of the graph inputs still free: fixing them with --dim is the next step.
  std::vector<std::string> free_dims;
  size_t non_tensor_values = 0;          // sequences, maps, optionals: no static size by nature
  std::vector<std::string> order_names;  // main graph nodes in execution order, ORT's names
};

GraphSummary summarize(const Model& model, OrderKind order);

}  // namespace memplan
