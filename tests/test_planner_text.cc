// ONNX Runtime's allocation_planner_test.cc cases (shared/reference/ort-planner.md §C, §F) on graphs written as text
// (graph_text.h): the planner alone, from a graph in memory, without protobuf, libonnx or a model file (this binary
// links neither). "T" is an op with no properties, "test.I" one with MayInplace(0,0), "test.E" one with
// ExternalOutputs. test_planner_ort.cc keeps ChainTest from an ONNX file, for the load's part in it.
#include <catch2/catch.hpp>
#include <set>
#include <stdexcept>

#include "graph_text.h"
#include "memplan/execution_order.h"
#include "memplan/partition/op_table.h"
#include "memplan/partition/partition.h"
#include "memplan/planner/allocation_planner.h"
#include "memplan/planner/plan_io.h"

using namespace memplan;
using namespace memplan::planner;
using memplan::testing::parse_graph;

namespace {

const char* kOps = R"({"format":"memplan.op-properties","ops":[
  {"op":"I","domain":"test","providers":["cpu","cuda"],"may_inplace":[[0,0]]},
  {"op":"E","domain":"test","providers":["cpu","cuda"],"external_outputs":true}]})";

// A graph planned on the CPU, one stream, ORT's default order.
struct Planned {
  Graph g;
  partition::Placement placement;
  partition::Partition partition;
  std::vector<NodeId> order;
  partition::OpTable ops = partition::OpTable::builtin();
  Plan plan;

  explicit Planned(std::string_view text, ReuseMode reuse = ReuseMode::kOrt) : g(parse_graph(text)) {
    ops.extend_from_json(kOps, "the test's op properties");
    placement.node_device.assign(g.nodes.size(), partition::Device{});
    placement.reasons.assign(g.nodes.size(), "");
    order = default_order(g);
    partition = partition::default_partition(g, placement, order);
    PlanOptions o;
    o.reuse = reuse;
    plan = create_plan(PlanInput{g, placement, partition, order, ops, 14}, o);
  }
  AllocKind kind(const std::string& name) const { return plan.values[g.find_value(name)->index].kind; }
  std::string reused(const std::string& name) const {
    return g.values[plan.values[g.find_value(name)->index].reused_buffer].name;
  }
  std::set<std::string> freed(NodeId n) const {
    std::set<std::string> out;
    for (int a : plan.node_releases[n]) out.insert(g.values[plan.release_actions[a].value].name);
    return out;
  }
};

using S = std::set<std::string>;

}  // namespace

TEST_CASE("graph text: values, nodes and ORT's value order", "[planner][text]") {
  const Graph g = parse_graph(R"(
    input x: float[N,3]
    weight w: int64[]       # a scalar
    value y: float16[2,3]
    y, z = test.Op(x, , w) as first
    output z: bool
  )");
  REQUIRE(g.nodes.size() == 1);
  const Node& n = g.nodes[0];
  CHECK(n.name == "first");
  CHECK(n.op_type == "Op");
  CHECK(n.domain == "test");
  REQUIRE(n.inputs.size() == 3);
  CHECK(n.inputs[1] == kNoId);
  // ORT's order: graph inputs, then each node's inputs and outputs.
  std::vector<std::string> names;
  for (const Value& v : g.values) names.push_back(v.name);
  CHECK(names == std::vector<std::string>{"x", "w", "y", "z"});
  const Value& x = *g.find_value("x");
  CHECK(x.is_graph_input);
  CHECK(x.dims == std::vector<Dim>{Dim{-1, "N"}, Dim{3, ""}});
  CHECK_FALSE(x.bytes);
  CHECK(g.find_value("w")->is_initializer);
  CHECK(*g.find_value("w")->bytes == 8);
  CHECK(*g.find_value("y")->bytes == 12);
  CHECK(g.find_value("y")->producer == 0);
  CHECK(g.find_value("x")->consumers == std::vector<NodeId>{0});
  CHECK(g.find_value("z")->is_graph_output);
  CHECK_FALSE(g.find_value("z")->has_shape);
  CHECK_THROWS_WITH(parse_graph("input a: float[2]\nb = Relu(a\n"), Catch::Contains("line 2"));
  CHECK_THROWS_WITH(parse_graph("input a: floaty[2]"), Catch::Contains("unknown element type 'floaty'"));
}

TEST_CASE("ORT ChainTest, from text", "[planner][ort][text]") {
  const char* chain = R"(
    weight W: float[1]
    value X: float[50,100]
    value B: float[50,100]
    value Y: float[50,100]
    output Z: float[50,100]
    X = T(W)
    B = T(X)
    Y = T(B)
    Z = T(Y)
  )";
  const Planned p(chain);
  CHECK(p.kind("W") == AllocKind::kAllocateStatically);
  CHECK(p.kind("X") == AllocKind::kAllocate);
  CHECK(p.kind("B") == AllocKind::kAllocate);
  CHECK(p.kind("Y") == AllocKind::kReuse);
  CHECK(p.reused("Y") == "X");
  CHECK(p.kind("Z") == AllocKind::kAllocateOutput);
  CHECK(p.freed(0) == S{});
  CHECK(p.freed(1) == S{});
  CHECK(p.freed(2) == S{"B"});
  CHECK(p.freed(3) == S{"X"});
  SECTION("PR #29565: with reuse off, Y is allocated") {
    CHECK(Planned(chain, ReuseMode::kNone).kind("Y") == AllocKind::kAllocate);
  }
}

TEST_CASE("ORT InputOutputTest", "[planner][ort][text]") {
  const Planned p(R"(
    input X1: float
    input X2: float
    input Outer1: float
    output Y1: float
    output Y2: float
    output Y3: float
    Y1 = T(X1)
    Y2 = T(X2)
    Y3 = T(Outer1)
  )");
  for (auto n : {"X1", "X2", "Outer1"}) CHECK(p.kind(n) == AllocKind::kPreExisting);
  for (auto n : {"Y1", "Y2", "Y3"}) CHECK(p.kind(n) == AllocKind::kAllocateOutput);
  for (NodeId n = 0; n < 3; ++n) CHECK(p.freed(n).empty());
}

TEST_CASE("ORT InPlaceTest", "[planner][ort][text]") {
  const Planned p(R"(
    input X1: float[M,N]
    value X2: float[M,N]
    value X3: float[M,N]
    output X4: float[M,N]
    X2 = T(X1)
    X3 = test.I(X2)
    X4 = T(X3)
  )");
  CHECK(p.kind("X1") == AllocKind::kPreExisting);
  CHECK(p.kind("X2") == AllocKind::kAllocate);
  CHECK(p.kind("X3") == AllocKind::kReuse);
  CHECK(p.reused("X3") == "X2");
  CHECK(p.kind("X4") == AllocKind::kAllocateOutput);
  CHECK(p.freed(0) == S{});
  CHECK(p.freed(1) == S{});
  CHECK(p.freed(2) == S{"X2"});
  SECTION("PlanOutputTest: the text form is ORT's layout") {
    PlanContext ctx{p.g, p.plan, "inplace.onnx", "", {}};
    const std::string text = plan_to_text(ctx);
    CHECK_THAT(text, Catch::StartsWith(
                         "Allocation Plan:\n(ort_value_idx) output_name : <allocation plan>\n(0)X1 : PreExisting"));
    CHECK_THAT(text, Catch::Contains("(2)X3 : Reuse 1, Device:[DeviceType:0 MemoryType:0 DeviceId:0]"));
    CHECK_THAT(
        text, Catch::Contains(
                  "\nExecution Plan:\nStart logic stream: 0 on device: 0\nLaunchKernel - NodeIndex: 0, Name: node0\n"));
    CHECK_THAT(text, Catch::EndsWith("End logic stream : 0\n"));
  }
}

TEST_CASE("ORT ExternalOutputsTest", "[planner][ort][text]") {
  const Planned p(R"(
    input X1: float[M,N]
    value X2: float[M,N]
    value X3: float[M,N]
    output X4: float[M,N]
    X2 = test.E(X1)
    X3 = T(X2)
    X4 = T(X3)
  )");
  CHECK(p.kind("X2") == AllocKind::kAllocatedExternally);
  CHECK(p.kind("X3") == AllocKind::kAllocate);
  CHECK(p.kind("X4") == AllocKind::kAllocateOutput);
  CHECK(p.freed(0) == S{});
  CHECK(p.freed(1) == S{"X2"});
  CHECK(p.freed(2) == S{"X3"});
}

TEST_CASE("ORT ExternalOutputsNoReuseTest", "[planner][ort][text]") {
  const Planned p(R"(
    input X1: float[M,N]
    value X2: float[M,N]
    value X3: float[M,N]
    value X4: float[M,N]
    output X5: float[M,N]
    X2 = test.E(X1)
    X3 = test.I(X2)
    X4 = T(X3)
    X5 = T(X4)
  )");
  CHECK(p.kind("X2") == AllocKind::kAllocatedExternally);
  CHECK(p.kind("X3") == AllocKind::kAllocate);
  CHECK(p.kind("X4") == AllocKind::kAllocate);
  CHECK(p.kind("X5") == AllocKind::kAllocateOutput);
  CHECK(p.freed(0) == S{});
  CHECK(p.freed(1) == S{"X2"});
  CHECK(p.freed(2) == S{"X3"});
  CHECK(p.freed(3) == S{"X4"});
}

TEST_CASE("ORT InPlaceSizeMismatchTest", "[planner][ort][text]") {
  const Planned p(R"(
    input X1: float[M,N]
    value X2: float[M,N]
    value X3: float[M,K]
    value X4: float[M,N]
    output X5: float[M,N]
    X2 = T(X1)
    X3 = test.I(X2)
    X4 = T(X3)
    X5 = test.I(X4)
  )");
  CHECK(p.kind("X2") == AllocKind::kAllocate);
  CHECK(p.kind("X3") == AllocKind::kAllocate);
  CHECK(p.kind("X4") == AllocKind::kReuse);
  CHECK(p.reused("X4") == "X2");
  CHECK(p.kind("X5") == AllocKind::kAllocateOutput);
  CHECK(p.freed(0) == S{});
  CHECK(p.freed(1) == S{});
  CHECK(p.freed(2) == S{"X3"});
  CHECK(p.freed(3) == S{"X2"});
}

TEST_CASE("Freelist cases (§F) and sub-byte packing (PR #32611)", "[planner][ort][text]") {
  // Two chains A and B of element types `a` and `b`: A2 and B2 die at the second node of their chain.
  auto two_chains = [](const std::string& a, const std::string& b) {
    return Planned("input A1: " + a + "[50,100]\ninput B1: " + b + "[50,100]\nvalue A2: " + a +
                   "[50,100]\nvalue B2: " + b + "[50,100]\noutput A3: " + a + "[50,100]\noutput B3: " + b +
                   "[50,100]\nA2 = T(A1)\nA3 = T(A2)\nB2 = T(B1)\nB3 = T(B2)\n");
  };
  SECTION("reuse across element types of the same size: exactly one of A2, B2 reuses") {
    const Planned p = two_chains("float", "int32");
    CHECK((p.kind("A2") == AllocKind::kReuse) != (p.kind("B2") == AllocKind::kReuse));
  }
  SECTION("no reuse across element sizes") {
    const Planned p = two_chains("double", "int32");
    CHECK(p.kind("A2") == AllocKind::kAllocate);
    CHECK(p.kind("B2") == AllocKind::kAllocate);
  }
  SECTION("no reuse of string tensors") {
    const Planned p(R"(
      input X1: string[50,100]
      value X2: string[50,100]
      value X3: string[50,100]
      value X4: string[50,100]
      output X5: string[50,100]
      X2 = T(X1)
      X3 = T(X2)
      X4 = T(X3)
      X5 = T(X4)
    )");
    CHECK(p.kind("X4") == AllocKind::kAllocate);
  }
  SECTION("a packed uint4 buffer is not reused for a uint8 tensor of as many elements") {
    const Planned p(R"(
      input F0: float[1024]
      value Q4: uint4[1024]
      value F1: float[1024]
      value Q8: uint8[1024]
      output F2: float[1024]
      Q4 = T(F0)
      F1 = T(Q4)
      Q8 = T(F1)
      F2 = T(Q8)
    )");
    CHECK(p.kind("Q8") == AllocKind::kAllocate);
  }
}
