// ONNX Runtime's contrib ops in memplan's loader (contrib_schemas.cc): what the ORT interop tests cannot vary - the
// NCHWc block size read from the model or given, and a rule that needs a value memplan's shape pass computes.
#include <catch2/catch.hpp>

#include "memplan/onnx_io/load.h"
#include "model_builder.h"

using namespace memplan;
using namespace memplan::testing;

namespace {

std::vector<int64_t> dims_of(const Model& m, const std::string& name) {
  std::vector<int64_t> out;
  for (const auto& d : m.graph.find_value(name)->dims) out.push_back(d.value);
  return out;
}

void add_opset(onnx::ModelProto& model, const std::string& domain) {
  auto* op = model.add_opset_import();
  op->set_domain(domain);
  op->set_version(1);
}

// x (1, 20, 5, 5) -> ReorderInput -> NCHWc Conv (1x1, `conv_channels` padded outputs) -> ReorderOutput (24 channels)
onnx::ModelProto nchwc_model(int64_t conv_channels) {
  auto reorder_in = make_node("ReorderInput", {"x"}, {"blocked"}, "in");
  auto conv = make_node("Conv", {"blocked", "w"}, {"conv"}, "conv");
  auto reorder_out = make_node("ReorderOutput", {"conv"}, {"y"}, "out");
  for (auto* n : {&reorder_in, &conv, &reorder_out}) n->set_domain("com.microsoft.nchwc");
  auto* channels = reorder_out.add_attribute();
  channels->set_name("channels");
  channels->set_type(onnx::AttributeProto::INT);
  channels->set_i(24);
  auto model = make_model({reorder_in, conv, reorder_out}, {tensor_info("x", 1, {"1", "20", "5", "5"})},
                          {tensor_info("y", 1, {})}, 14);
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  *model.mutable_graph()->add_initializer() = header_only_initializer("w", {conv_channels, 32, 1, 1});
  add_opset(model, "com.microsoft.nchwc");
  return model;
}

}  // namespace

TEST_CASE("the NCHWc block size comes from the model's convolutions unless given", "[contrib][shapes]") {
  // Output channels padded to 32 fit a block of 16 (ORT on AVX-512): 20 channels pad to 32.
  const std::string wide = write_temp_model("nchwc16.onnx", nchwc_model(32));
  CHECK(dims_of(onnx_io::load_model(wide), "blocked") == std::vector<int64_t>{1, 32, 5, 5});
  // 24 is no multiple of 16: ORT ran with a block of 8 (AVX2), and 20 channels pad to 24.
  const std::string narrow = write_temp_model("nchwc8.onnx", nchwc_model(24));
  CHECK(dims_of(onnx_io::load_model(narrow), "blocked") == std::vector<int64_t>{1, 24, 5, 5});
  // --nchwc-block-size wins over the model.
  onnx_io::LoadOptions eight;
  eight.nchwc_block_size = 8;
  CHECK(dims_of(onnx_io::load_model(wide, eight), "blocked") == std::vector<int64_t>{1, 24, 5, 5});
  // ReorderOutput restores the model's channel count.
  CHECK(dims_of(onnx_io::load_model(wide), "y") == std::vector<int64_t>{1, 24, 5, 5});
}

TEST_CASE("GroupQueryAttention's present buffer grows to a total length the shape pass computes", "[contrib][shapes]") {
  // As ORT's LLM exports compute it: total_sequence_length = the attention mask's width, as an int32 scalar.
  std::vector<onnx::NodeProto> nodes = {
      make_node("Shape", {"mask"}, {"mask_shape"}, "shape"),
      make_node("Gather", {"mask_shape", "one"}, {"width"}, "width"), make_node("Cast", {"width"}, {"total"}, "cast"),
      make_node("GroupQueryAttention", {"q", "k", "v", "past_k", "past_v", "seqlens", "total"},
                {"out", "present_k", "present_v"}, "gqa")};
  auto* to = nodes[2].add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::INT32);
  nodes[3].set_domain("com.microsoft");
  for (auto [name, value] : {std::pair{"num_heads", 4}, std::pair{"kv_num_heads", 2}}) {
    auto* a = nodes[3].add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }
  auto model = make_model(nodes,
                          {tensor_info("q", 1, {"1", "S", "64"}), tensor_info("k", 1, {"1", "S", "32"}),
                           tensor_info("v", 1, {"1", "S", "32"}), tensor_info("past_k", 1, {"1", "2", "P", "16"}),
                           tensor_info("past_v", 1, {"1", "2", "P", "16"}), tensor_info("mask", 7, {"1", "T"}),
                           tensor_info("seqlens", 6, {"1"})},
                          {tensor_info("out", 1, {}), tensor_info("present_k", 1, {})}, 17);
  for (auto& o : *model.mutable_graph()->mutable_output()) o.mutable_type()->mutable_tensor_type()->clear_shape();
  onnx::TensorProto one;
  one.set_name("one");
  one.set_data_type(onnx::TensorProto::INT64);
  one.add_int64_data(1);
  *model.mutable_graph()->add_initializer() = one;
  add_opset(model, "com.microsoft");
  const std::string path = write_temp_model("gqa.onnx", model);
  onnx_io::LoadOptions options;
  options.overrides.dims = {{"S", 4}, {"P", 3}, {"T", 7}};
  Model m = onnx_io::load_model(path, options);
  CHECK(dims_of(m, "out") == std::vector<int64_t>{1, 4, 64});
  CHECK(dims_of(m, "present_k") == std::vector<int64_t>{1, 2, 7, 16});  // max(past 3, total 7)
  CHECK(dims_of(m, "present_v") == std::vector<int64_t>{1, 2, 7, 16});
  options.overrides.dims["P"] = 9;  // a past buffer longer than the total: it keeps its length
  CHECK(dims_of(onnx_io::load_model(path, options), "present_k") == std::vector<int64_t>{1, 2, 9, 16});
}
