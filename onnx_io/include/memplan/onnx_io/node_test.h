// Reads ONNX's backend node tests (libonnx-testdata: a one-node model.onnx with input_N.pb and
// output_N.pb tensors) into const_eval's plain types, so the evaluators can be checked against them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "memplan/onnx_io/const_eval.h"

namespace memplan::onnx_io {

struct SingleNode {
  std::string op_type, domain;
  int opset = 0;  // of the node's domain
  EvalAttributes attrs;
  std::vector<std::string> inputs, outputs;  // "" for an absent optional one
  // The element types the graph declares for its inputs and outputs, in the order of the test's
  // input_N.pb and output_N.pb files (0 where not a tensor).
  std::vector<DType> input_types, output_types;
};

// The model's node when its main graph has exactly one; std::nullopt otherwise. Throws Error(kBadInput)
// when the file is not a model.
std::optional<SingleNode> read_single_node(const std::string& model_path);

// A serialized TensorProto file as a Tensor; std::nullopt for what read_tensor cannot hold. ONNX 1.12's
// test data stores bfloat16 tensors as their uint16 bit patterns: with `declared` bfloat16 (or float16),
// such a uint16 tensor is read as the declared type.
std::optional<Tensor> read_tensor_file(const std::string& path, int64_t max_elements, DType declared = 0);

}  // namespace memplan::onnx_io
