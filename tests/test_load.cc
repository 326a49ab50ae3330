#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>

#include "memplan/error.h"
#include "memplan/isolated.h"
#include "memplan/onnx_io/load.h"
#include "memplan/planner/pipeline.h"
#include "memplan/stage_times.h"
#include "model_builder.h"

using namespace memplan;
using namespace memplan::testing;

namespace {
std::vector<std::string> value_names(const Graph& g) {
  std::vector<std::string> out;
  for (const Value& v : g.values) out.push_back(v.name);
  return out;
}

// A value's shape in a view, by name (nullptr when the view lacks it).
const KnownShape* find_shape(const ShapeView& view, const std::string& name) {
  const auto index = index_by_name(view);
  auto it = index.find(name);
  return it == index.end() ? nullptr : &view.shapes[it->second];
}
}  // namespace

TEST_CASE("value indices follow ORT's OrtValue order", "[load]") {
  // Inputs first, then per node in file order: inputs, implicit inputs, outputs; graph outputs last.
  auto model = make_model({make_node("Add", {"b", "w"}, {"c"}, "n0"), make_node("Relu", {"x"}, {"b"}, "n1")},
                          {tensor_info("x", 1, {"4"})}, {tensor_info("c", 1, {"4"})});
  *model.mutable_graph()->add_initializer() = header_only_initializer("w", {4});
  Model m = onnx_io::load_model(write_temp_model("order.onnx", model));
  CHECK(value_names(m.graph) == std::vector<std::string>{"x", "b", "w", "c"});
  const Graph& g = m.graph;
  CHECK(g.find_value("w")->is_initializer);
  CHECK(g.find_value("w")->bytes == 16u);
  CHECK(g.find_value("x")->is_graph_input);
  CHECK(g.find_value("c")->is_graph_output);
  CHECK(g.find_value("b")->producer == 1);
  CHECK(g.find_value("b")->consumers == std::vector<NodeId>{0});
  CHECK(g.find_value("c")->bytes == 16u);  // from ONNX shape inference
}

TEST_CASE("a node's inputs written by the nodes just before, or by a node of many outputs, are the right values",
          "[load]") {
  // Split writes 100 values (more than the builder compares near a reader before it asks its table); Concat reads them
  // in reverse order; two Relus read values written one and two nodes before them.
  std::vector<std::string> parts, reversed;
  for (int k = 0; k < 100; ++k) parts.push_back("s" + std::to_string(k));
  reversed.assign(parts.rbegin(), parts.rend());
  auto model =
      make_model({make_node("Split", {"x"}, parts, "split"), make_node("Concat", reversed, {"joined"}, "concat"),
                  make_node("Relu", {"s42"}, {"r1"}, "r1"), make_node("Relu", {"joined"}, {"r2"}, "r2")},
                 {tensor_info("x", 1, {"100"})}, {tensor_info("r1", 1, {"1"}), tensor_info("r2", 1, {"100"})});
  onnx::AttributeProto& axis = *model.mutable_graph()->mutable_node(1)->add_attribute();  // (Concat's axis)
  axis.set_name("axis");
  axis.set_type(onnx::AttributeProto::INT);
  axis.set_i(0);
  Model m = onnx_io::load_model(write_temp_model("many-outputs.onnx", model));
  const Graph& g = m.graph;
  REQUIRE(g.nodes.size() == 4);
  const Node& concat = g.nodes[1];
  REQUIRE(concat.inputs.size() == 100);
  for (int k = 0; k < 100; ++k) {
    CHECK(g.values[concat.inputs[k]].name == reversed[k]);
    CHECK(concat.inputs[k] == g.nodes[0].outputs[99 - k]);
  }
  CHECK(g.values[g.nodes[2].inputs[0]].name == "s42");
  CHECK(g.find_value("s42")->consumers == std::vector<NodeId>{1, 2});
  CHECK(g.nodes[3].inputs[0] == concat.outputs[0]);
  CHECK(g.find_value("joined")->consumers == std::vector<NodeId>{3});
}

TEST_CASE("missing optional inputs stay holes", "[load]") {
  auto model = make_model({make_node("Clip", {"x", "", "hi"}, {"y"}, "clip")},
                          {tensor_info("x", 1, {"3"}), tensor_info("hi", 1, {})}, {tensor_info("y", 1, {"3"})});
  Model m = onnx_io::load_model(write_temp_model("holes.onnx", model));
  const Node& clip = m.graph.nodes[0];
  REQUIRE(clip.inputs.size() == 3);
  CHECK(clip.inputs[1] == kNoId);
  CHECK(m.graph.values[clip.inputs[2]].name == "hi");
}

TEST_CASE("subgraphs and implicit inputs of If and Loop", "[load]") {
  Model m = onnx_io::load_model(MEMPLAN_SOURCE_DIR "/samples/control_flow.onnx");
  const Graph& g = m.graph;
  REQUIRE(g.nodes.size() == 3);
  CHECK(g.total_subgraph_count() == 3);
  const Node& if_node = g.nodes[1];
  const Node& loop = g.nodes[2];
  CHECK(if_node.op_type == "If");
  REQUIRE(if_node.subgraphs.size() == 2);
  std::vector<std::string> implicit;
  for (ValueId v : if_node.implicit_inputs) implicit.push_back(g.values[v].name);
  CHECK(implicit == std::vector<std::string>{"h", "scale"});
  implicit.clear();
  for (ValueId v : loop.implicit_inputs) implicit.push_back(g.values[v].name);
  CHECK(implicit == std::vector<std::string>{"h", "scale"});
  CHECK(g.find_value("h")->implicit_consumers == std::vector<NodeId>{1, 2});

  const Graph& body = g.subgraphs[loop.subgraphs[0]];
  CHECK(body.parent_node == loop.index);
  CHECK(body.parent_attribute == "body");
  REQUIRE(body.find_value("h"));
  CHECK(body.find_value("h")->is_outer_scope);
  CHECK(body.find_value("acc")->is_graph_input);
  CHECK(body.outer_scope.size() == 2);
}

TEST_CASE("models with external weights load without the weights file", "[load]") {
  Model m = onnx_io::load_model(MEMPLAN_SHARED_DIR "/models/resnet50.onnx", {{{{"N", 1}}, {}}, true});
  CHECK(m.graph.nodes.size() == 169);
  const Value* w = m.graph.find_value("fc.weight");
  REQUIRE(w);
  CHECK(w->bytes == 1000u * 2048u * 4u);
  CHECK(m.graph.find_value("input")->bytes == 1u * 3 * 224 * 224 * 4);
}

TEST_CASE("free dims stay symbolic until fixed", "[load]") {
  std::string path = MEMPLAN_SHARED_DIR "/models/resnet50.onnx";
  Model free = onnx_io::load_model(path);
  const Value* in = free.graph.find_value("input");
  REQUIRE(in->dims.size() == 4);
  CHECK(in->dims[0].param == "N");
  CHECK_FALSE(in->bytes);

  onnx_io::LoadOptions options;
  options.overrides.input_shapes["input"] = {2, 3, 224, 224};
  Model fixed = onnx_io::load_model(path, options);
  CHECK(fixed.graph.find_value("input")->bytes == 2u * 3 * 224 * 224 * 4);
  const Value& out = fixed.graph.values[fixed.graph.outputs[0]];
  CHECK(out.bytes == 2u * 1000 * 4);
}

TEST_CASE("override parsing", "[load]") {
  CHECK(onnx_io::parse_dim_override("N=8") == std::pair<std::string, int64_t>{"N", 8});
  CHECK(onnx_io::parse_input_shape("x=1x3x224x224").second == std::vector<int64_t>{1, 3, 224, 224});
  CHECK(onnx_io::parse_input_shape("x=1,3").second == std::vector<int64_t>{1, 3});
  CHECK(onnx_io::parse_input_shape("a=b=2").first == "a=b");
  for (const char* bad : {"N", "=3", "N=", "N=x", "N=-1", "N=1.5"}) {
    INFO(bad);
    CHECK_THROWS_AS(onnx_io::parse_dim_override(bad), Error);
  }
  CHECK_THROWS_AS(onnx_io::parse_input_shape("x=1xx3"), Error);
}

TEST_CASE("bad overrides are usage errors naming the input", "[load]") {
  std::string path = MEMPLAN_SHARED_DIR "/models/resnet50.onnx";
  onnx_io::LoadOptions options;
  options.overrides.input_shapes["nope"] = {1};
  try {
    onnx_io::load_model(path, options);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kUsage);
    CHECK_THAT(e.what(), Catch::Contains("'nope'") && Catch::Contains("inputs: input"));
  }
  options.overrides.input_shapes = {{"input", {1, 3, 224}}};
  CHECK_THROWS_WITH(onnx_io::load_model(path, options), Catch::Contains("rank"));
  options.overrides.input_shapes = {{"input", {1, 4, 224, 224}}};
  CHECK_THROWS_WITH(onnx_io::load_model(path, options), Catch::Contains("fixes it at 3"));

  // A dim the model does not have is a typo until shown otherwise: a usage error naming the real ones.
  onnx_io::LoadOptions unused;
  unused.overrides.dims["batch"] = 1;
  try {
    onnx_io::load_model(path, unused);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kUsage);
    CHECK_THAT(e.what(), Catch::Contains("no dimension named 'batch'") && Catch::Contains("inputs: N."));
  }
  unused.overrides.dims = {{"n", 1}};
  CHECK_THROWS_WITH(onnx_io::load_model(path, unused), Catch::Contains("Did you mean 'N'?"));
  // Defaults applied across many models only warn.
  unused.overrides.dims = {{"batch", 1}};
  unused.overrides.allow_unmatched_dims = true;
  Model m = onnx_io::load_model(path, unused);
  REQUIRE(m.warnings.size() == 1);
  CHECK_THAT(m.warnings[0], Catch::Contains("batch"));
}

TEST_CASE("Constant nodes are read as initializers, as ORT does", "[load]") {
  auto model = make_model({make_node("Constant", {}, {"k"}, "const"), make_node("Add", {"x", "k"}, {"y"}, "add")},
                          {tensor_info("x", 1, {"2"})}, {tensor_info("y", 1, {"2"})});
  auto* attr = model.mutable_graph()->mutable_node(0)->add_attribute();
  attr->set_name("value_floats");
  attr->set_type(onnx::AttributeProto::FLOATS);
  attr->add_floats(1.0f);
  attr->add_floats(2.0f);
  Model m = onnx_io::load_model(write_temp_model("const.onnx", model));
  CHECK(m.graph.nodes.size() == 1);
  CHECK(m.constant_nodes_folded == 1);
  const Value* k = m.graph.find_value("k");
  REQUIRE(k);
  CHECK(k->is_initializer);
  CHECK(k->producer == kNoId);
  CHECK(k->bytes == 8u);
}

TEST_CASE("duplicate Cast pairs are removed as ORT does at load", "[load]") {
  // x:int64 -Cast(float)-> a -Cast(int64)-> b -Relu-> ... : the pair cancels; y's Cast to float stays.
  auto cast = [](const std::string& in, const std::string& out, int to, const std::string& name) {
    auto n = make_node("Cast", {in}, {out}, name);
    auto* a = n.add_attribute();
    a->set_name("to");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(to);
    return n;
  };
  auto model = make_model({cast("x", "a", 1, "c1"), cast("a", "b", 7, "c2"), make_node("Neg", {"b"}, {"n"}, "neg"),
                           cast("n", "y", 1, "c3")},
                          {tensor_info("x", 7, {"4"})}, {tensor_info("y", 1, {"4"})});
  std::string path = write_temp_model("casts.onnx", model);
  Model m = onnx_io::load_model(path);
  CHECK(m.ort_casts_removed == 2);
  REQUIRE(m.graph.nodes.size() == 2);
  CHECK(m.graph.nodes[0].name == "neg");
  CHECK(m.graph.values[m.graph.nodes[0].inputs[0]].name == "x");
  CHECK(m.graph.find_value("a") == nullptr);
  onnx_io::LoadOptions keep;
  keep.ort_rewrites = false;
  CHECK(onnx_io::load_model(path, keep).graph.nodes.size() == 4);

  // float -> int -> float loses precision: ORT keeps both.
  auto lossy = make_model({cast("f", "i", 7, "c1"), cast("i", "g", 1, "c2"), make_node("Neg", {"g"}, {"y"}, "neg")},
                          {tensor_info("f", 1, {"4"})}, {tensor_info("y", 1, {"4"})});
  CHECK(onnx_io::load_model(write_temp_model("lossy.onnx", lossy)).graph.nodes.size() == 3);
}

TEST_CASE("ORT's load-time function expansion: ops without a kernel become their ONNX function bodies", "[load][ort]") {
  const std::string dir = MEMPLAN_TESTDATA_DIR "/node/";
  // HardSwish -> HardSigmoid + Mul, unnamed nodes appended, internal values prefixed as ORT names them.
  Model hs = onnx_io::load_model(dir + "test_hardswish/model.onnx");
  REQUIRE(hs.graph.nodes.size() == 2);
  CHECK(hs.graph.nodes[0].op_type == "HardSigmoid");
  CHECK(hs.graph.nodes[1].op_type == "Mul");
  CHECK(hs.graph.nodes[0].name.empty());
  CHECK(hs.graph.find_value("_inlfunc_HardSwish_HS_X") != nullptr);
  CHECK(hs.ort_functions_inlined == 1);
  // SoftmaxCrossEntropyLoss calls NegativeLogLikelihoodLoss: a second round expands that too.
  Model sce = onnx_io::load_model(dir + "test_sce_mean/model.onnx");
  CHECK(sce.ort_functions_inlined == 2);
  for (const Node& n : sce.graph.nodes) {
    CHECK(n.op_type != "SoftmaxCrossEntropyLoss");
    CHECK(n.op_type != "NegativeLogLikelihoodLoss");
  }
  CHECK(sce.graph.nodes.size() == 12);  // what ORT 1.30 runs (its partition config lists these 12)
  // --no-ort-rewrites keeps the graph as written.
  onnx_io::LoadOptions keep;
  keep.ort_rewrites = false;
  Model as_written = onnx_io::load_model(dir + "test_sce_mean/model.onnx", keep);
  REQUIRE(as_written.graph.nodes.size() == 1);
  CHECK(as_written.graph.nodes[0].op_type == "SoftmaxCrossEntropyLoss");
}

TEST_CASE("ORT's load-time inlining: the model's own functions become their bodies, call by call", "[load][ort]") {
  // Block(a) = Add(Relu(LeakyRelu(a, alpha = the call's alpha)), a), called twice; a third call in an If branch.
  onnx::FunctionProto block;
  block.set_domain("com.acme");
  block.set_name("Block");
  block.add_input("a");
  block.add_output("b");
  block.add_attribute("alpha");
  *block.add_node() = make_node("LeakyRelu", {"a"}, {"t"});
  auto* alpha = block.mutable_node(0)->add_attribute();
  alpha->set_name("alpha");
  alpha->set_ref_attr_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  *block.add_node() = make_node("Relu", {"t"}, {"u"});
  *block.add_node() = make_node("Add", {"u", "a"}, {"b"}, "sum");
  auto* import = block.add_opset_import();
  import->set_domain("");
  import->set_version(14);
  auto call = [](const std::string& in, const std::string& out, const std::string& name, float alpha_value) {
    onnx::NodeProto n = make_node("Block", {in}, {out}, name);
    n.set_domain("com.acme");
    auto* a = n.add_attribute();
    a->set_name("alpha");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(alpha_value);
    return n;
  };
  auto model = make_model({call("x", "m", "first", 0.5f), call("m", "y", "second", 0.25f)},
                          {tensor_info("x", 1, {"4"})}, {tensor_info("y", 1, {"4"})});
  *model.add_functions() = block;
  auto* acme = model.add_opset_import();
  acme->set_domain("com.acme");
  acme->set_version(1);
  const std::string path = write_temp_model("local_functions.onnx", model);

  Model m = onnx_io::load_model(path);
  CHECK(m.ort_functions_inlined == 2);
  REQUIRE(m.graph.nodes.size() == 6);
  std::vector<std::string> ops, names;
  for (const Node& n : m.graph.nodes) {
    ops.push_back(n.op_type);
    names.push_back(n.name);
  }
  CHECK(ops == std::vector<std::string>{"LeakyRelu", "Relu", "Add", "LeakyRelu", "Relu", "Add"});
  // ORT's names: the call's unique prefix (GenerateNodeName) on every inner value and named node.
  CHECK(names == std::vector<std::string>{"", "", "_inlfunc_Block_sum", "", "", "_inlfunc_Block_token_0_sum"});
  for (const char* v :
       {"_inlfunc_Block_t", "_inlfunc_Block_u", "_inlfunc_Block_token_0_t", "_inlfunc_Block_token_0_u"}) {
    const Value* value = m.graph.find_value(v);
    REQUIRE(value != nullptr);
    CHECK(value->bytes == std::optional<uint64_t>(16));  // planned like any activation
  }
  CHECK(m.graph.values[m.graph.nodes[2].outputs[0]].name == "m");  // the call's outputs keep their names
  CHECK(m.graph.nodes[0].attribute("alpha")->f == Approx(0.5));    // each call's attribute taken by reference
  CHECK(m.graph.nodes[3].attribute("alpha")->f == Approx(0.25));
  // --no-ort-rewrites keeps the calls as written.
  onnx_io::LoadOptions keep;
  keep.ort_rewrites = false;
  Model as_written = onnx_io::load_model(path, keep);
  REQUIRE(as_written.graph.nodes.size() == 2);
  CHECK(as_written.graph.nodes[0].op_type == "Block");

  // A call in an If branch is inlined inside the branch, whose graph names its nodes on its own: its values take the
  // same names as the main graph's first call (as ORT names them), and still get their shapes.
  onnx::GraphProto branch;
  branch.set_name("then");
  *branch.add_node() = call("y", "t_out", "in_then", 1.0f);
  *branch.add_output() = tensor_info("t_out", 1, {"4"});
  onnx::GraphProto other;
  other.set_name("else");
  *other.add_node() = make_node("Relu", {"y"}, {"e_out"}, "in_else");
  *other.add_output() = tensor_info("e_out", 1, {"4"});
  auto with_if = model;
  onnx::NodeProto if_node = make_node("If", {"c"}, {"z"}, "if");
  for (auto [attr_name, g] : {std::pair{"then_branch", &branch}, std::pair{"else_branch", &other}}) {
    auto* a = if_node.add_attribute();
    a->set_name(attr_name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = *g;
  }
  *with_if.mutable_graph()->add_node() = if_node;
  *with_if.mutable_graph()->add_input() = tensor_info("c", 9, {});
  *with_if.mutable_graph()->mutable_output(0) = tensor_info("z", 1, {"4"});
  Model b = onnx_io::load_model(write_temp_model("local_function_in_branch.onnx", with_if));
  CHECK(b.ort_functions_inlined == 3);
  const Node& inlined_if = b.graph.nodes[0];
  REQUIRE(inlined_if.op_type == "If");
  const Graph& then_graph = b.graph.subgraphs[inlined_if.subgraphs[0]];
  REQUIRE(then_graph.nodes.size() == 3);
  for (const char* v : {"_inlfunc_Block_t", "_inlfunc_Block_u"}) {
    REQUIRE(then_graph.find_value(v) != nullptr);
    CHECK_FALSE(then_graph.find_value(v)->is_outer_scope);
    CHECK(then_graph.find_value(v)->bytes == std::optional<uint64_t>(16));
  }
}

TEST_CASE("ops memplan has no rules for, and opsets ORT refuses, are warned about before planning", "[load][ort]") {
  auto warnings_of = [](onnx::ModelProto model, const std::string& file) {
    return onnx_io::load_model(write_temp_model(file, model)).warnings;
  };
  auto joined = [](const std::vector<std::string>& warnings) {
    std::string all;
    for (const auto& w : warnings) all += w + "\n";
    return all;
  };
  auto import = [](onnx::ModelProto& m, const std::string& domain, int version) {
    auto* op = m.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  };
  // A custom op with declared output types plans, but the warning says where its sizes come from.
  onnx::NodeProto custom = make_node("Frobnicate", {"x"}, {"y"}, "f");
  custom.set_domain("com.acme");
  onnx::NodeProto custom2 = make_node("Frobnicate", {"y"}, {"z"}, "f2");
  custom2.set_domain("com.acme");
  auto with_custom = make_model({custom, custom2}, {tensor_info("x", 1, {"4"})}, {tensor_info("z", 1, {"4"})});
  import(with_custom, "com.acme", 1);
  const std::string c = joined(warnings_of(with_custom, "custom_op.onnx"));
  CHECK_THAT(c, Catch::Contains("node 'f' (com.acme.Frobnicate) and 1 other com.acme.Frobnicate node(s): memplan "
                                "knows no op com.acme.Frobnicate") &&
                    Catch::Contains("custom-op library"));
  // ... and without an import of its domain, ORT refuses it.
  auto not_imported = make_model({custom}, {tensor_info("x", 1, {"4"})}, {tensor_info("y", 1, {"4"})});
  CHECK_THAT(joined(warnings_of(not_imported, "not_imported.onnx")),
             Catch::Contains("node 'f' (com.acme.Frobnicate): the model imports no opset of domain 'com.acme'"));
  // An ONNX op newer than the model's opset: ORT has no kernel registered for it at that opset.
  auto gelu = make_model({make_node("Gelu", {"x"}, {"y"}, "g")}, {tensor_info("x", 1, {"4"})},
                         {tensor_info("y", 1, {"4"})}, 13);
  CHECK_THAT(joined(warnings_of(gelu, "gelu13.onnx")),
             Catch::Contains("node 'g' (Gelu): ai.onnx has Gelu from opset 20 and the model imports opset 13") &&
                 Catch::Contains("No Op registered for Gelu with domain_version of 13"));
  // Opsets past what ORT 1.30 loads (ai.onnx 26, com.microsoft 1), and past memplan's rules (ai.onnx 24).
  auto future = make_model({make_node("Relu", {"x"}, {"y"}, "r")}, {tensor_info("x", 1, {"4"})},
                           {tensor_info("y", 1, {"4"})}, 27);
  import(future, "com.microsoft", 2);
  const std::string f = joined(warnings_of(future, "opset27.onnx"));
  CHECK_THAT(f, Catch::Contains("imports ai.onnx opset 27, and ONNX Runtime 1.30 refuses to load it (it loads ai.onnx "
                                "up to opset 26)") &&
                    Catch::Contains("imports com.microsoft opset 2, and ONNX Runtime 1.30 refuses") &&
                    Catch::Contains("memplan's shape rules know ai.onnx up to opset 24"));
  // A hostile import (negative, past int) is told as it is, at once: the search for the op's first opset is bounded.
  auto negative =
      make_model({make_node("Gelu", {"x"}, {"y"}, "g")}, {tensor_info("x", 1, {"4"})}, {tensor_info("y", 1, {"4"})});
  negative.mutable_opset_import(0)->set_version(-2147483000);
  CHECK_THAT(joined(warnings_of(negative, "opset_negative.onnx")),
             Catch::Contains("ai.onnx has Gelu from opset 20 and the model imports opset -2147483000"));
  auto newest = make_model({make_node("Relu", {"x"}, {"y"}, "r")}, {tensor_info("x", 1, {"4"})},
                           {tensor_info("y", 1, {"4"})}, 24);
  CHECK(warnings_of(newest, "opset24.onnx").empty());
  // Contrib ops ORT registers, and calls of the model's own functions, are known.
  onnx::NodeProto fast_gelu = make_node("FastGelu", {"x"}, {"y"}, "fg");
  fast_gelu.set_domain("com.microsoft");
  auto contrib = make_model({fast_gelu}, {tensor_info("x", 1, {"4"})}, {tensor_info("y", 1, {"4"})});
  import(contrib, "com.microsoft", 1);
  CHECK(warnings_of(contrib, "contrib.onnx").empty());
  auto local = with_custom;
  auto* fn = local.add_functions();
  fn->set_domain("com.acme");
  fn->set_name("Frobnicate");
  fn->add_input("a");
  fn->add_output("b");
  *fn->add_node() = make_node("Relu", {"a"}, {"b"});
  auto* fn_import = fn->add_opset_import();
  fn_import->set_domain("");
  fn_import->set_version(14);
  CHECK(warnings_of(local, "local_function.onnx").empty());
}

TEST_CASE("ORT's view of the shapes: no --dim, no data propagation, initializers and values it lacks keep theirs",
          "[load]") {
  // x[N,4] -> Relu -> r; Shape(r) -> s; Reshape(r, s) -> y. With --dim N=3 memplan knows r and y as [3,4]; ORT's
  // load knows r as [N,4], and y only through data propagation, which ORT's load does not do.
  auto model =
      make_model({make_node("Relu", {"x"}, {"r"}, "relu"), make_node("Shape", {"r"}, {"s"}, "shape"),
                  make_node("Reshape", {"r", "s"}, {"y"}, "reshape"), make_node("Add", {"y", "w"}, {"z"}, "add")},
                 {tensor_info("x", 1, {"N", "4"})}, {tensor_info("z", 1, {})});
  *model.mutable_graph()->add_initializer() = header_only_initializer("w", {4});
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  onnx_io::LoadOptions options;
  options.overrides.dims["N"] = 3;
  const auto both = onnx_io::load_model_and_ort_view(write_temp_model("ort_view.onnx", model), options);
  REQUIRE(both.ort_shapes->get());
  CHECK(both.ort_shapes->error().empty());
  const ShapeView& ort = *both.ort_shapes->get();
  CHECK(both.model.graph.find_value("r")->dims == std::vector<Dim>{{3, ""}, {4, ""}});
  REQUIRE(find_shape(ort, "r"));
  CHECK(find_shape(ort, "r")->has_shape);
  CHECK(find_shape(ort, "r")->dims == std::vector<Dim>{{-1, "N"}, {4, ""}});
  CHECK(find_shape(ort, "x")->dims ==
        std::vector<Dim>{{-1, "N"}, {4, ""}});  // the input as declared, not as overridden
  REQUIRE(find_shape(ort, "y"));
  CHECK((!find_shape(ort, "y")->has_shape || !find_shape(ort, "y")->dims.at(0).known()));
  CHECK(both.model.graph.find_value("y")->dims == std::vector<Dim>{{3, ""}, {4, ""}});
  CHECK(!find_shape(ort, "w"));  // initializers: their dims are the tensor's in every view

  // Applied to a graph: ORT's shapes where the view has the value, the graph's own for initializers and for values
  // the view lacks (a copy the partition added); sizes stay the plan's.
  Graph g = both.model.graph;
  Value added;
  added.index = static_cast<ValueId>(g.values.size());
  added.name = "r_copy";
  added.has_shape = true;
  added.dims = {{3, ""}, {4, ""}};
  g.values.push_back(added);
  const Graph seen = planner::with_ort_shapes(g, ort);
  CHECK(seen.find_value("r")->dims == std::vector<Dim>{{-1, "N"}, {4, ""}});
  CHECK(seen.find_value("r")->bytes == g.find_value("r")->bytes);
  CHECK(seen.values.back().dims == std::vector<Dim>{{3, ""}, {4, ""}});
  CHECK(seen.find_value("w")->dims == std::vector<Dim>{{4, ""}});
}

TEST_CASE("ORT's view lists the values in the graph's order - initializers left out - then every other typed name",
          "[load]") {
  // Nodes listed out of order (n0 reads b, which n1 makes), an initializer read first, a Constant (folded into an
  // initializer by the graph, so listed after), and a value_info entry for a name no node has.
  auto model = make_model({make_node("Add", {"w", "b"}, {"c"}, "n0"), make_node("Relu", {"x"}, {"b"}, "n1"),
                           make_node("Mul", {"c", "k"}, {"d"}, "n2")},
                          {tensor_info("x", 1, {"N", "4"})}, {tensor_info("d", 1, {"N", "4"})});
  *model.mutable_graph()->add_initializer() = header_only_initializer("w", {4});
  auto* constant = model.mutable_graph()->add_node();
  *constant = make_node("Constant", {}, {"k"}, "const");
  auto* value = constant->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = header_only_initializer("", {4});
  value->mutable_t()->add_float_data(1), value->mutable_t()->add_float_data(2);
  value->mutable_t()->add_float_data(3), value->mutable_t()->add_float_data(4);
  *model.mutable_graph()->add_value_info() = tensor_info("unused", 1, {"2"});
  const auto both = onnx_io::load_model_and_ort_view(write_temp_model("ort_view_order.onnx", model), {});
  const ShapeView* ort = both.ort_shapes->get();
  REQUIRE(ort);
  std::vector<std::string> graph_order;
  for (const Value& v : both.model.graph.values)
    if (!v.is_initializer) graph_order.push_back(v.name);
  CHECK(graph_order == std::vector<std::string>{"x", "b", "c", "d"});
  CHECK(ort->names == std::vector<std::string>{"x", "b", "c", "d", "unused", "k"});
  CHECK(find_shape(*ort, "k")->dims == std::vector<Dim>{{4, ""}});
  CHECK(find_shape(*ort, "c")->dims == std::vector<Dim>{{-1, "N"}, {4, ""}});
}

TEST_CASE("ORT's view infers in the graph's order when expanded functions sit at the end of the node list",
          "[load][ort]") {
  // x[N,4] -> HardSwish -> h -> Relu -> y: ORT expands HardSwish (no kernel) into nodes appended after the Relu, and
  // infers types in topological order, so it knows y as [N,4].
  auto model = make_model({make_node("HardSwish", {"x"}, {"h"}, "hs"), make_node("Relu", {"h"}, {"y"}, "relu")},
                          {tensor_info("x", 1, {"N", "4"})}, {tensor_info("y", 1, {})});
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  onnx_io::LoadOptions options;
  options.overrides.dims["N"] = 3;
  const auto both = onnx_io::load_model_and_ort_view(write_temp_model("ort_view_inlined.onnx", model), options);
  REQUIRE(both.model.ort_functions_inlined == 1);
  CHECK(both.model.graph.nodes[0].op_type == "Relu");  // the expansion is appended
  const ShapeView* ort = both.ort_shapes->get();
  REQUIRE(ort);
  for (const char* name : {"h", "y"}) {
    INFO(name);
    REQUIRE(find_shape(*ort, name));
    CHECK(find_shape(*ort, name)->dims == std::vector<Dim>{{-1, "N"}, {4, ""}});
  }
}

TEST_CASE("ORT's shapes reach a graph's values by name whatever order the view lists them in", "[planner][ort]") {
  Graph g;
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    Value v;
    v.index = static_cast<ValueId>(g.values.size());
    v.name = name;
    v.has_shape = true;
    v.dims = {{2, ""}};
    g.values.push_back(v);
  }
  g.values[2].is_initializer = true;  // c keeps its own
  auto shape = [](const std::string& param) { return KnownShape{true, {{-1, param}}}; };
  // In place, then one missing (b), one extra (z), two swapped (e before d) and the initializer listed (c).
  ShapeView view;
  for (const char* name : {"a", "z", "e", "d", "c"}) view.add(name, shape(std::string("N") + name));
  const Graph seen = planner::with_ort_shapes(g, view);
  CHECK(seen.values[0].dims == std::vector<Dim>{{-1, "Na"}});
  CHECK(seen.values[1].dims == std::vector<Dim>{{2, ""}});
  CHECK(seen.values[2].dims == std::vector<Dim>{{2, ""}});
  CHECK(seen.values[3].dims == std::vector<Dim>{{-1, "Nd"}});
  CHECK(seen.values[4].dims == std::vector<Dim>{{-1, "Ne"}});
}

TEST_CASE("ORT's view gives a Slice of computed bounds its data's rank and a Reshape to a computed shape its length",
          "[load]") {
  // ONNX 1.12 leaves these outputs without a rank; the newer ONNX inside ORT 1.30 gives one (every dim anonymous),
  // and a chain of them gets one link after the other in the same inference pass: x[N,8] -> Slice -> a -> Slice -> b
  // (bounds from graph inputs), then Reshape(b, Concat(Shape(b), one)) -> r, a shape of 3 computed values.
  auto model =
      make_model({make_node("Slice", {"x", "starts", "ends"}, {"a"}, "slice1"),
                  make_node("Slice", {"a", "starts", "ends"}, {"b"}, "slice2"),
                  make_node("Shape", {"b"}, {"bs"}, "shape"), make_node("Concat", {"bs", "one"}, {"target"}, "concat"),
                  make_node("Reshape", {"b", "target"}, {"r"}, "reshape")},
                 {tensor_info("x", 1, {"N", "8"}), tensor_info("starts", 7, {"1"}), tensor_info("ends", 7, {"1"}),
                  tensor_info("one", 7, {"1"})},
                 {tensor_info("r", 1, {})});
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto* axis = model.mutable_graph()->mutable_node(3)->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  const auto both = onnx_io::load_model_and_ort_view(write_temp_model("ort_view_ranks.onnx", model), {});
  const ShapeView* ort = both.ort_shapes->get();
  REQUIRE(ort);
  for (const auto& [name, rank] : std::vector<std::pair<std::string, size_t>>{{"a", 2}, {"b", 2}, {"r", 3}}) {
    INFO(name);
    REQUIRE(find_shape(*ort, name));
    CHECK(find_shape(*ort, name)->has_shape);
    CHECK(find_shape(*ort, name)->dims.size() == rank);
    for (const Dim& d : find_shape(*ort, name)->dims) CHECK((!d.known() && d.param.empty()));
  }
}

TEST_CASE(
    "Overrides (--dim, --input-shape) reach memplan's view of the shapes, not ORT's, whichever declared types they "
    "change",
    "[load]") {
  // x[N,4] -> Relu -> r (declared [N,4] in value_info) -> Relu -> y (a graph output declared [N,4]). The child infers
  // ORT's view after the model's, from the types as written: a declared 3 would win over an inferred N there.
  auto model = make_model({make_node("Relu", {"x"}, {"r"}, "relu1"), make_node("Relu", {"r"}, {"y"}, "relu2")},
                          {tensor_info("x", 1, {"N", "4"})}, {tensor_info("y", 1, {"N", "4"})});
  *model.mutable_graph()->add_value_info() = tensor_info("r", 1, {"N", "4"});
  const std::string path = write_temp_model("ort_view_overrides.onnx", model);
  onnx_io::LoadOptions options;
  options.overrides.dims["N"] = 3;
  options.overrides.input_shapes["x"] = {3, 4};
  const std::vector<Dim> symbolic{{-1, "N"}, {4, ""}}, overridden{{3, ""}, {4, ""}};
  for (const bool isolated : {true, false}) {
    INFO((isolated ? "in a child" : "in this process (MEMPLAN_NO_ISOLATION=1)"));
    if (!isolated) ::setenv("MEMPLAN_NO_ISOLATION", "1", 1);
    const auto both = onnx_io::load_model_and_ort_view(path, options);
    const ShapeView* ort = both.ort_shapes->get();
    if (!isolated) ::unsetenv("MEMPLAN_NO_ISOLATION");
    REQUIRE(ort);
    for (const char* name : {"x", "r", "y"}) {
      INFO(name);
      CHECK(both.model.graph.find_value(name)->dims == overridden);
      REQUIRE(find_shape(*ort, name));
      CHECK(find_shape(*ort, name)->dims == symbolic);
    }
  }
  // Twice in a row from the same options: the first load left nothing behind.
  CHECK(find_shape(*onnx_io::load_model_and_ort_view(path, options).ort_shapes->get(), "r")->dims == symbolic);
}

TEST_CASE("ORT's view that fails is a warning naming the model and why - not an error", "[load]") {
  onnx_io::OrtShapes failing(
      [](const std::atomic<bool>&) -> ShapeView { throw std::runtime_error("the child crashed"); });
  CHECK(failing.unread_warning("m.onnx").empty());  // (not asked for yet)
  CHECK(failing.get() == nullptr);
  CHECK(failing.error() == "the child crashed");
  CHECK(failing.unread_warning("m.onnx") ==
        "m.onnx: ORT's view of the shapes could not be read (the child crashed); the ORT figures use memplan's shapes");
  onnx_io::OrtShapes read([](const std::atomic<bool>&) { return ShapeView{}; });
  CHECK(read.get() != nullptr);
  CHECK(read.unread_warning("m.onnx").empty());
}

TEST_CASE("ORT's view read ahead is cancelled when dropped: its child is killed - not waited for", "[load]") {
  const auto start = std::chrono::steady_clock::now();
  {
    // A child that would take a minute (a hung inference), read ahead, then dropped (the plan failed meanwhile).
    auto child = std::make_shared<IsolatedRun>(start_isolated(
        [] {
          ::sleep(60);
          return std::string();
        },
        "m.onnx", "a slow child"));
    onnx_io::OrtShapes slow([child](const std::atomic<bool>& cancel) -> ShapeView {
      child->finish(&cancel);
      return ShapeView{};
    });
    slow.prefetch();
    ::usleep(100'000);
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  // Read ahead and then asked for: the same view as asked for directly.
  onnx_io::OrtShapes ahead([](const std::atomic<bool>&) {
    ShapeView v;
    v.add("x", KnownShape{});
    return v;
  });
  ahead.prefetch();
  REQUIRE(ahead.get() != nullptr);
  CHECK(find_shape(*ahead.get(), "x") != nullptr);
}

TEST_CASE("the graph built beside inference (structure first, types after) equals the one built after it", "[load]") {
  // load_model builds the graph view after inference; load_model_and_ort_view builds its structure while the child
  // infers, drops the nodes but the Constant ones, and adds the types after, where inference kept the nodes (else it
  // builds after, as load_model does: mobilenet_v3's HardSwish nodes are expanded, and its nodes come from the
  // child). shufflenet has 288 Constant nodes, folded into initializers from the nodes kept.
  const std::vector<std::string> models = {MEMPLAN_SHARED_DIR "/models/resnet50.onnx",
                                           MEMPLAN_SHARED_DIR "/models/bert_like.onnx",
                                           MEMPLAN_SHARED_DIR "/models/lstm2.onnx",
                                           MEMPLAN_SOURCE_DIR "/samples/control_flow.onnx",
                                           MEMPLAN_SOURCE_DIR "/samples/scan_rnn.onnx",
                                           MEMPLAN_SOURCE_DIR "/zoo/sequence/transformer.onnx",
                                           MEMPLAN_SOURCE_DIR "/zoo/classification/shufflenet_v2_x0_5.onnx",
                                           MEMPLAN_SOURCE_DIR "/zoo/classification/mobilenet_v3_small.onnx"};
  for (const std::string& path : models) {
    INFO(path);
    onnx_io::LoadOptions options;
    const Graph after = onnx_io::load_model(path, options).graph;
    stage_times() = StageTimes{};
    const Graph beside = onnx_io::load_model_and_ort_view(path, options).model.graph;
    // Where the structure was built beside inference, --timings says so (the models with subgraphs do not).
    bool built_beside = false;
    for (const auto& [name, seconds] : stage_times().seconds)
      built_beside = built_beside || name == "graph view (types on the structure)";
    CHECK(built_beside == (path.find("control_flow") == std::string::npos &&
                           path.find("scan_rnn") == std::string::npos && path.find("mobilenet") == std::string::npos));
    REQUIRE(after.values.size() == beside.values.size());
    REQUIRE(after.nodes.size() == beside.nodes.size());
    CHECK(after.inputs == beside.inputs);
    CHECK(after.outputs == beside.outputs);
    CHECK(after.initializers == beside.initializers);
    CHECK(after.subgraphs.size() == beside.subgraphs.size());
    CHECK(after.value_by_name == beside.value_by_name);
    for (size_t i = 0; i < after.values.size(); ++i) {
      const Value &a = after.values[i], &b = beside.values[i];
      INFO(a.name);
      CHECK(a.name == b.name);
      CHECK(a.type_kind == b.type_kind);
      CHECK(a.dtype == b.dtype);
      CHECK(a.has_shape == b.has_shape);
      CHECK(a.dims == b.dims);
      CHECK(a.bytes == b.bytes);
      CHECK(a.unknown_reason == b.unknown_reason);
      CHECK((a.is_graph_input == b.is_graph_input && a.is_initializer == b.is_initializer &&
             a.is_graph_output == b.is_graph_output && a.is_outer_scope == b.is_outer_scope));
      CHECK(a.producer == b.producer);
      CHECK(a.consumers == b.consumers);
      CHECK(a.implicit_consumers == b.implicit_consumers);
    }
    for (size_t i = 0; i < after.nodes.size(); ++i) {
      const Node &a = after.nodes[i], &b = beside.nodes[i];
      CHECK((a.name == b.name && a.op_type == b.op_type && a.domain == b.domain));
      CHECK((a.inputs == b.inputs && a.outputs == b.outputs && a.implicit_inputs == b.implicit_inputs));
      CHECK(a.attributes.size() == b.attributes.size());
    }
  }
}
