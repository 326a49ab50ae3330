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

namespace {

void set_int(onnx::NodeProto& node, const std::string& name, int64_t value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void set_ints(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

onnx::TensorProto int_scalar(const std::string& name, int elem_type, int64_t value) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(elem_type);
  if (elem_type == onnx::TensorProto::INT64)
    t.add_int64_data(value);
  else
    t.add_int32_data(static_cast<int32_t>(value));
  return t;
}

}  // namespace

TEST_CASE("the CUDA provider's contrib ops get the shapes of ORT's schemas", "[contrib][shapes]") {
  // No CPU kernel runs these (tests/interop checks the CPU provider's ops against ORT): the shapes ORT's schemas and
  // CUDA kernels give, for the transformer optimizer's and the diffusion models' fusions and the packed formats.
  std::vector<onnx::NodeProto> nodes = {
      make_node("BiasSplitGelu", {"x64", "b64"}, {"split_gelu"}, "split_gelu"),
      make_node("BiasSoftmax", {"x64", "b64"}, {"bias_softmax"}, "bias_softmax"),
      make_node("BiasAdd", {"x64", "b64", "x64"}, {"bias_add"}, "bias_add"),
      make_node("GroupNorm", {"nhwc", "g4", "g4"}, {"group_norm"}, "group_norm"),
      make_node("SkipGroupNorm", {"nhwc", "g4", "g4", "nhwc"}, {"skip_group_norm", "skip_sum"}, "skip_group_norm"),
      make_node("NhwcConv", {"nhwc", "nhwc_w"}, {"nhwc_conv"}, "nhwc_conv"),
      make_node("GemmFastGelu", {"x16", "w16x64"}, {"gemm_gelu"}, "gemm_gelu"),
      make_node("RelativePositionBias", {"table", "q_len", "k_len"}, {"rel_bias"}, "rel_bias"),
      make_node("GatedRelativePositionBias", {"x16", "b16", "rel_pos", "gate_w", "gate_b", "eco_a"}, {"gated_bias"},
                "gated_bias"),
      make_node("RemovePadding", {"x16", "counts"}, {"packed", "token_offset", "cum_len", "max_len"}, "remove"),
      make_node("RestorePadding", {"tokens", "token_offset"}, {"restored"}, "restore"),
      make_node("PackedAttention", {"tokens", "w16x48", "b48", "token_offset", "cum_len"}, {"packed_att"},
                "packed_att"),
      make_node("PackedMultiHeadAttention", {"tokens", "tokens", "tokens", "", "token_offset", "cum_len"},
                {"packed_mha"}, "packed_mha"),
      make_node("DecoderMaskedSelfAttention", {"step", "w16x48", "b48", "", "past5", "", "past_len"},
                {"dmsa", "dmsa_present"}, "dmsa"),
      make_node("SparseAttention", {"q64", "kv32", "kv32", "cache", "cache", "rows", "cols", "total", "key_lens"},
                {"sparse", "sparse_k", "sparse_v"}, "sparse"),
      make_node("MoE", {"x16", "router", "fc1", "", "fc2"}, {"moe"}, "moe"),
      make_node("ComplexMul", {"x16", "b16"}, {"complex"}, "complex"),
  };
  for (auto& n : nodes) n.set_domain("com.microsoft");
  set_int(nodes[3], "groups", 2);
  set_int(nodes[4], "groups", 2);
  set_ints(nodes[5], "strides", {2, 2});
  set_ints(nodes[5], "pads", {1, 1, 1, 1});
  for (size_t k : {8u, 11u, 12u, 13u}) set_int(nodes[k], "num_heads", 4);
  set_int(nodes[14], "num_heads", 4);
  set_int(nodes[14], "kv_num_heads", 2);
  set_int(nodes[14], "sparse_block_size", 8);
  set_int(nodes[15], "k", 1);
  std::vector<onnx::ValueInfoProto> inputs = {tensor_info("x64", 1, {"2", "5", "64"}),
                                              tensor_info("b64", 1, {"64"}),
                                              tensor_info("nhwc", 1, {"1", "9", "9", "4"}),
                                              tensor_info("g4", 1, {"4"}),
                                              tensor_info("x16", 1, {"2", "5", "16"}),
                                              tensor_info("b16", 1, {"16"}),
                                              tensor_info("rel_pos", 1, {"1", "4", "5", "5"}),
                                              tensor_info("gate_w", 1, {"4", "8"}),
                                              tensor_info("gate_b", 1, {"8"}),
                                              tensor_info("eco_a", 1, {"1", "4", "1", "1"}),
                                              tensor_info("counts", 6, {"2"}),
                                              tensor_info("tokens", 1, {"7", "16"}),
                                              tensor_info("step", 1, {"2", "1", "16"}),
                                              tensor_info("past5", 1, {"2", "2", "4", "8", "4"}),
                                              tensor_info("past_len", 6, {"1"}),
                                              tensor_info("q64", 1, {"1", "4", "64"}),
                                              tensor_info("kv32", 1, {"1", "4", "32"}),
                                              tensor_info("cache", 1, {"1", "2", "16", "16"}),
                                              tensor_info("rows", 6, {"1", "3"}),
                                              tensor_info("cols", 6, {"1", "3"}),
                                              tensor_info("key_lens", 6, {"1"}),
                                              tensor_info("router", 1, {"10", "3"}),
                                              tensor_info("fc1", 1, {"3", "16", "32"}),
                                              tensor_info("fc2", 1, {"3", "32", "16"})};
  std::vector<onnx::ValueInfoProto> outputs;
  for (const auto& n : nodes)
    for (const auto& o : n.output())
      outputs.push_back(tensor_info(o, o == "token_offset" || o == "cum_len" || o == "max_len" ? 6 : 1, {}));
  auto model = make_model(nodes, inputs, outputs, 17);
  for (auto& o : *model.mutable_graph()->mutable_output()) o.mutable_type()->mutable_tensor_type()->clear_shape();
  auto* inits = model.mutable_graph();
  *inits->add_initializer() = header_only_initializer("nhwc_w", {8, 3, 3, 4});
  *inits->add_initializer() = header_only_initializer("w16x64", {16, 64});
  *inits->add_initializer() = header_only_initializer("w16x48", {16, 48});
  *inits->add_initializer() = header_only_initializer("b48", {48});
  *inits->add_initializer() = header_only_initializer("table", {32, 4});
  *inits->add_initializer() = int_scalar("q_len", onnx::TensorProto::INT64, 5);
  *inits->add_initializer() = int_scalar("k_len", onnx::TensorProto::INT64, 7);
  *inits->add_initializer() = int_scalar("total", onnx::TensorProto::INT32, 4);
  add_opset(model, "com.microsoft");
  const Model m = onnx_io::load_model(write_temp_model("cuda_contrib.onnx", model));
  using D = std::vector<int64_t>;
  CHECK(dims_of(m, "split_gelu") == D{2, 5, 32});
  CHECK(dims_of(m, "bias_softmax") == D{2, 5, 64});
  CHECK(dims_of(m, "bias_add") == D{2, 5, 64});
  CHECK(dims_of(m, "group_norm") == D{1, 9, 9, 4});
  CHECK(dims_of(m, "skip_sum") == D{1, 9, 9, 4});
  CHECK(dims_of(m, "nhwc_conv") == D{1, 5, 5, 8});
  CHECK(dims_of(m, "gemm_gelu") == D{2, 5, 64});
  CHECK(dims_of(m, "rel_bias") == D{1, 4, 5, 7});
  CHECK(dims_of(m, "gated_bias") == D{2, 4, 5, 5});
  CHECK(dims_of(m, "token_offset") == D{2, 5});
  CHECK(dims_of(m, "cum_len") == D{3});
  CHECK(dims_of(m, "max_len") == D{1});
  const Value* packed = m.graph.find_value("packed");
  REQUIRE(packed != nullptr);
  CHECK_FALSE(packed->bytes);  // as many tokens as the mask lets through: known at run time only
  CHECK(packed->unknown_reason.find("data-dependent") != std::string::npos);
  CHECK(dims_of(m, "restored") == D{2, 5, 16});
  CHECK(dims_of(m, "packed_att") == D{7, 16});
  CHECK(dims_of(m, "packed_mha") == D{7, 16});
  CHECK(dims_of(m, "dmsa") == D{2, 1, 16});
  CHECK(dims_of(m, "dmsa_present") == D{2, 2, 4, 8, 4});  // the past buffer, shared
  CHECK(dims_of(m, "sparse") == D{1, 4, 64});
  CHECK(dims_of(m, "sparse_k") == D{1, 2, 16, 16});  // the cache buffer, shared (max length 16)
  CHECK(dims_of(m, "moe") == D{2, 5, 16});
  CHECK(dims_of(m, "complex") == D{2, 5, 16});
}

TEST_CASE("a com.microsoft Unique is data-dependent, named so", "[contrib][shapes]") {
  auto node = make_node("Unique", {"x"}, {"y", "idx", "counts"}, "unique");
  node.set_domain("com.microsoft");
  auto model = make_model({node}, {tensor_info("x", 1, {"6"})},
                          {tensor_info("y", 1, {}), tensor_info("idx", 7, {}), tensor_info("counts", 7, {})}, 17);
  for (auto& o : *model.mutable_graph()->mutable_output()) o.mutable_type()->mutable_tensor_type()->clear_shape();
  add_opset(model, "com.microsoft");
  onnx_io::LoadOptions options;
  const Model m = onnx_io::load_model(write_temp_model("ms_unique.onnx", model), options);
  const Value* y = m.graph.find_value("y");
  REQUIRE(y != nullptr);
  CHECK_FALSE(y->bytes);
  CHECK(y->unknown_reason.find("data-dependent") != std::string::npos);
}

TEST_CASE("hostile contrib attributes and dims stay within int64: refused or unknown, never overflowed",
          "[contrib][shapes][hostile]") {
  // A dilated kernel whose extent passes 2^40 (kernel 2^39 x dilation 2^39 overflows int64), and a value of 2^20
  // heads of 2^21 each (a width past 2^40): the rules leave the outputs unknown (the UBSan build checks the
  // arithmetic).
  auto pool = make_node("NhwcMaxPool", {"x"}, {"pooled"}, "pool");
  pool.set_domain("com.microsoft");
  set_ints(pool, "kernel_shape", {INT64_C(1) << 39, 3});
  set_ints(pool, "dilations", {INT64_C(1) << 39, 1});
  auto mha = make_node("DecoderMaskedMultiHeadAttention", {"q", "k", "v"}, {"attended"}, "mha");
  mha.set_domain("com.microsoft");
  set_int(mha, "num_heads", 2);
  auto model = make_model({pool, mha},
                          {tensor_info("x", 2, {"1", "9", "9", "4"}), tensor_info("q", 1, {"1", "1", "6"}),
                           tensor_info("k", 1, {"1", "1", "6"}), tensor_info("v", 1, {"1", "1048576", "1", "2097152"})},
                          {tensor_info("pooled", 2, {}), tensor_info("attended", 1, {})}, 17);
  for (auto& o : *model.mutable_graph()->mutable_output()) o.mutable_type()->mutable_tensor_type()->clear_shape();
  add_opset(model, "com.microsoft");
  const Model m = onnx_io::load_model(write_temp_model("hostile_contrib.onnx", model));
  CHECK_FALSE(m.graph.find_value("pooled")->bytes);
  const Value* attended = m.graph.find_value("attended");
  REQUIRE(attended != nullptr);
  REQUIRE(attended->dims.size() == 3);
  CHECK_FALSE(attended->dims[2].known());
}

TEST_CASE("ops of ONNX opsets 18-24 get their own versions' shapes", "[contrib][shapes]") {
  // A layer norm as exporters write it at opset 18 (ReduceMean's axes an input), a dilated AveragePool (opset 19),
  // Split by num_outputs (18) and Gelu (20): libonnx 1.12 refused the first, sized the second as if undilated and
  // knew neither of the others.
  auto axes = header_only_initializer("axes", {1}, onnx::TensorProto::INT64);
  axes.add_int64_data(-1);
  auto mean = make_node("ReduceMean", {"x", "axes"}, {"mean"}, "mean");
  auto centred = make_node("Sub", {"x", "mean"}, {"centred"}, "centred");
  auto gelu = make_node("Gelu", {"centred"}, {"gelu"}, "gelu");
  auto split = make_node("Split", {"gelu"}, {"a", "b", "c"}, "split");
  auto* parts = split.add_attribute();
  parts->set_name("num_outputs");
  parts->set_type(onnx::AttributeProto::INT);
  parts->set_i(3);
  auto* axis = split.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(2);
  auto pool = make_node("AveragePool", {"image"}, {"pooled"}, "pool");
  for (auto [name, values] :
       {std::pair{"kernel_shape", std::vector<int64_t>{3, 3}}, std::pair{"dilations", std::vector<int64_t>{2, 2}}}) {
    auto* a = pool.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  auto model = make_model(
      {mean, centred, gelu, split, pool},
      {tensor_info("x", 1, {"N", "5", "16"}), tensor_info("image", 1, {"1", "2", "9", "9"})},
      {tensor_info("a", 1, {}), tensor_info("b", 1, {}), tensor_info("c", 1, {}), tensor_info("pooled", 1, {})}, 20);
  *model.mutable_graph()->add_initializer() = axes;
  for (auto& out : *model.mutable_graph()->mutable_output()) out.mutable_type()->mutable_tensor_type()->clear_shape();
  onnx_io::LoadOptions options;
  options.overrides.dims = {{"N", 2}};
  const Model m = onnx_io::load_model(write_temp_model("opset20.onnx", model), options);
  CHECK(dims_of(m, "mean") == std::vector<int64_t>{2, 5, 1});
  CHECK(dims_of(m, "gelu") == std::vector<int64_t>{2, 5, 16});
  CHECK(dims_of(m, "a") == std::vector<int64_t>{2, 5, 6});
  CHECK(dims_of(m, "c") == std::vector<int64_t>{2, 5, 4});
  CHECK(dims_of(m, "pooled") == std::vector<int64_t>{1, 2, 5, 5});
}

TEST_CASE("the rules of ONNX opsets 18-24 refuse what ORT refuses, naming it", "[contrib][hostile]") {
  auto ints = [](const std::string& name, const std::vector<int64_t>& values) {
    auto t = header_only_initializer(name, {static_cast<int64_t>(values.size())}, onnx::TensorProto::INT64);
    for (int64_t v : values) t.add_int64_data(v);
    return t;
  };
  auto load = [](onnx::ModelProto model, const std::string& file) {
    for (auto& out : *model.mutable_graph()->mutable_output()) out.mutable_type()->mutable_tensor_type()->clear_shape();
    return onnx_io::load_model(write_temp_model(file, model));
  };
  // AffineGrid's output dims come from its size input's data: a negative one is an error naming the value.
  auto grid = make_model({make_node("AffineGrid", {"theta", "size"}, {"grid"}, "grid")},
                         {tensor_info("theta", 1, {"2", "2", "3"})}, {tensor_info("grid", 1, {})}, 20);
  *grid.mutable_graph()->add_initializer() = ints("size", {2, 3, -5, 6});
  CHECK_THROWS_WITH(load(grid, "affine_grid_negative.onnx"), Catch::Contains("negative dimension -5"));
  // GroupNormalization without num_groups is malformed (ORT refuses it; its function body cannot be built).
  auto norm =
      make_model({make_node("GroupNormalization", {"x", "scale", "bias"}, {"y"}, "norm")},
                 {tensor_info("x", 1, {"2", "6", "4"}), tensor_info("scale", 1, {"6"}), tensor_info("bias", 1, {"6"})},
                 {tensor_info("y", 1, {})}, 21);
  CHECK_THROWS_WITH(load(norm, "group_norm_no_groups.onnx"), Catch::Contains("required attribute 'num_groups'"));
  // A 3-D Attention without head counts has no rule's shape: the output stays unsized, and says where it stops.
  auto attention = make_model({make_node("Attention", {"q", "k", "v"}, {"y"}, "attention")},
                              {tensor_info("q", 1, {"2", "5", "8"}), tensor_info("k", 1, {"2", "5", "8"}),
                               tensor_info("v", 1, {"2", "5", "8"})},
                              {tensor_info("y", 1, {})}, 23);
  const Model m = load(attention, "attention_no_heads.onnx");
  const Value* y = m.graph.find_value("y");
  REQUIRE(y != nullptr);
  CHECK_FALSE(y->bytes.has_value());
  CHECK_THAT(y->unknown_reason, Catch::Contains("node 'attention' (Attention)"));
  // Col2Im with an empty block (ORT refuses it) gets no shape either, rather than one made up.
  auto col2im = make_model({make_node("Col2Im", {"x", "image", "block"}, {"y"}, "col2im")},
                           {tensor_info("x", 1, {"1", "12", "20"})}, {tensor_info("y", 1, {})}, 18);
  *col2im.mutable_graph()->add_initializer() = ints("image", {5, 6});
  *col2im.mutable_graph()->add_initializer() = ints("block", {0, 0});
  const Model c = load(col2im, "col2im_empty_block.onnx");
  REQUIRE(c.graph.find_value("y") != nullptr);
  CHECK_FALSE(c.graph.find_value("y")->bytes.has_value());
}
