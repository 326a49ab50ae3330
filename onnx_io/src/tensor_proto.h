// Internal to onnx_io/: conversions between ONNX's protobuf tensors and attributes and the plain Tensor
// and EvalAttributes that const_eval works on.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "memplan/onnx_io/const_eval.h"

namespace memplan::onnx_io {

// A TensorProto's inline data (numeric, bool, float16 and bfloat16 types; at most `max_elements`);
// std::nullopt for external data, strings, data whose length does not match the dims, larger tensors.
std::optional<Tensor> read_tensor(const onnx::TensorProto& t, int64_t max_elements);

// The TensorProto holding `t` under `name`; std::nullopt for element types it cannot hold.
std::optional<onnx::TensorProto> to_tensor_proto(const std::string& name, const Tensor& t);
// Whether to_tensor_proto holds tensors of element type `dtype` (asked without making one).
bool tensor_proto_holds(int32_t dtype);

// The attributes const_eval reads, taken from a NodeProto.
EvalAttributes eval_attributes(const onnx::NodeProto& node, int64_t max_elements);

// A Constant node's value, when inline and small.
std::optional<Tensor> constant_value(const onnx::NodeProto& node, int64_t max_elements);

}  // namespace memplan::onnx_io
