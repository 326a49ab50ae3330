#include "memplan/onnx_io/load.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <charconv>

#include "memplan/error.h"
#include "memplan/file_io.h"
#include "proto_model.h"

namespace memplan::onnx_io {
namespace {

int64_t parse_int(const std::string& text, const std::string& what) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || text.empty())
    fail_usage(what + ": '" + text + "' is not an integer");
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

Model load_model(const std::string& path, const LoadOptions& options) {
  onnx::ModelProto proto = parse_model(path, read_file(path));
  std::vector<std::string> warnings = apply_overrides(proto, options.overrides, path);

  if (options.infer_shapes) {
    // Strict mode off: a node ONNX cannot infer leaves its outputs unknown rather than failing the load.
    onnx::ShapeInferenceOptions inference(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);
    try {
      onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), inference);
    } catch (const std::exception& e) {
      warnings.push_back(std::string("ONNX shape inference stopped early: ") + e.what());
    }
  }

  Model model = build_model(proto, path);
  model.warnings.insert(model.warnings.begin(), warnings.begin(), warnings.end());
  return model;
}

}  // namespace memplan::onnx_io
