// Graphs written as text, for tests of the stages after loading (partition, planner, layout) without protobuf,
// libonnx or the disk:
//
//   input X1: float[M,N]        a graph input (types: dtype_name's names; dims: numbers, names for free dims, or
//   weight W: float[1]          none: `float[]` is a scalar; `float` alone has no shape)
//   value X2: float[M,N]        the type of a value a node makes
//   output X4: float[M,N]       a graph output, with its type
//   X2 = T(X1)                  a node: outputs = op(inputs); `test.I(...)` puts op I in domain "test"; a name
//   Y, Z = Split(X2) as split   after `as` (else "node0", "node1", ... by position); an empty input is omitted
//   # a comment
//
// Values a node uses without a declaration have no type. Value ids follow ONNX Runtime's order (renumber_values), as
// a model loaded from a file has them. Throws std::invalid_argument naming the line for text it cannot read.
#pragma once

#include <string_view>

#include "memplan/graph.h"

namespace memplan::testing {

Graph parse_graph(std::string_view text);

// A model around parse_graph(text), with the opsets given ("" = ai.onnx).
Model parse_model(std::string_view text, std::map<std::string, int64_t> opsets = {{"", 14}});

}  // namespace memplan::testing
