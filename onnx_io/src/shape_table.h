// ORT's view of a model as the child that makes it sends it: a table of shapes by name.
//
// What ORT's view of a model is used for (ORT's estimate: PlanInput::decision_shapes): the shape its graph view would
// give each value of the main graph, as the types declared and inferred (inputs over outputs over value_info, as
// graph_builder.cc) say; initializers are left out (their dims are the tensor's in every view). The child sends a
// table (shape_table_part), the parent reads it (read_shape_table): each value once, first those a graph built from
// the model visits, in its order (graph inputs, each node's inputs then outputs, graph outputs), so that the parent
// finds them by position; then every other typed name. The table (types_table.h's bytes): u64 count, then per value
// a u32 name length, the name and its shape (table_bytes::put_shape).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <optional>
#include <string>

#include "memplan/shape_view.h"

namespace memplan::onnx_io {

// The table of `proto`'s main graph. Made by one walk over the nodes where the file is listed in order and declares
// its types in that order (a large model's usual case), else by shape_table_by_names: the same bytes either way.
// `listed`: listed_in_order(proto.graph()), where the caller found it already (at 1M nodes with 400k initializers,
// 0.1 s to find again).
std::string shape_table_part(const onnx::ModelProto& proto, std::optional<bool> listed = std::nullopt);

// The table made by one walk over the nodes, without a table of names, where the file allows it (shape_table.cc says
// when); nullopt where it does not.
std::optional<std::string> shape_table_in_order(const onnx::ModelProto& proto,
                                                std::optional<bool> listed = std::nullopt);

// The same table, made with a table of every name: right for any file, a cache miss per name on a large one.
std::string shape_table_by_names(const onnx::ModelProto& proto);

// Reads a table shape_table_part wrote; a negative dimension fails as bad input, naming `path`.
ShapeView read_shape_table(const char* data, size_t size, const std::string& path);

}  // namespace memplan::onnx_io
