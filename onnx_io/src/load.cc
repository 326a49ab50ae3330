#include "memplan/onnx_io/load.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <charconv>

#include "memplan/error.h"
#include "memplan/execution_order.h"
#include "memplan/file_io.h"
#include "memplan/graph_edit.h"
#include "function_inline.h"
#include "proto_model.h"
#include "shape_pass.h"

namespace memplan::onnx_io {
namespace {

int64_t parse_int(const std::string& text, const std::string& what) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || text.empty()) fail_usage(what + ": '" + text + "' is not an integer");
  if (v < 0) fail_usage(what + ": '" + text + "' is negative");
  return v;
}

std::pair<std::string, std::string> split_assignment(const std::string& text, const std::string& option) {
  auto eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    fail_usage(option + " expects NAME=VALUE, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace

std::pair<std::string, int64_t> parse_dim_override(const std::string& text) {
  auto [name, value] = split_assignment(text, "--dim");
  return {name, parse_int(value, "--dim " + name)};
}

std::pair<std::string, std::vector<int64_t>> parse_input_shape(const std::string& text) {
  auto [name, dims_text] = split_assignment(text, "--input-shape");
  std::vector<int64_t> dims;
  size_t start = 0;
  while (start <= dims_text.size()) {
    size_t sep = dims_text.find_first_of("x,", start);
    if (sep == std::string::npos) sep = dims_text.size();
    dims.push_back(parse_int(dims_text.substr(start, sep - start), "--input-shape " + name));
    start = sep + 1;
  }
  return {name, dims};
}

namespace {

struct PreparedModel {
  onnx::ModelProto proto;
  std::vector<std::string> warnings;
  ShapePassReport shapes;
  int functions_inlined = 0;
  int name_counter = 0;  // ORT's Graph::name_generator_ after the expansion
};

// `inline_functions`: ORT's load-time function expansion (for the graph ORT runs; `memplan shapes` keeps
// the model as written).
PreparedModel prepare(const std::string& path, const LoadOptions& options, bool inline_functions) {
  PreparedModel p{parse_model(path, read_file(path)), {}, {}};
  p.warnings = apply_overrides(p.proto, options.overrides, path);
  if (inline_functions && options.ort_rewrites) p.functions_inlined = inline_ort_functions(p.proto, p.name_counter);
  if (options.infer_shapes && options.complete_shapes) {
    p.shapes = complete_shapes(p.proto, path);
    p.warnings.insert(p.warnings.end(), p.shapes.warnings.begin(), p.shapes.warnings.end());
  } else if (options.infer_shapes) {
    // Strict mode off: a node ONNX cannot infer leaves its outputs unknown rather than failing the load.
    onnx::ShapeInferenceOptions inference(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);
    try {
      onnx::shape_inference::InferShapes(p.proto, onnx::OpSchemaRegistry::Instance(), inference);
    } catch (const std::exception& e) {
      p.warnings.push_back(std::string("ONNX shape inference stopped early: ") + e.what());
    }
  }
  return p;
}

// Says for each value of unknown size why: a data-dependent op, a value it depends on, a free dim of
// the graph inputs, or an op whose shape inference gave up. Subgraphs too: their inputs are set by the
// owning node at run time.
void explain_unknown_sizes(Graph& graph, const std::map<std::string, std::string>& dynamic) {
  for (Graph& sub : graph.subgraphs) {
    for (ValueId id : sub.inputs) {
      Value& v = sub.values[id];
      if (!v.bytes && v.is_tensor() && v.unknown_reason.empty())
        v.unknown_reason = "an input of the '" + sub.parent_attribute +
                           "' subgraph whose shape its owner sets at run time (per iteration or branch)";
    }
    explain_unknown_sizes(sub, dynamic);
  }
  std::vector<std::string> free_dims;
  for (ValueId id : graph.inputs)
    for (const Dim& d : graph.values[id].dims)
      if (!d.known() && !d.param.empty() && std::find(free_dims.begin(), free_dims.end(), d.param) == free_dims.end())
        free_dims.push_back(d.param);
  for (ValueId id : graph.inputs) {
    Value& v = graph.values[id];
    if (!v.bytes && v.is_tensor() && v.unknown_reason.empty())
      v.unknown_reason = v.has_shape ? "a graph input with free dimensions; fix them with --dim or --input-shape"
                                     : "a graph input without a declared shape; give it with --input-shape";
  }
  for (NodeId n : default_order(graph)) {
    const Node& node = graph.nodes[n];
    for (ValueId out : node.outputs) {
      if (out == kNoId) continue;
      Value& v = graph.values[out];
      if (v.bytes || v.type_kind == TypeKind::kSequence || v.type_kind == TypeKind::kMap ||
          v.type_kind == TypeKind::kOptional)
        continue;
      auto it = dynamic.find(v.name);
      if (it != dynamic.end()) {
        v.unknown_reason = it->second;
        continue;
      }
      for (ValueId in : node.inputs)
        if (in != kNoId && graph.values[in].unknown_reason.rfind("data-dependent", 0) == 0) {
          v.unknown_reason = "data-dependent: depends on '" + graph.values[in].name + "'";
          break;
        }
      if (!v.unknown_reason.empty()) continue;
      // An input of unknown size for another reason than free dims: the cause is upstream, name it.
      for (ValueId in : node.inputs) {
        const std::string& why = in == kNoId ? std::string() : graph.values[in].unknown_reason;
        if (why.empty() || why.rfind("depends on free dimensions", 0) == 0 || why.rfind("a graph input", 0) == 0)
          continue;
        v.unknown_reason =
            why.rfind("follows from", 0) == 0 ? why : "follows from '" + graph.values[in].name + "': " + why;
        break;
      }
      if (!v.unknown_reason.empty()) continue;
      if (!free_dims.empty()) {
        std::string names;
        for (const auto& d : free_dims) names += (names.empty() ? "" : ", ") + d;
        v.unknown_reason = "depends on free dimensions of the graph inputs (" + names + "); fix them with --dim";
      } else {
        v.unknown_reason = "no shape inferred for the output of " + (node.domain.empty() ? "" : node.domain + ".") +
                           node.op_type + " node '" + node.name +
                           "' (no shape rule for it in ONNX's inference or memplan's shape " +
                           "pass; a value_info for the output in the model would fix it)";
      }
    }
  }
}

int remove_casts_recursively(Graph& graph) {
  int n = remove_duplicate_casts(graph);
  for (Graph& sub : graph.subgraphs) n += remove_casts_recursively(sub);
  return n;
}

}  // namespace

Model load_model(const std::string& path, const LoadOptions& options) {
  PreparedModel p = prepare(path, options, /*inline_functions=*/true);
  Model model = build_model(p.proto, path);
  model.ort_functions_inlined = p.functions_inlined;
  model.graph.ort_name_counter = p.name_counter;
  model.warnings.insert(model.warnings.begin(), p.warnings.begin(), p.warnings.end());
  model.shape_pass_rounds = p.shapes.rounds;
  model.shape_pass_evaluated_nodes = p.shapes.evaluated_nodes;
  explain_unknown_sizes(model.graph, p.shapes.dynamic);
  if (options.ort_rewrites) model.ort_casts_removed = remove_casts_recursively(model.graph);
  return model;
}

void write_model_with_shapes(const std::string& path, const std::string& out_path, const LoadOptions& options) {
  PreparedModel p = prepare(path, options, /*inline_functions=*/false);
  build_model(p.proto, path);  // the same structural checks as every load
  std::string bytes;
  if (!p.proto.SerializeToString(&bytes)) fail_input(out_path, "cannot serialise the model (over 2 GiB?)");
  write_file_atomically(out_path, bytes);
}

}  // namespace memplan::onnx_io
