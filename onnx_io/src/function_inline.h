// Internal to onnx_io/: ONNX Runtime's load-time function expansion. ORT 1.30 inlines every call of a function the
// model defines itself (ModelProto.functions: torch's export_modules_as_functions, onnxscript) before it partitions.
// And it has no CPU or CUDA kernel for a few ONNX ops that ONNX defines as functions; when no execution provider
// claims such a node, ORT replaces it by its function body (Graph::InlineFunction) and partitions again. memplan
// does the same to the ModelProto so that partition configs, plans and inspect describe the graph ORT runs.
#pragma once

#include <onnx/onnx_pb.h>

#include <set>
#include <string>

namespace memplan::onnx_io {

// The ai.onnx ops ORT 1.30 expands (those with a function body in ONNX 1.12 and no kernel in ORT 1.30's
// CPU or CUDA provider), checked against ORT by the interop sweep over ONNX's backend test models.
const std::set<std::string>& ort_inlined_ops();

// Expands every call of a model-local function, then every such op, subgraphs first, round after round (a body may
// call another function), as ORT does: the call node is removed, the body's nodes are appended to the graph's node list
// in body order, its names prefixed with a unique "_inlfunc_<OpType>" (ORT's GenerateNodeName), Constant nodes kept
// (memplan folds them into initializers as ORT does). Needs the model's types (run ONNX inference first); returns how
// many nodes were expanded and sets `name_counter` to ORT's name generator after it.
int inline_ort_functions(onnx::ModelProto& model, int& name_counter, const std::string& path);

}  // namespace memplan::onnx_io
