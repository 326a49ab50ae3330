#include <catch2/catch.hpp>

#include "memplan/error.h"
#include "memplan/execution_order.h"
#include "memplan/onnx_io/load.h"
#include "model_builder.h"

using namespace memplan;
using namespace memplan::testing;

namespace {
std::vector<std::string> names_in(const Graph& g, const std::vector<NodeId>& order) {
  auto names = ort_node_names(g, default_order(g));
  std::vector<std::string> out;
  for (NodeId id : order) out.push_back(names[id]);
  return out;
}
}  // namespace

TEST_CASE("default order is ORT's reverse DFS from the leaves", "[order]") {
  // ort-observed.md: relu1, sig1, unnamed Add, unnamed Relu, mul1 in file order; ORT runs sig1 first.
  Model m = onnx_io::load_model(MEMPLAN_SOURCE_DIR "/samples/ort_observed.onnx");
  CHECK(names_in(m.graph, default_order(m.graph)) ==
        std::vector<std::string>{"sig1", "relu1", "Add0", "Relu0", "mul1"});
}

TEST_CASE("default order of resnet50 starts as ORT's does", "[order]") {
  Model m = onnx_io::load_model(MEMPLAN_SHARED_DIR "/models/resnet50.onnx");
  auto order = names_in(m.graph, default_order(m.graph));
  REQUIRE(order.size() == 169);
  CHECK(order[0] == "/conv1/Conv");
  CHECK(order[1] == "/relu/Relu");
  CHECK(order[2] == "/maxpool/MaxPool");
  CHECK(order[3] == "Identity_44");
}

TEST_CASE("priority order runs Shape nodes first and is topological", "[order]") {
  auto model = make_model({make_node("Relu", {"x"}, {"a"}, "r"), make_node("Shape", {"a"}, {"s"}, "shape"),
                           make_node("Relu", {"a"}, {"b"}, "r2"), make_node("Reshape", {"b", "s"}, {"y"}, "reshape")},
                          {tensor_info("x", 1, {"2", "3"})}, {tensor_info("y", 1, {"2", "3"})});
  Model m = onnx_io::load_model(write_temp_model("priority.onnx", model));
  auto order = names_in(m.graph, priority_order(m.graph));
  CHECK(order == std::vector<std::string>{"r", "shape", "r2", "reshape"});
  auto dflt = names_in(m.graph, default_order(m.graph));
  CHECK(dflt.size() == 4);
  CHECK(dflt.back() == "reshape");
}

TEST_CASE("every order is a topological order of the graph", "[order]") {
  for (const char* name : {"inception_v3", "gpt_like", "lstm2"}) {
    Model m = onnx_io::load_model(std::string(MEMPLAN_SHARED_DIR "/models/") + name + ".onnx");
    for (auto kind : {OrderKind::kDefault, OrderKind::kPriority}) {
      auto order = execution_order(m.graph, kind);
      REQUIRE(order.size() == m.graph.nodes.size());
      std::vector<int> position(order.size(), -1);
      for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int>(i);
      auto producers = input_node_edges(m.graph);
      for (NodeId n = 0; n < static_cast<NodeId>(order.size()); ++n)
        for (NodeId p : producers[n]) CHECK(position[p] < position[n]);
    }
  }
}

TEST_CASE("unnamed nodes get ORT's OpType+counter names in default order", "[order]") {
  auto model = make_model(
      {make_node("Relu", {"x"}, {"a"}), make_node("Relu", {"a"}, {"b"}), make_node("Add", {"a", "b"}, {"y"}, "named")},
      {tensor_info("x", 1, {"2"})}, {tensor_info("y", 1, {"2"})});
  Model m = onnx_io::load_model(write_temp_model("names.onnx", model));
  auto names = ort_node_names(m.graph, default_order(m.graph));
  CHECK(names == std::vector<std::string>{"Relu0", "Relu1", "named"});
}

TEST_CASE("written order is the model's node list, and refuses a list that is not topological", "[order]") {
  // ort_observed lists relu1, sig1, Add, Relu, mul1; ORT's default order runs sig1 first (above).
  Model m = onnx_io::load_model(MEMPLAN_SOURCE_DIR "/samples/ort_observed.onnx");
  CHECK(names_in(m.graph, execution_order(m.graph, OrderKind::kWritten)) ==
        std::vector<std::string>{"relu1", "sig1", "Add0", "Relu0", "mul1"});
  CHECK(parse_order_kind("written") == OrderKind::kWritten);
  CHECK_THROWS_WITH(parse_order_kind("backwards"), Catch::Contains("use default, priority, written or memory"));

  auto model = make_model({make_node("Relu", {"y"}, {"z"}, "second"), make_node("Relu", {"x"}, {"y"}, "first")},
                          {tensor_info("x", 1, {"4"})}, {tensor_info("z", 1, {"4"})});
  Model unsorted = onnx_io::load_model(write_temp_model("unsorted.onnx", model));
  CHECK(names_in(unsorted.graph, default_order(unsorted.graph)) == std::vector<std::string>{"first", "second"});
  try {
    execution_order(unsorted.graph, OrderKind::kWritten);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kBadInput);
    CHECK_THAT(e.what(), Catch::Contains("lists node 'second' (Relu) before its producer node 'first' ("));
  }
}
