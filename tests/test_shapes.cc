// The shape pass on whole models: every size known once the input dims are fixed.
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "memplan/error.h"
#include "memplan/onnx_io/load.h"
#include "model_builder.h"
#include "shape_pass.h"

using namespace memplan;
using namespace memplan::testing;

namespace {

size_t unknown_sizes(const Graph& g) {
  size_t n = 0;
  for (const Value& v : g.values)
    if ((v.is_tensor() || v.type_kind == TypeKind::kUnknown) && !v.bytes) ++n;
  for (const Graph& sub : g.subgraphs) n += unknown_sizes(sub);
  return n;
}

onnx_io::LoadOptions fixed_dims() {
  onnx_io::LoadOptions o;
  o.overrides.dims = {{"N", 1}, {"batch", 1}, {"seq", 128}};
  o.overrides.allow_unmatched_dims = true;  // one set of defaults for every model
  return o;
}

}  // namespace

TEST_CASE("no value of unknown size on the shared models once dims are fixed", "[shapes]") {
  for (const char* name : {"resnet50", "mobilenet_v2", "densenet121", "inception_v3", "squeezenet1_1",
                           "efficientnet_b0", "vit_b_16", "bert_like", "gpt_like", "lstm2"}) {
    INFO(name);
    Model m = onnx_io::load_model(std::string(MEMPLAN_SHARED_DIR "/models/") + name + ".onnx", fixed_dims());
    CHECK(unknown_sizes(m.graph) == 0);
  }
}

TEST_CASE("the shape pass is what resolves vit, bert and gpt", "[shapes]") {
  // ONNX 1.12's inference alone leaves 38, 192 and 3 values without a size (shared/models/README.md).
  for (auto [name, onnx_alone] : {std::pair{"vit_b_16", 38}, {"bert_like", 192}, {"gpt_like", 3}}) {
    INFO(name);
    std::string path = std::string(MEMPLAN_SHARED_DIR "/models/") + name + ".onnx";
    auto without = fixed_dims();
    without.complete_shapes = false;
    CHECK(unknown_sizes(onnx_io::load_model(path, without).graph) == static_cast<size_t>(onnx_alone));
    Model m = onnx_io::load_model(path, fixed_dims());
    CHECK(unknown_sizes(m.graph) == 0);
    CHECK(m.shape_pass_evaluated_nodes > 0);
  }
}

TEST_CASE("no value of unknown size on the samples", "[shapes]") {
  for (const char* name : {"residual", "branches", "control_flow", "free_dims", "ort_observed"}) {
    INFO(name);
    Model m = onnx_io::load_model(std::string(MEMPLAN_SOURCE_DIR "/samples/") + name + ".onnx", fixed_dims());
    CHECK(unknown_sizes(m.graph) == 0);
  }
}

TEST_CASE("bert sizes follow the fixed dims", "[shapes]") {
  auto options = fixed_dims();
  options.overrides.dims = {{"batch", 2}, {"seq", 64}};
  Model m = onnx_io::load_model(MEMPLAN_SHARED_DIR "/models/bert_like.onnx", options);
  const Value* slice = m.graph.find_value("/enc/layers.0/self_attn/Slice_output_0");
  REQUIRE(slice);
  REQUIRE(slice->shape_known());
  CHECK(slice->dims.size() == 3);
  CHECK(slice->dims[0].value * slice->dims[1].value == 2 * 64);
}

TEST_CASE("data-dependent values are marked dynamic with the reason, downstream too", "[shapes]") {
  auto model =
      make_model({make_node("NonZero", {"x"}, {"nz"}, "find"), make_node("Transpose", {"nz"}, {"t"}, "flip"),
                  make_node("Relu", {"x"}, {"y"}, "relu")},
                 {tensor_info("x", 1, {"4", "4"})}, {tensor_info("t", 7, {}), tensor_info("y", 1, {"4", "4"})});
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  Model m = onnx_io::load_model(write_temp_model("nonzero.onnx", model));
  const Value* nz = m.graph.find_value("nz");
  CHECK_FALSE(nz->bytes);
  CHECK_THAT(nz->unknown_reason, Catch::StartsWith("data-dependent") && Catch::Contains("'find' (NonZero)"));
  CHECK_THAT(m.graph.find_value("t")->unknown_reason, Catch::Contains("depends on 'nz'"));
  CHECK(m.graph.find_value("y")->bytes == 64u);  // the rest of the graph still resolves
}

TEST_CASE("division by zero in a shape computation is an error on that node", "[shapes]") {
  auto model = make_model({make_node("Shape", {"x"}, {"s"}, "shape"), make_node("Div", {"s", "zero"}, {"q"}, "split"),
                           make_node("Reshape", {"x", "q"}, {"y"}, "reshape")},
                          {tensor_info("x", 1, {"4", "N"})}, {tensor_info("y", 1, {})});
  onnx::TensorProto zero;
  zero.set_name("zero");
  zero.set_data_type(onnx::TensorProto::INT64);
  zero.add_int64_data(0);
  *model.mutable_graph()->add_initializer() = zero;
  std::string path = write_temp_model("divzero.onnx", model);
  onnx_io::LoadOptions options;
  options.overrides.dims["N"] = 3;
  try {
    onnx_io::load_model(path, options);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kBadInput);
    CHECK_THAT(e.what(), Catch::Contains("node 'split' (Div): integer division by zero"));
  }
  // With the dim free, the Shape is not constant: nothing is evaluated, nothing fails.
  CHECK_NOTHROW(onnx_io::load_model(path));
}

TEST_CASE("a 10^8-element constant is never materialised, but its size is known", "[shapes]") {
  // Shape -> ConstantOfShape of [10000, 10000]: evaluating it would take 800 MB.
  auto model =
      make_model({make_node("Shape", {"x"}, {"s"}, "shape"), make_node("ConstantOfShape", {"s"}, {"big"}, "fill"),
                  make_node("Relu", {"big"}, {"y"}, "relu")},
                 {tensor_info("x", 1, {"N", "10000"})}, {tensor_info("y", 1, {})});
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  std::string path = write_temp_model("big.onnx", model);
  onnx_io::LoadOptions options;
  options.overrides.dims["N"] = 10000;
  Model m = onnx_io::load_model(path, options);
  CHECK(m.graph.find_value("big")->bytes == 10000u * 10000u * 4u);
  CHECK(m.graph.find_value("y")->bytes == 10000u * 10000u * 4u);
}

TEST_CASE("Shape -> Gather -> Unsqueeze -> Concat -> Reshape resolves through the pass", "[shapes]") {
  // free_dims.onnx computes its head split from the runtime shape.
  onnx_io::LoadOptions options;
  options.overrides.dims = {{"batch", 3}, {"seq", 5}};
  Model m = onnx_io::load_model(MEMPLAN_SOURCE_DIR "/samples/free_dims.onnx", options);
  const Value* q4 = m.graph.find_value("q4");
  REQUIRE(q4->shape_known());
  CHECK(q4->bytes == 3u * 5 * 4 * 16 * 4);
  CHECK(m.graph.find_value("new_shape")->bytes == 4u * 8);
}

TEST_CASE("memplan shapes writes value_info and keeps external weights as references", "[shapes]") {
  std::string out = write_temp("bert_shaped.onnx", "");
  onnx_io::write_model_with_shapes(MEMPLAN_SHARED_DIR "/models/bert_like.onnx", out, fixed_dims());
  // Without any --dim, the written model has every size.
  Model m = onnx_io::load_model(out);
  CHECK(unknown_sizes(m.graph) == 0);
  onnx::ModelProto proto;
  std::ifstream in(out, std::ios::binary);
  REQUIRE(proto.ParseFromIstream(&in));
  CHECK(proto.graph().value_info_size() > 1000);
  size_t external = 0;
  for (const auto& t : proto.graph().initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL) ++external;
  CHECK(external > 0);
  // The original's initializers, byte for byte.
  onnx::ModelProto original;
  std::ifstream oin(MEMPLAN_SHARED_DIR "/models/bert_like.onnx", std::ios::binary);
  REQUIRE(original.ParseFromIstream(&oin));
  REQUIRE(original.graph().initializer_size() == proto.graph().initializer_size());
  for (int i = 0; i < original.graph().initializer_size(); ++i)
    CHECK(original.graph().initializer(i).SerializeAsString() == proto.graph().initializer(i).SerializeAsString());
  CHECK(original.graph().node_size() == proto.graph().node_size());
}

namespace {

// A small initializer with inline values (int64 or float).
template <typename T>
onnx::TensorProto initializer(const std::string& name, const std::vector<int64_t>& dims, const std::vector<T>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(std::is_same_v<T, float> ? onnx::TensorProto::FLOAT : onnx::TensorProto::INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (T v : values) {
    if constexpr (std::is_same_v<T, float>)
      t.add_float_data(v);
    else
      t.add_int64_data(v);
  }
  return t;
}
onnx::TensorProto int64_initializer(const std::string& name, const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& values) {
  return initializer<int64_t>(name, dims, values);
}
onnx::TensorProto float_initializer(const std::string& name, const std::vector<int64_t>& dims,
                                    const std::vector<float>& values) {
  return initializer<float>(name, dims, values);
}

onnx::AttributeProto ints_attribute(const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
  return a;
}

}  // namespace

TEST_CASE("torch's F.pad amounts (Slice step -1, Transpose, Reshape, Cast) and resize scales resolve", "[shapes]") {
  // Pad amounts as PyTorch exports them inside Swin-style attention, and Resize scales computed through
  // ReduceMin and Reciprocal: constant once the input dims are fixed, so every size is known.
  auto slice = make_node("Slice", {"pp", "s0", "e0", "ax0", "st0"}, {"pp_rev"}, "reverse");
  auto transpose = make_node("Transpose", {"pp_rev"}, {"pp_t"}, "swap");
  *transpose.add_attribute() = ints_attribute("perm", {1, 0});
  auto reduce = make_node("ReduceMin", {"scale_rows"}, {"inv_scales"}, "smallest");
  *reduce.add_attribute() = ints_attribute("axes", {0});
  onnx::AttributeProto keepdims;
  keepdims.set_name("keepdims");
  keepdims.set_type(onnx::AttributeProto::INT);
  keepdims.set_i(0);
  *reduce.add_attribute() = keepdims;
  auto model = make_model(
      {slice, transpose, make_node("Reshape", {"pp_t", "flat"}, {"pads64"}, "flatten"),
       make_node("Cast", {"pads64"}, {"pads"}, "cast"), make_node("Pad", {"x", "pads"}, {"padded"}, "pad"), reduce,
       make_node("Reciprocal", {"inv_scales"}, {"scales"}, "invert"),
       make_node("Resize", {"padded", "", "scales"}, {"up"}, "resize"), make_node("Relu", {"up"}, {"y"}, "relu")},
      {tensor_info("x", 1, {"1", "3", "7", "7"})}, {tensor_info("y", 1, {})});
  auto* cast_to = model.mutable_graph()->mutable_node(3)->add_attribute();
  cast_to->set_name("to");
  cast_to->set_type(onnx::AttributeProto::INT);
  cast_to->set_i(onnx::TensorProto::INT64);
  auto* g = model.mutable_graph();
  *g->add_initializer() = int64_initializer("pp", {2, 4}, {0, 0, 1, 1, 0, 0, 0, 0});  // reversed below
  *g->add_initializer() = int64_initializer("s0", {1}, {-1});
  *g->add_initializer() = int64_initializer("e0", {1}, {INT64_MIN});
  *g->add_initializer() = int64_initializer("ax0", {1}, {0});
  *g->add_initializer() = int64_initializer("st0", {1}, {-1});
  *g->add_initializer() = int64_initializer("flat", {1}, {-1});
  *g->add_initializer() = float_initializer("scale_rows", {2, 4}, {1, 1, 0.5f, 0.5f, 2, 2, 1, 1});
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  Model m = onnx_io::load_model(write_temp_model("pad_resize.onnx", model));
  // Reversed rows [[0,0,0,0],[0,0,1,1]], transposed and flattened: pads [0,0,0,0, 0,1,0,1] -> 1x4x7x8.
  CHECK(shape_text(*m.graph.find_value("padded")) == "[1,4,7,8]");
  CHECK(shape_text(*m.graph.find_value("y")) == "[1,4,14,16]");  // scales [1,1,2,2]
  CHECK(unknown_sizes(m.graph) == 0);
}

TEST_CASE("Einsum outputs get their dims where ONNX's inference gives only a rank", "[shapes]") {
  auto einsum = make_node("Einsum", {"q", "k"}, {"scores"}, "attn");
  auto* eq = einsum.add_attribute();
  eq->set_name("equation");
  eq->set_type(onnx::AttributeProto::STRING);
  eq->set_s("bhqd,bhkd->bhqk");
  auto model = make_model({einsum, make_node("Softmax", {"scores"}, {"y"}, "softmax")},
                          {tensor_info("q", 1, {"B", "4", "10", "16"}), tensor_info("k", 1, {"B", "4", "12", "16"})},
                          {tensor_info("y", 1, {})}, 14);
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  onnx_io::LoadOptions options;
  options.overrides.dims["B"] = 2;
  Model m = onnx_io::load_model(write_temp_model("einsum.onnx", model), options);
  CHECK(shape_text(*m.graph.find_value("scores")) == "[2,4,10,12]");
  CHECK(m.graph.find_value("y")->bytes == 2u * 4 * 10 * 12 * 4);
}

namespace {

// A Loop carrying x [4,16] through Add(x, 1), and a scan output Mul(x, 1) per iteration; the trip count is
// a constant 5 or a graph input.
onnx::ModelProto loop_model(bool constant_trip, bool grows = false) {
  onnx::GraphProto body;
  body.set_name("body");
  if (grows) {  // x doubles along axis 0 every iteration
    auto concat = make_node("Concat", {"x_in", "x_in"}, {"x_out"});
    auto* axis = concat.add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(0);
    *body.add_node() = concat;
  } else {
    *body.add_node() = make_node("Add", {"x_in", "one"}, {"x_out"});
  }
  *body.add_node() = make_node("Identity", {"cond_in"}, {"cond_out"});
  *body.add_node() = make_node("Mul", {"x_in", "one"}, {"scan_out"});
  *body.add_input() = tensor_info("i", onnx::TensorProto::INT64, {});
  *body.add_input() = tensor_info("cond_in", onnx::TensorProto::BOOL, {});
  *body.add_input() = tensor_info("x_in", onnx::TensorProto::FLOAT, {});
  body.mutable_input(2)->mutable_type()->mutable_tensor_type()->clear_shape();
  for (const char* out : {"cond_out", "x_out", "scan_out"}) {
    *body.add_output() = tensor_info(out, out == std::string("cond_out") ? onnx::TensorProto::BOOL : 1, {});
    body.mutable_output(body.output_size() - 1)->mutable_type()->mutable_tensor_type()->clear_shape();
  }
  *body.add_initializer() = float_initializer("one", {}, {1.0f});
  auto loop = make_node("Loop", {"M", "", "x"}, {"x_final", "scans"}, "loop");
  auto* attr = loop.add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  *attr->mutable_g() = body;
  std::vector<onnx::ValueInfoProto> inputs = {tensor_info("x", 1, {"4", "16"})};
  if (!constant_trip) inputs.push_back(tensor_info("M", onnx::TensorProto::INT64, {}));
  auto model =
      make_model({loop, make_node("Relu", {"x_final"}, {"y"}, "relu_y"), make_node("Relu", {"scans"}, {"z"}, "relu_z")},
                 inputs, {tensor_info("y", 1, {}), tensor_info("z", 1, {})}, 17);
  for (auto& o : *model.mutable_graph()->mutable_output()) o.mutable_type()->mutable_tensor_type()->clear_shape();
  if (constant_trip) *model.mutable_graph()->add_initializer() = int64_initializer("M", {}, {5});
  return model;
}

}  // namespace

TEST_CASE("Loop: an invariant loop-carried shape and a constant trip count give the outputs their sizes", "[shapes]") {
  Model fixed = onnx_io::load_model(write_temp_model("loop_const.onnx", loop_model(true)));
  CHECK(shape_text(*fixed.graph.find_value("x_final")) == "[4,16]");
  CHECK(shape_text(*fixed.graph.find_value("scans")) == "[5,4,16]");
  CHECK(fixed.graph.find_value("z")->bytes == 5u * 4 * 16 * 4);
  CHECK(unknown_sizes(fixed.graph) == 0);  // the body's values too
  // A trip count given at run time: the carried value still resolves; the scan output says why it cannot.
  Model runtime = onnx_io::load_model(write_temp_model("loop_input.onnx", loop_model(false)));
  CHECK(shape_text(*runtime.graph.find_value("x_final")) == "[4,16]");
  CHECK_FALSE(runtime.graph.find_value("scans")->bytes);
  CHECK_THAT(runtime.graph.find_value("scans")->unknown_reason,
             Catch::StartsWith("data-dependent") && Catch::Contains("iteration count"));
  // A carried value that changes shape is never given its initial shape.
  Model grows = onnx_io::load_model(write_temp_model("loop_grows.onnx", loop_model(true, true)));
  CHECK_FALSE(grows.graph.find_value("x_final")->bytes);
  CHECK_THAT(grows.graph.find_value("x_final")->unknown_reason, Catch::Contains("changes across the iterations"));
}

TEST_CASE("what depends on a data-dependent value is data-dependent, however it is computed", "[shapes]") {
  // Shape of a NonZero result, then ConstantOfShape of that: sized by the data, not by any rule.
  auto model = make_model({make_node("NonZero", {"x"}, {"nz"}, "find"), make_node("Shape", {"nz"}, {"s"}, "shape"),
                           make_node("ConstantOfShape", {"s"}, {"c"}, "fill"), make_node("Relu", {"c"}, {"y"}, "relu")},
                          {tensor_info("x", 1, {"4", "4"})}, {tensor_info("y", 1, {})});
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  Model m = onnx_io::load_model(write_temp_model("taint.onnx", model));
  CHECK_FALSE(m.graph.find_value("c")->bytes);
  CHECK_THAT(m.graph.find_value("c")->unknown_reason, Catch::StartsWith("data-dependent: depends on 's'"));
  CHECK_THAT(m.graph.find_value("y")->unknown_reason, Catch::StartsWith("data-dependent"));
}

TEST_CASE("If with a constant condition takes its branch's shapes, and SequenceAt finds the element it picks",
          "[shapes]") {
  // then: Squeeze(x) -> [3]; else: Identity(x) -> [1,3]. ONNX merges both (ranks differ: unknown).
  onnx::GraphProto then_branch, else_branch;
  then_branch.set_name("then");
  auto axes = make_node("Constant", {}, {"axes"});  // inside the branch, as PyTorch exports it
  auto* value = axes.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = int64_initializer("", {1}, {0});
  *then_branch.add_node() = axes;
  *then_branch.add_node() = make_node("Squeeze", {"x", "axes"}, {"t_out"});
  *then_branch.add_output() = tensor_info("t_out", 1, {});
  then_branch.mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  else_branch.set_name("else");
  *else_branch.add_node() = make_node("Identity", {"x"}, {"e_out"});
  *else_branch.add_output() = tensor_info("e_out", 1, {});
  else_branch.mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto branch = make_node("If", {"flag"}, {"chosen"}, "branch");
  for (auto [name, g] : {std::pair{"then_branch", &then_branch}, {"else_branch", &else_branch}}) {
    auto* a = branch.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = *g;
  }
  auto model = make_model(
      {make_node("Greater", {"n", "zero"}, {"flag"}, "test"), branch,
       make_node("SequenceConstruct", {"a", "b"}, {"seq"}, "pack"),
       make_node("SequenceAt", {"seq", "one"}, {"picked"}, "pick"), make_node("Relu", {"picked"}, {"y"}, "relu")},
      {tensor_info("x", 1, {"1", "3"}), tensor_info("a", 1, {"2", "3"}), tensor_info("b", 1, {"4", "3"})},
      {tensor_info("chosen", 1, {}), tensor_info("y", 1, {})}, 14);
  for (auto& o : *model.mutable_graph()->mutable_output()) o.mutable_type()->mutable_tensor_type()->clear_shape();
  auto* g = model.mutable_graph();
  *g->add_initializer() = int64_initializer("n", {}, {5});
  *g->add_initializer() = int64_initializer("zero", {}, {0});
  *g->add_initializer() = int64_initializer("one", {}, {1});
  Model m = onnx_io::load_model(write_temp_model("if_seq.onnx", model));
  CHECK(shape_text(*m.graph.find_value("chosen")) == "[3]");    // 5 > 0: the then branch
  CHECK(shape_text(*m.graph.find_value("picked")) == "[4,3]");  // element 1, not the merged [?,3]
  CHECK(m.graph.find_value("y")->bytes == 4u * 3 * 4);
  // The sequence itself has no size, and says why (not a missing rule: what it holds is decided at run time).
  CHECK_FALSE(m.graph.find_value("seq")->bytes);
  CHECK_THAT(m.graph.find_value("seq")->unknown_reason, Catch::StartsWith("a sequence:"));
}

TEST_CASE("Compress with a constant condition and MaxUnpool with a constant output_shape get their sizes", "[shapes]") {
  // ONNX 1.12 leaves both open; the data flowing in need not be constant. Sizes as ORT 1.30 allocates them
  // (scripts/ort-zoo-check --testdata measures ONNX's compress and maxunpool tests).
  auto condition = int64_initializer("keep", {5}, {1, 0, 1, 1, 0});
  condition.set_data_type(onnx::TensorProto::BOOL);  // bool values travel in int32_data
  condition.clear_int64_data();
  for (int v : {1, 0, 1, 1, 0}) condition.add_int32_data(v);
  auto on_axis = make_node("Compress", {"x", "keep"}, {"rows"}, "rows");
  auto* axis = on_axis.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(-2);
  auto unpool = make_node("MaxUnpool", {"x4", "idx", "out_shape"}, {"unpooled"}, "unpool");
  auto* kernel = unpool.add_attribute();
  kernel->set_name("kernel_shape");
  kernel->set_type(onnx::AttributeProto::INTS);
  kernel->add_ints(2);
  kernel->add_ints(2);
  auto model = make_model({on_axis, make_node("Compress", {"x", "keep"}, {"flat"}, "flat"), unpool},
                          {tensor_info("x", 1, {"6", "3"}), tensor_info("x4", 1, {"1", "1", "2", "2"}),
                           tensor_info("idx", 7, {"1", "1", "2", "2"})},
                          {tensor_info("rows", 1, {}), tensor_info("flat", 1, {}), tensor_info("unpooled", 1, {})}, 11);
  for (auto& o : *model.mutable_graph()->mutable_output()) o.mutable_type()->mutable_tensor_type()->clear_shape();
  *model.mutable_graph()->add_initializer() = condition;
  *model.mutable_graph()->add_initializer() = int64_initializer("out_shape", {4}, {1, 1, 5, 5});
  Model m = onnx_io::load_model(write_temp_model("compress_unpool.onnx", model));
  CHECK(shape_text(*m.graph.find_value("rows")) == "[3,3]");  // 3 of the first 5 of 6 rows (axis -2 is 0)
  CHECK(shape_text(*m.graph.find_value("flat")) == "[3]");    // no axis: of the first 5 of 18 elements
  CHECK(shape_text(*m.graph.find_value("unpooled")) == "[1,1,5,5]");
  CHECK(m.graph.find_value("unpooled")->bytes == 25u * 4);
}

TEST_CASE("STFT without onesided is one-sided, as the op's default and ORT say (ONNX 1.12's inference reads 0)",
          "[shapes]") {
  // ONNX's own test_stft: a 128-sample signal, frames of 16 every 8: 15 frames of 16 / 2 + 1 = 9 bins.
  auto stft = [](bool two_sided) {
    auto node = make_node("STFT", {"signal", "step", "", "length"}, {"spectrum"}, "stft");
    if (two_sided) {
      auto* a = node.add_attribute();
      a->set_name("onesided");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(0);
    }
    auto model =
        make_model({node}, {tensor_info("signal", 1, {"1", "128", "1"})}, {tensor_info("spectrum", 1, {})}, 17);
    model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
    *model.mutable_graph()->add_initializer() = int64_initializer("step", {}, {8});
    *model.mutable_graph()->add_initializer() = int64_initializer("length", {}, {16});
    return model;
  };
  const std::string one_sided = write_temp_model("stft.onnx", stft(false));
  Model m = onnx_io::load_model(one_sided);
  CHECK(shape_text(*m.graph.find_value("spectrum")) == "[1,15,9,2]");
  CHECK(m.graph.nodes[0].attributes.empty());  // the default is not written into the model's nodes
  Model both = onnx_io::load_model(write_temp_model("stft_two_sided.onnx", stft(true)));
  CHECK(shape_text(*both.graph.find_value("spectrum")) == "[1,15,16,2]");
}

TEST_CASE("the shape pass lends the declared value_info and the graph outputs to its rounds and writes them back",
          "[shapes]") {
  // Shape -> ReduceProd -> Reshape: ONNX's inference does not see through ReduceProd, so the first round
  // leaves r without a shape and the second, with the product folded, gives it. r is declared (type, no shape) and y
  // is a graph output declared without a shape: both are merged into across the rounds, not copied.
  auto reduce = make_node("ReduceProd", {"s"}, {"n"}, "prod");
  auto* keep = reduce.add_attribute();
  keep->set_name("keepdims");
  keep->set_type(onnx::AttributeProto::INT);
  keep->set_i(1);
  auto model = make_model({make_node("Shape", {"x"}, {"s"}, "shape"), reduce,
                           make_node("Reshape", {"x", "n"}, {"r"}, "reshape"), make_node("Relu", {"r"}, {"y"}, "relu")},
                          {tensor_info("x", 1, {"3", "8"})}, {tensor_info("y", 1, {})}, 13);
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  *model.mutable_graph()->add_value_info() = tensor_info("r", 1, {});
  model.mutable_graph()->mutable_value_info(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  *model.mutable_graph()->add_value_info() = tensor_info("unused_name", 1, {"2"});  // names no node output

  const onnx_io::ShapePassReport report = onnx_io::complete_shapes(model, "lend.onnx");
  CHECK(report.rounds == 2);
  CHECK(report.evaluated_nodes >= 1);
  const auto& g = model.graph();
  REQUIRE(g.output_size() == 1);
  CHECK(g.output(0).name() == "y");
  REQUIRE(g.output(0).type().tensor_type().has_shape());
  REQUIRE(g.output(0).type().tensor_type().shape().dim_size() == 1);
  CHECK(g.output(0).type().tensor_type().shape().dim(0).dim_value() == 24);
  // One entry per node output that is not a graph output, each once; the declared r among them, with its shape.
  std::map<std::string, int> entries;
  for (const auto& vi : g.value_info()) ++entries[vi.name()];
  CHECK(entries == std::map<std::string, int>{{"n", 1}, {"r", 1}, {"s", 1}});
  for (const auto& vi : g.value_info())
    if (vi.name() == "r") {
      REQUIRE(vi.type().tensor_type().shape().dim_size() == 1);
      CHECK(vi.type().tensor_type().shape().dim(0).dim_value() == 24);
    }
  CHECK(g.node_size() == 4);
}
