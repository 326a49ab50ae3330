#include "model_builder.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace memplan::testing {

onnx::ValueInfoProto tensor_info(const std::string& name, int elem_type, const std::vector<std::string>& dims) {
  onnx::ValueInfoProto vi;
  vi.set_name(name);
  auto* t = vi.mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  auto* shape = t->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (!d.empty() && (std::isdigit(static_cast<unsigned char>(d[0])) || d[0] == '-'))
      dim->set_dim_value(std::stoll(d));
    else
      dim->set_dim_param(d);
  }
  return vi;
}

onnx::NodeProto make_node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (const auto& i : inputs) n.add_input(i);
  for (const auto& o : outputs) n.add_output(o);
  return n;
}

onnx::ModelProto make_model(const std::vector<onnx::NodeProto>& nodes, const std::vector<onnx::ValueInfoProto>& inputs,
                            const std::vector<onnx::ValueInfoProto>& outputs, int opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("test");
  for (const auto& n : nodes) *g->add_node() = n;
  for (const auto& i : inputs) *g->add_input() = i;
  for (const auto& o : outputs) *g->add_output() = o;
  return m;
}

onnx::TensorProto header_only_initializer(const std::string& name, const std::vector<int64_t>& dims, int elem_type) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(elem_type);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

namespace {

// The test process's own folder of temporary files, removed when the process ends (ctest runs each test case in a
// process of its own: left behind, they filled /tmp with one folder per case). Only by the process that made it: a
// forked child that exits normally must not remove its parent's files.
struct TempFolder {
  std::filesystem::path path = std::filesystem::temp_directory_path() / ("memplan-tests-" + std::to_string(::getpid()));
  pid_t owner = ::getpid();
  ~TempFolder() {
    std::error_code ignored;
    if (::getpid() == owner) std::filesystem::remove_all(path, ignored);
  }
};

}  // namespace

std::string write_temp(const std::string& file_name, const std::string& bytes) {
  static const TempFolder folder;
  const auto& dir = folder.path;
  std::filesystem::create_directories(dir);
  auto path = (dir / file_name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string write_temp_model(const std::string& file_name, const onnx::ModelProto& model) {
  return write_temp(file_name, model.SerializeAsString());
}

}  // namespace memplan::testing
