// Internal to onnx_io/: the structural checks a model passes before any of it reaches libonnx's shape
// inference, which trusts its input (a Scan without num_scan_inputs dereferences a null attribute).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace memplan::onnx_io {

// Throws Error(kBadInput) naming `path`, the node and what is wrong: an attribute the op's schema requires is
// missing, an attribute has another type than its schema declares, a node has more or fewer inputs or outputs
// than its schema allows, a dim or initializer dim is negative, a name is not valid UTF-8. Subgraphs too.
// ONNX Runtime refuses such models when it loads them (Graph::Resolve checks nodes against their schemas).
void check_before_inference(const onnx::ModelProto& model, const std::string& path);

}  // namespace memplan::onnx_io
