// Internal to onnx_io/: axis-like attributes checked against the ranks of the inputs they index. ONNX's inference
// (in its lenient mode) gives up silently on an out-of-range axis, so without this check such a model would load
// with "no shape inferred" instead of the fault; ONNX Runtime refuses it when it creates a session.
#pragma once

#include <string>

#include "memplan/graph.h"

namespace memplan::onnx_io {

// A message naming the attribute, its value and the range the node's input ranks allow; "" when every checked
// attribute is in range or the ranks it depends on are unknown. Default-domain ops with an axis, axes, perm or
// batch_dims attribute (Gather, Concat, Softmax, Flatten, the reductions, Transpose, GatherND, ...).
std::string attribute_range_fault(const Graph& graph, const Node& node);

}  // namespace memplan::onnx_io
