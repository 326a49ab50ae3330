// Internal to onnx_io/: ONNX's shape inference of a whole model, in pieces where a single call would be quadratic.
#pragma once

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

namespace memplan::onnx_io {

// What onnx::shape_inference::InferShapes(model, registry, options) does to `model`, the nodes taken in list order.
// ONNX 1.12 gives every subgraph it infers (an If's branches, a Loop's body) a copy of every type known so far in
// the graph around it: a graph of 10,000 If nodes took 45 s, 20,000 some minutes. A main graph with many nodes that
// hold subgraphs is therefore inferred in consecutive pieces of a few such nodes each, every piece a model of its
// own whose inputs are the values it reads from earlier pieces (with their types, and their contents where a
// Constant node made them), one table of propagated shape data shared by all. New symbolic dims (unk__N) are
// renumbered across the pieces so that no two pieces' dims share a name. A graph with few such nodes is inferred in
// one call, exactly as ONNX does it.
void infer_model_shapes(onnx::ModelProto& model, const onnx::ISchemaRegistry* registry,
                        const onnx::ShapeInferenceOptions& options);

}  // namespace memplan::onnx_io
