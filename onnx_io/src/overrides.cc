// Parsing the container and applying the user's shape overrides to the declared types.
#include <algorithm>
#include <set>
#include <sstream>

#include "memplan/error.h"
#include "memplan/file_kind.h"
#include "memplan/suggest.h"
#include "model_reader.h"
#include "proto_model.h"

namespace memplan::onnx_io {
namespace {

std::string join_dims(const std::vector<int64_t>& dims) {
  std::ostringstream os;
  for (size_t i = 0; i < dims.size(); ++i) os << (i ? "x" : "") << dims[i];
  return os.str();
}

// Calls fn(value_info) on every ValueInfoProto of the graph and, recursively, of its subgraphs.
template <typename Fn>
void for_each_value_info(onnx::GraphProto& g, Fn&& fn) {
  for (auto* list : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()})
    for (auto& vi : *list) fn(vi);
  for (auto& node : *g.mutable_node())
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) for_each_value_info(*attr.mutable_g(), fn);
      for (auto& sub : *attr.mutable_graphs()) for_each_value_info(sub, fn);
    }
}

}  // namespace

onnx::ModelProto parse_model(const std::string& path, const std::string& bytes) {
  expect_file_kind(bytes, path, FileKind::kOnnxModel);
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    if (nests_too_deep(bytes)) fail_too_deep(path);
    fail_input(path,
               "not a valid ONNX model: protobuf parsing failed (the file is truncated, corrupt, or not an "
               ".onnx file)");
  }
  if (!model.has_graph())
    fail_input(path, "the protobuf has no graph; this is not an ONNX model (or it was written incompletely)");
  if (model.ir_version() <= 0)
    fail_input(path, "the model has no IR version (ir_version " + std::to_string(model.ir_version()) +
                         "); this is not an ONNX model or it is corrupt");
  return model;
}

std::vector<std::string> apply_overrides(onnx::ModelProto& model, const ShapeOverrides& overrides,
                                         const std::string& path) {
  std::vector<std::string> warnings;
  onnx::GraphProto& graph = *model.mutable_graph();

  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  for (const auto& [name, dims] : overrides.input_shapes) {
    onnx::ValueInfoProto* input = nullptr;
    std::string available;
    for (int i = 0; i < graph.input_size(); ++i) {
      onnx::ValueInfoProto& vi = *graph.mutable_input(i);
      if (initializers.count(vi.name())) continue;
      if (vi.name() == name) {
        input = &vi;
      }
      available += (available.empty() ? "" : ", ") + vi.name();
    }
    if (!input)
      throw Error(ExitCode::kUsage, path + ": --input-shape names '" + name +
                                        "', which is not a graph input (inputs: " + available + ")");
    auto* tensor = input->mutable_type()->mutable_tensor_type();
    if (tensor->has_shape()) {
      const auto& declared = tensor->shape();
      if (declared.dim_size() != static_cast<int>(dims.size()))
        throw Error(ExitCode::kUsage, path + ": --input-shape " + name + "=" + join_dims(dims) + " has rank " +
                                          std::to_string(dims.size()) + " but the input is declared with rank " +
                                          std::to_string(declared.dim_size()));
      for (int i = 0; i < declared.dim_size(); ++i)
        if (declared.dim(i).has_dim_value() && declared.dim(i).dim_value() != dims[i])
          throw Error(ExitCode::kUsage, path + ": --input-shape " + name + " sets axis " + std::to_string(i) + " to " +
                                            std::to_string(dims[i]) + " but the model fixes it at " +
                                            std::to_string(declared.dim(i).dim_value()));
    }
    auto* shape = tensor->mutable_shape();
    shape->clear_dim();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  }

  // Every --trip-count must name a Loop of the main graph (where the shape pass reads it).
  if (!overrides.trip_counts.empty()) {
    std::vector<std::string> loops;
    for (const auto& n : graph.node())
      if (is_onnx_op(n, "Loop")) loops.push_back(n.name());
    for (const auto& [name, count] : overrides.trip_counts) {
      if (std::find(loops.begin(), loops.end(), name) != loops.end()) continue;
      std::string list;
      for (const auto& l : loops) list += (list.empty() ? "" : ", ") + (l.empty() ? std::string("(unnamed)") : l);
      throw Error(ExitCode::kUsage, path + ": --trip-count " + name + "=" + std::to_string(count) +
                                        ": the main graph has no Loop node named '" + name + "'." +
                                        did_you_mean(name, loops) +
                                        (loops.empty() ? " It has no Loop nodes." : " Its Loop nodes: " + list + "."));
    }
  }

  // Every --dim must name a dimension of the model: a misspelt name would leave the dim free and the plan
  // silently without its activations.
  std::set<std::string> params;
  for_each_value_info(graph, [&](const onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    for (const auto& dim : vi.type().tensor_type().shape().dim())
      if (dim.has_dim_param()) params.insert(dim.dim_param());
  });
  // The inputs' free dims are the ones a user sets; names ONNX inference made up (Add1663_dim_0) only count
  // for the typo check.
  std::set<std::string> input_params;
  for (const auto& vi : graph.input())
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape())
      for (const auto& dim : vi.type().tensor_type().shape().dim())
        if (dim.has_dim_param()) input_params.insert(dim.dim_param());
  for (const auto& [name, value] : overrides.dims) {
    if (params.count(name)) continue;
    if (overrides.allow_unmatched_dims) {
      warnings.push_back("--dim " + name + ": no value in the model has a dimension named '" + name + "'");
      continue;
    }
    std::vector<std::string> names(input_params.begin(), input_params.end());
    std::string hint = did_you_mean(name, names);
    if (hint.empty()) hint = did_you_mean(name, {params.begin(), params.end()});
    std::string list;
    for (const auto& p : names) list += (list.empty() ? "" : ", ") + p;
    throw Error(ExitCode::kUsage, path + ": --dim " + name + ": the model has no dimension named '" + name + "'." +
                                      hint +
                                      (names.empty() ? " Its inputs have no named (free) dimensions; --input-shape "
                                                       "fixes a graph input's whole shape."
                                                     : " The free dimensions of its inputs: " + list + "."));
  }
  if (!overrides.dims.empty()) {
    auto overridden = [&](const onnx::TensorShapeProto_Dimension& d) {
      return d.has_dim_param() && overrides.dims.count(d.dim_param());
    };
    for_each_value_info(graph, [&](onnx::ValueInfoProto& vi) {
      // Read first, written only where a dim changes (a mutable accessor writes too).
      if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
      const auto& dims = vi.type().tensor_type().shape().dim();
      if (std::none_of(dims.begin(), dims.end(), overridden)) return;
      for (auto& dim : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
        if (overridden(dim)) dim.set_dim_value(overrides.dims.at(dim.dim_param()));
    });
  }
  return warnings;
}

}  // namespace memplan::onnx_io
