// The table of ORT's view (onnx_io/src/shape_table.h): its walk in node order writes the same bytes as the table of
// names, on every model it takes and on files made to defeat it, and it takes the usual files.
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "model_builder.h"
#include "shape_pass.h"
#include "shape_table.h"

using namespace memplan;
using namespace memplan::testing;
namespace fs = std::filesystem;

namespace {

// Types the model as ORT's view does (ONNX's inference, no data propagation), then compares the two ways. True when
// the walk in node order took the file.
bool walk_matches_names(onnx::ModelProto model, const std::string& what) {
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
  }
  const std::string by_names = onnx_io::shape_table_by_names(model);
  const std::optional<std::string> in_order = onnx_io::shape_table_in_order(model);
  INFO(what);
  if (in_order) CHECK(*in_order == by_names);
  CHECK(onnx_io::shape_table_part(model) == by_names);
  // (the order as the caller found it, as ORT's view's child passes it on)
  const bool listed = onnx_io::listed_in_order(model.graph());
  CHECK(onnx_io::shape_table_part(model, listed) == by_names);
  CHECK(onnx_io::shape_table_in_order(model, listed).has_value() == in_order.has_value());
  return in_order.has_value();
}

onnx::ModelProto chain_model() {
  // x -> Relu a -> Add(a, w) b -> Relu c
  onnx::ModelProto m = make_model(
      {make_node("Relu", {"x"}, {"a"}), make_node("Add", {"a", "w"}, {"b"}), make_node("Relu", {"b"}, {"c"})},
      {tensor_info("x", 1, {"4"})}, {tensor_info("c", 1, {"4"})});
  *m.mutable_graph()->add_initializer() = header_only_initializer("w", {4});
  return m;
}

onnx::NodeProto constant(const std::string& out) {
  onnx::NodeProto n = make_node("Constant", {}, {out});
  onnx::AttributeProto& a = *n.add_attribute();
  a.set_name("value");
  a.set_type(onnx::AttributeProto::TENSOR);
  *a.mutable_t() = header_only_initializer("", {4});
  return n;
}

}  // namespace

TEST_CASE("shape table: files that defeat the walk in node order get the table of names' bytes", "[load][table]") {
  // Each as ONNX's inference leaves it, and each with value_info written by hand in an order the walk cannot follow.
  SECTION("a chain, typed in node order: the walk takes it") {
    CHECK(walk_matches_names(chain_model(), "chain"));
  }
  SECTION("value_info in reverse, twice, a name declared twice") {
    onnx::ModelProto m = chain_model();
    auto* g = m.mutable_graph();
    *g->add_value_info() = tensor_info("b", 1, {"4"});
    *g->add_value_info() = tensor_info("a", 1, {"4"});
    CHECK_FALSE(walk_matches_names(m, "reversed"));
    g->clear_value_info();
    *g->add_value_info() = tensor_info("a", 1, {"4"});
    *g->add_value_info() = tensor_info("b", 1, {"4"});
    *g->add_value_info() = tensor_info("a", 1, {"2", "2"});
    CHECK_FALSE(walk_matches_names(m, "a declared twice"));
  }
  SECTION("a graph output that is a graph input, and one declared in value_info too") {
    onnx::ModelProto m = chain_model();
    *m.mutable_graph()->add_output() = tensor_info("x", 1, {"4"});
    CHECK_FALSE(walk_matches_names(m, "output is an input"));
    m = chain_model();
    auto* g = m.mutable_graph();
    g->clear_output();
    *g->add_output() = tensor_info("b", 1, {"4"});
    *g->add_output() = tensor_info("c", 1, {"4"});
    *g->add_value_info() = tensor_info("a", 1, {"4"});
    *g->add_value_info() = tensor_info("b", 1, {"N"});  // the output's declaration wins
    CHECK(walk_matches_names(m, "b in both lists"));
  }
  SECTION("initializers listed as inputs, before and after the others") {
    onnx::ModelProto m = chain_model();
    *m.mutable_graph()->add_input() = tensor_info("w", 1, {"4"});
    CHECK(walk_matches_names(m, "initializer input last"));
    auto* inputs = m.mutable_graph()->mutable_input();
    std::reverse(inputs->begin(), inputs->end());
    CHECK(walk_matches_names(m, "initializer input first"));
  }
  SECTION("Constants: read later, read before they are listed, and one that is a graph output") {
    onnx::ModelProto m =
        make_model({make_node("Relu", {"x"}, {"a"}), constant("k"), make_node("Add", {"a", "k"}, {"d"})},
                   {tensor_info("x", 1, {"4"})}, {tensor_info("d", 1, {"4"})});
    CHECK(walk_matches_names(m, "constant read after it"));
    m = make_model({make_node("Add", {"x", "k"}, {"d"}), constant("k")}, {tensor_info("x", 1, {"4"})},
                   {tensor_info("d", 1, {"4"})});
    CHECK_FALSE(walk_matches_names(m, "constant read before it"));
    m = make_model({constant("k"), make_node("Add", {"x", "k"}, {"d"})}, {tensor_info("x", 1, {"4"})},
                   {tensor_info("k", 1, {"4"}), tensor_info("d", 1, {"4"})});
    CHECK(walk_matches_names(m, "constant as graph output"));
    // One Constant typed by value_info, a later one by the graph outputs: the second is listed first.
    m = make_model(
        {constant("k1"), constant("k2"), make_node("Add", {"x", "k1"}, {"e"}), make_node("Add", {"e", "k2"}, {"d"})},
        {tensor_info("x", 1, {"4"})}, {tensor_info("k2", 1, {"4"}), tensor_info("d", 1, {"4"})});
    CHECK(walk_matches_names(m, "constants typed by either list"));
  }
  SECTION("an untyped value (a custom op) and a value read far from where it is written") {
    onnx::ModelProto m =
        make_model({make_node("Relu", {"x"}, {"a"}), make_node("Foo", {"a"}, {"b"}), make_node("Relu", {"b"}, {"c"})},
                   {tensor_info("x", 1, {"4"})}, {tensor_info("c", 1, {"4"})});
    m.mutable_graph()->mutable_node(1)->set_domain("custom");
    CHECK_FALSE(walk_matches_names(m, "custom op"));
    std::vector<onnx::NodeProto> nodes{make_node("Relu", {"x"}, {"v0"})};
    for (int i = 1; i < 40; ++i)
      nodes.push_back(make_node("Relu", {"v" + std::to_string(i - 1)}, {"v" + std::to_string(i)}));
    nodes.push_back(make_node("Add", {"v0", "v39"}, {"y"}));
    CHECK(walk_matches_names(make_model(nodes, {tensor_info("x", 1, {"4"})}, {tensor_info("y", 1, {"4"})}), "far"));
    std::rotate(nodes.begin(), nodes.begin() + 1, nodes.end());  // v0 written last, read first
    CHECK_FALSE(walk_matches_names(make_model(nodes, {tensor_info("x", 1, {"4"})}, {tensor_info("y", 1, {"4"})}),
                                   "far, out of order"));
  }
}

TEST_CASE("shape table: the walk in node order writes the same bytes on ONNX's test models and the shared ones",
          "[load][table]") {
  std::vector<std::string> paths;
  REQUIRE(fs::is_directory(MEMPLAN_TESTDATA_DIR));
  for (const auto& entry : fs::recursive_directory_iterator(MEMPLAN_TESTDATA_DIR))
    if (entry.is_regular_file() && entry.path().extension() == ".onnx") paths.push_back(entry.path().string());
  const size_t testdata = paths.size();
  for (const char* shared : {"resnet50", "gpt_like", "bert_like", "mobilenet_v2", "vit_b_16", "lstm2"})
    paths.push_back(std::string(MEMPLAN_SHARED_DIR) + "/models/" + shared + ".onnx");
  std::sort(paths.begin(), paths.begin() + static_cast<std::ptrdiff_t>(testdata));
  size_t walked = 0, shared_walked = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    std::ifstream in(paths[i], std::ios::binary);
    REQUIRE(in);
    std::stringstream bytes;
    bytes << in.rdbuf();
    onnx::ModelProto model;
    REQUIRE(model.ParseFromString(bytes.str()));
    const bool took = walk_matches_names(model, paths[i]);
    walked += took;
    if (i >= testdata) shared_walked += took;
  }
  std::cout << "shape table: the walk in node order took " << walked << " of " << paths.size() << " models\n";
  // Most files are listed in order and typed in order by inference: the comparison above is not empty.
  CHECK(walked >= testdata * 9 / 10);
  CHECK(shared_walked == 6);
}
