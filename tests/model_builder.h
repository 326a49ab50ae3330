// Builds small ONNX models in tests, so each case states its graph next to its assertions.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace memplan::testing {

struct Dims {
  std::vector<std::string> dims;  // "3" or a symbol "N"
};

onnx::ValueInfoProto tensor_info(const std::string& name, int elem_type, const std::vector<std::string>& dims);
onnx::NodeProto make_node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "");
onnx::ModelProto make_model(const std::vector<onnx::NodeProto>& nodes, const std::vector<onnx::ValueInfoProto>& inputs,
                            const std::vector<onnx::ValueInfoProto>& outputs, int opset = 14);
// A float initializer with the given dims and no data: memplan never reads weight bytes.
onnx::TensorProto header_only_initializer(const std::string& name, const std::vector<int64_t>& dims, int elem_type = 1);

// Writes bytes to a fresh file under the test temp directory and returns its path.
std::string write_temp(const std::string& file_name, const std::string& bytes);
std::string write_temp_model(const std::string& file_name, const onnx::ModelProto& model);

}  // namespace memplan::testing
