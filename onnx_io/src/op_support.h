// Internal to onnx_io/: what in a model memplan has no rules for, or ONNX Runtime refuses when it loads it, said as
// warnings before anything is planned: opset imports past the newest each knows, and nodes whose op has no schema
// at the opset the model imports (custom ops, misspelt ops, ops newer than the model's opset, domains not imported).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace memplan::onnx_io {

// The newest opset ONNX Runtime 1.30 loads of each domain it checks (model_load_utils.h's ValidateOpsetForDomain,
// measured: a model importing one more is refused); 0 for a domain it does not check.
int ort_newest_opset(const std::string& domain);

// One warning per finding, each naming the op, how many nodes use it and the first of them (main graph first, then
// subgraphs); calls of the model's own functions count as known. Without the model's path (the caller adds it).
std::vector<std::string> op_support_warnings(const onnx::ModelProto& model);

}  // namespace memplan::onnx_io
