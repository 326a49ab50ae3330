// Internal to onnx_io/: the protobuf-facing steps of loading, kept apart so each can be tested.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "memplan/graph.h"
#include "memplan/onnx_io/load.h"

namespace memplan::onnx_io {

// Parses and checks the container: non-empty, a valid ModelProto with a graph.
onnx::ModelProto parse_model(const std::string& path, const std::string& bytes);

// Applies --dim and --input-shape to the model's declared types (main graph and subgraphs). Returns warnings (e.g. a
// --dim name that no value uses).
std::vector<std::string> apply_overrides(onnx::ModelProto& model, const ShapeOverrides& overrides,
                                         const std::string& path);

// "node 'NAME' (OpType)", or "node #POSITION (OpType)" for a node without a name; names escaped for a terminal.
std::string describe_node(const onnx::NodeProto& n, int position);

// Builds the graph view from a (shape-inferred) model. Throws Error(kBadInput) for structural faults.
Model build_model(const onnx::ModelProto& proto, const std::string& path);

// The same in two halves, so that the first can run while shape inference does: the structure (values, nodes,
// producers and consumers, the acyclic check) from a model without subgraphs, then the types of `proto`, a model with
// the same nodes (the structure's model after inference wrote value_info and outputs). Together they make what
// build_model makes. same_structure: whether `proto` still has the inputs and outputs the structure was built with.
Model build_model_structure(const onnx::ModelProto& proto, const std::string& path);
bool same_structure(const Model& model, const onnx::ModelProto& proto);
void apply_model_types(Model& model, const onnx::ModelProto& proto, const std::string& path);

}  // namespace memplan::onnx_io
