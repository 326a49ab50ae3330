// Every bad input gets a one-line error naming the file and what is wrong, exit code 1, no crash.
#include <catch2/catch.hpp>
#include <fstream>
#include <random>

#include "memplan/error.h"
#include "memplan/onnx_io/load.h"
#include "model_builder.h"

using namespace memplan;
using namespace memplan::testing;

namespace {

// Loads `path` expecting a bad-input error whose message names the file and contains `needle`.
void expect_bad_input(const std::string& path, const std::string& needle) {
  try {
    onnx_io::load_model(path);
    FAIL("loading " << path << " succeeded; expected an error containing '" << needle << "'");
  } catch (const Error& e) {
    std::string msg = e.what();
    INFO(msg);
    CHECK(e.code() == ExitCode::kBadInput);
    CHECK(msg.rfind(path + ": ", 0) == 0);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK_THAT(msg, Catch::Contains(needle));
  }
}

onnx::ModelProto chain() {
  return make_model({make_node("Relu", {"x"}, {"a"}, "r1"), make_node("Relu", {"a"}, {"y"}, "r2")},
                    {tensor_info("x", 1, {"2", "3"})}, {tensor_info("y", 1, {"2", "3"})});
}

}  // namespace

TEST_CASE("missing file", "[bad-input]") {
  expect_bad_input("/nonexistent/model.onnx", "cannot open");
}

TEST_CASE("directory instead of a file", "[bad-input]") {
  expect_bad_input("/tmp", "directory");
}

TEST_CASE("empty file", "[bad-input]") {
  expect_bad_input(write_temp("empty.onnx", ""), "empty");
}

TEST_CASE("random bytes", "[bad-input]") {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 20; ++trial) {
    std::string bytes(4096, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    std::string path = write_temp("random" + std::to_string(trial) + ".onnx", bytes);
    try {
      onnx_io::load_model(path);
      FAIL("random bytes loaded as a model");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::kBadInput);
      CHECK_THAT(e.what(), Catch::StartsWith(path + ": "));
    }
  }
}

TEST_CASE("truncated valid model", "[bad-input]") {
  std::string bytes = chain().SerializeAsString();
  // Every cut that ends inside a field must be reported, never crash; cut in the middle here.
  expect_bad_input(write_temp("truncated.onnx", bytes.substr(0, bytes.size() / 2)), "truncated");
  std::string shared = MEMPLAN_SHARED_DIR "/models/squeezenet1_1.onnx";
  std::ifstream in(shared, std::ios::binary);
  std::string full((std::istreambuf_iterator<char>(in)), {});
  expect_bad_input(write_temp("truncated_squeezenet.onnx", full.substr(0, full.size() - 7)), "truncated");
}

TEST_CASE("a graph with a cycle", "[bad-input]") {
  auto m = make_model({make_node("Add", {"x", "c"}, {"a"}, "n0"), make_node("Relu", {"a"}, {"b"}, "n1"),
                       make_node("Relu", {"b"}, {"c"}, "n2"), make_node("Relu", {"b"}, {"y"}, "n3")},
                      {tensor_info("x", 1, {"2"})}, {tensor_info("y", 1, {"2"})});
  expect_bad_input(write_temp_model("cycle.onnx", m), "cycle through node 'n");
}

TEST_CASE("a node input nothing produces", "[bad-input]") {
  auto m = make_model({make_node("Add", {"x", "ghost"}, {"y"}, "adder")}, {tensor_info("x", 1, {"2"})},
                      {tensor_info("y", 1, {"2"})});
  expect_bad_input(write_temp_model("dangling.onnx", m), "node 'adder' (Add) reads value 'ghost'");
}

TEST_CASE("two nodes producing the same value", "[bad-input]") {
  auto m = make_model({make_node("Relu", {"x"}, {"y"}, "first"), make_node("Sigmoid", {"x"}, {"y"}, "second")},
                      {tensor_info("x", 1, {"2"})}, {tensor_info("y", 1, {"2"})});
  expect_bad_input(write_temp_model("twice.onnx", m), "value 'y' is defined twice: by node 'first' (Relu)");
}

TEST_CASE("a negative dim", "[bad-input]") {
  auto m = chain();
  *m.mutable_graph()->mutable_input(0) = tensor_info("x", 1, {"2", "-3"});
  expect_bad_input(write_temp_model("negative.onnx", m), "value 'x' has negative dimension -3 at axis 1");
}

TEST_CASE("dims whose byte size overflows 64 bits", "[bad-input]") {
  auto m = chain();
  *m.mutable_graph()->mutable_input(0) = tensor_info("x", 1, {"4294967296", "4294967296"});
  expect_bad_input(write_temp_model("overflow.onnx", m), "overflows 64 bits");
}

TEST_CASE("an unknown element type", "[bad-input]") {
  auto m = chain();
  *m.mutable_graph()->mutable_input(0) = tensor_info("x", 99, {"2", "3"});
  expect_bad_input(write_temp_model("dtype.onnx", m), "value 'x' has element type 99");
}

TEST_CASE("a subgraph attribute that is not a graph", "[bad-input]") {
  auto m =
      make_model({make_node("If", {"c"}, {"y"}, "branch")}, {tensor_info("c", 9, {})}, {tensor_info("y", 1, {"2"})});
  auto* node = m.mutable_graph()->mutable_node(0);
  auto* then_branch = node->add_attribute();
  then_branch->set_name("then_branch");
  then_branch->set_type(onnx::AttributeProto::INT);
  then_branch->set_i(1);
  auto* else_branch = node->add_attribute();
  else_branch->set_name("else_branch");
  else_branch->set_type(onnx::AttributeProto::INT);
  else_branch->set_i(0);
  expect_bad_input(write_temp_model("notgraph.onnx", m), "attribute 'then_branch' is an int but If takes a graph");
}

TEST_CASE("errors inside a subgraph name the owning node", "[bad-input]") {
  onnx::GraphProto body;
  body.set_name("body");
  *body.add_node() = make_node("Add", {"x", "nowhere"}, {"o"}, "inner");
  *body.add_output() = tensor_info("o", 1, {"2"});
  auto m = make_model({make_node("If", {"c"}, {"y"}, "branch")}, {tensor_info("c", 9, {}), tensor_info("x", 1, {"2"})},
                      {tensor_info("y", 1, {"2"})});
  for (const char* name : {"then_branch", "else_branch"}) {
    auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = body;
  }
  expect_bad_input(write_temp_model("subgraph.onnx", m),
                   "node 'branch' (If) attribute 'then_branch': node 'inner' (Add) reads value 'nowhere'");
}

TEST_CASE("axis-like attributes out of their inputs' range are named, not left as unknown shapes", "[bad-input]") {
  // ONNX's lenient inference gives up silently on these (or, for a negative GatherND batch_dims, crashes): the error
  // must name the node, the attribute, its value and the range the input ranks allow.
  auto one = [](onnx::NodeProto node, std::vector<onnx::ValueInfoProto> inputs) {
    return make_model({std::move(node)}, std::move(inputs), {tensor_info("y", 1, {})});
  };
  auto with_int = [](onnx::NodeProto n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
    return n;
  };
  auto with_ints = [](onnx::NodeProto n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return n;
  };
  const auto x = tensor_info("x", 1, {"4", "8"});
  const auto idx = tensor_info("i", 7, {"4", "1"});
  expect_bad_input(
      write_temp_model("gather_axis.onnx",
                       one(with_int(make_node("Gather", {"x", "i"}, {"y"}, "g"), "axis", 1000000000), {x, idx})),
      "node 'g' (Gather): attribute axis=1000000000 is outside [-2, 1], the axes of its rank-2 input 'x'");
  expect_bad_input(
      write_temp_model("softmax_axis.onnx", one(with_int(make_node("Softmax", {"x"}, {"y"}, "s"), "axis", -3), {x})),
      "attribute axis=-3 is outside [-2, 1]");
  expect_bad_input(
      write_temp_model("flatten_axis.onnx", one(with_int(make_node("Flatten", {"x"}, {"y"}, "f"), "axis", 3), {x})),
      "attribute axis=3 is outside [-2, 2]");
  expect_bad_input(
      write_temp_model("concat_axis.onnx", one(with_int(make_node("Concat", {"x", "x"}, {"y"}, "c"), "axis", 2), {x})),
      "attribute axis=2 is outside [-2, 1], the axes of its rank-2 inputs");
  expect_bad_input(write_temp_model("transpose_perm.onnx",
                                    one(with_ints(make_node("Transpose", {"x"}, {"y"}, "t"), "perm", {0, 0}), {x})),
                   "attribute perm=[0,0] is not a permutation of the 2 axes");
  expect_bad_input(
      write_temp_model("reduce_axes.onnx", one(with_ints(make_node("ReduceSum", {"x"}, {"y"}, "r"), "axes", {5}), {x})),
      "attribute axes=5 is outside [-2, 1]");
  expect_bad_input(
      write_temp_model("gathernd_negative.onnx",
                       one(with_int(make_node("GatherND", {"x", "i"}, {"y"}, "n"), "batch_dims", -3), {x, idx})),
      "attribute batch_dims=-3 is negative");
  expect_bad_input(
      write_temp_model(
          "gathernd_big.onnx",
          one(with_int(make_node("GatherND", {"x", "i"}, {"y"}, "n"), "batch_dims", 1000000000), {x, idx})),
      "attribute batch_dims=1000000000 is outside [0, 1]");
  // In range (negative axes count from the back): loads.
  Model ok = onnx_io::load_model(write_temp_model(
      "gather_ok.onnx", one(with_int(make_node("Gather", {"x", "i"}, {"y"}, "g"), "axis", -2), {x, idx})));
  CHECK(ok.graph.find_value("y")->bytes);
}
