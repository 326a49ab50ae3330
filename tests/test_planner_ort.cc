// ONNX Runtime's allocation_planner_test.cc cases (shared/reference/ort-planner.md §C, §F) as ONNX models: the ones
// whose load matters (ChainTest through the loader, ORT's own view of shapes, Loop bodies) and the multi-stream
// cases. The single-stream cases run on graphs written as text in test_planner_text.cc, without a model file.
// "normal" is a custom op T with no properties, "inplace" an op I with MayInplace(0,0), "external" an op E
// with ExternalOutputs; shapes come from value_info, as the ORT fixture's side map gives them.
#include <catch2/catch.hpp>
#include <set>

#include "memplan/execution_order.h"
#include "memplan/onnx_io/load.h"
#include "memplan/partition/pipeline.h"
#include "memplan/planner/allocation_planner.h"
#include "memplan/planner/plan_io.h"
#include "memplan/planner/subgraphs.h"
#include "model_builder.h"
#include "planner_phases.h"

using namespace memplan;
using namespace memplan::planner;
using namespace memplan::testing;

namespace {

const char* kOps = R"({"format":"memplan.op-properties","ops":[
  {"op":"I","domain":"test","providers":["cpu","cuda"],"may_inplace":[[0,0]]},
  {"op":"E","domain":"test","providers":["cpu","cuda"],"external_outputs":true}]})";

struct Chain {
  std::vector<onnx::NodeProto> nodes;
  std::vector<onnx::ValueInfoProto> inputs, outputs, infos;
  std::vector<onnx::TensorProto> inits;
  int elem = 1;
  void node(const std::string& op, const std::string& in, const std::string& out) {
    auto n = make_node(op, {in}, {out}, "node" + std::to_string(nodes.size()));
    n.set_domain("test");
    nodes.push_back(n);
  }
  void shape(const std::string& name, std::vector<std::string> dims, int type = 0) {
    infos.push_back(tensor_info(name, type ? type : elem, dims));
  }
};

struct Planned {
  Model model;
  partition::PartitionedModel parts;
  Plan plan;
  const Graph& g() const { return parts.placed.graph; }
  AllocKind kind(const std::string& name) const { return plan.values[g().find_value(name)->index].kind; }
  std::string reused(const std::string& name) const {
    return g().values[plan.values[g().find_value(name)->index].reused_buffer].name;
  }
  std::set<std::string> freed(NodeId n) const {
    std::set<std::string> out;
    for (int a : plan.node_releases[n]) out.insert(g().values[plan.release_actions[a].value].name);
    return out;
  }
};

Planned plan_model(const onnx::ModelProto& proto, const std::string& file, ReuseMode reuse = ReuseMode::kOrt) {
  std::string path = write_temp_model(file, proto);
  Planned p{onnx_io::load_model(path), {}, {}};
  partition::PartitionRequest r;
  r.op_properties_file = write_temp("planner_ops.json", kOps);
  p.parts = partition::partition_model(p.model, r);
  PlanInput in{p.parts.placed.graph, p.parts.placed.placement, p.parts.partition, p.parts.order, p.parts.ops,
               p.parts.opset};
  PlanOptions o;
  o.reuse = reuse;
  p.plan = create_plan(in, o);
  return p;
}

onnx::ModelProto build(const Chain& c) {
  auto m = make_model(c.nodes, c.inputs, c.outputs);
  auto* op = m.add_opset_import();
  op->set_domain("test");
  op->set_version(1);
  for (const auto& vi : c.infos) *m.mutable_graph()->add_value_info() = vi;
  for (const auto& t : c.inits) *m.mutable_graph()->add_initializer() = t;
  return m;
}

onnx::ValueInfoProto untyped_output(const std::string& name, int elem = 1) {
  onnx::ValueInfoProto vi;
  vi.set_name(name);
  vi.mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  return vi;
}

using S = std::set<std::string>;

// ChainTest's graph: W -> X -> B -> Y -> Z, each [50,100], through the plain op T.
Chain chain_test() {
  Chain c;
  c.inits.push_back(header_only_initializer("W", {1}));
  c.node("T", "W", "X");
  c.node("T", "X", "B");
  c.node("T", "B", "Y");
  c.node("T", "Y", "Z");
  for (auto n : {"X", "B", "Y", "Z"}) c.shape(n, {"50", "100"});
  c.outputs.push_back(tensor_info("Z", 1, {"50", "100"}));
  return c;
}

}  // namespace

TEST_CASE("ORT ChainTest", "[planner][ort]") {
  const Chain c = chain_test();
  auto p = plan_model(build(c), "chain.onnx");
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
    auto off = plan_model(build(c), "chain_noreuse.onnx", ReuseMode::kNone);
    CHECK(off.kind("Y") == AllocKind::kAllocate);
  }
}

TEST_CASE("ORT decides reuse from its own shapes read beside the graph, as from a copy of the graph with them",
          "[planner][ort]") {
  // The chain of ChainTest: Y takes X's buffer when both are [50,100]. At load time ORT may know them as [N,100] and
  // [M,100] (free dims the user fixed for memplan): then SameSize fails and Y is allocated.
  auto p = plan_model(build(chain_test()), "chain_decision_shapes.onnx");
  REQUIRE(p.reused("Y") == "X");
  const KnownShape x_shape{true, {{-1, "N"}, {100, ""}}}, y_shape{true, {{-1, "M"}, {100, ""}}};
  const ValueId x = p.g().find_value("X")->index, y = p.g().find_value("Y")->index;
  std::vector<const KnownShape*> decision(p.g().values.size(), nullptr);
  decision[static_cast<size_t>(x)] = &x_shape;
  decision[static_cast<size_t>(y)] = &y_shape;
  PlanOptions o;
  o.reuse = ReuseMode::kOrt;
  PlanInput beside{p.g(), p.parts.placed.placement, p.parts.partition, p.parts.order, p.parts.ops, p.parts.opset};
  beside.decision_shapes = &decision;
  const Plan seen = create_plan(beside, o);
  CHECK(seen.values[static_cast<size_t>(y)].kind == AllocKind::kAllocate);
  // The same plan as from a copy of the graph with those shapes (what ORT's estimate planned before).
  Graph copy = p.g();
  copy.values[static_cast<size_t>(x)].dims = x_shape.dims;
  copy.values[static_cast<size_t>(y)].dims = y_shape.dims;
  const Plan copied = create_plan(
      PlanInput{copy, p.parts.placed.placement, p.parts.partition, p.parts.order, p.parts.ops, p.parts.opset}, o);
  REQUIRE(seen.values.size() == copied.values.size());
  for (size_t v = 0; v < seen.values.size(); ++v) {
    INFO(p.g().values[v].name);
    CHECK(seen.values[v].kind == copied.values[v].kind);
    CHECK(seen.values[v].reused_buffer == copied.values[v].reused_buffer);
  }
  CHECK(seen.node_releases == copied.node_releases);
}

namespace {

// The multi-stream cases build the placement and partition by hand: ORT's tests plan without copy nodes.
struct HandPlan {
  Model model;
  partition::Placement placement;
  partition::Partition partition;
  partition::OpTable ops = partition::OpTable::builtin();
  Plan plan;
  std::vector<std::string> steps(int stream) const {
    std::vector<std::string> out;
    for (const Step& s : plan.streams[stream].steps) {
      std::string k = step_kind_name(s.kind);
      out.push_back(k + "(" + model.graph.nodes[s.node].name + ")");
    }
    return out;
  }
};

HandPlan hand_plan(const onnx::ModelProto& proto, const std::string& file,
                   const std::vector<std::pair<partition::DeviceType, std::vector<std::string>>>& streams,
                   const std::map<std::string, partition::DeviceType>& devices) {
  HandPlan h{onnx_io::load_model(write_temp_model(file, proto)), {}, {}, partition::OpTable::builtin(), {}};
  const Graph& g = h.model.graph;
  for (const Node& n : g.nodes) h.placement.node_device.push_back({devices.at(n.name), 0});
  h.placement.reasons.assign(g.nodes.size(), "");
  h.partition.node_stream.assign(g.nodes.size(), -1);
  auto order = default_order(g);
  for (size_t s = 0; s < streams.size(); ++s) {
    h.partition.stream_device.push_back({streams[s].first, 0});
    for (const auto& name : streams[s].second)
      for (const Node& n : g.nodes)
        if (n.name == name) h.partition.node_stream[n.index] = static_cast<int>(s);
  }
  h.partition.streams.assign(streams.size(), {});
  for (NodeId n : order) h.partition.streams[h.partition.node_stream[n]].push_back(n);
  PlanInput in{g, h.placement, h.partition, order, h.ops, 14};
  h.plan = create_plan(in, {ReuseMode::kOrt});
  return h;
}

using partition::DeviceType;
constexpr auto CPU = DeviceType::kCpu;
constexpr auto GPU = DeviceType::kGpu;
using V = std::vector<std::string>;

}  // namespace

TEST_CASE("ORT's reuse walk is chosen as its IsSingleStream decides, memplan's is global", "[planner][ort]") {
  const Graph g;
  const partition::Placement placement;
  partition::Partition part;
  const std::vector<NodeId> order;
  const auto ops = partition::OpTable::builtin();
  const PlanInput in{g, placement, part, order, ops, 14};
  auto add_stream = [&](DeviceType type, std::vector<NodeId> nodes) {
    part.stream_device.push_back({type, 0});
    part.streams.push_back(std::move(nodes));
  };
  add_stream(CPU, {0});
  add_stream(GPU, {1});
  CHECK(walk_mode(in, {ReuseMode::kMemplan}) == WalkMode::kGlobal);
  CHECK(walk_mode(in, {ReuseMode::kOrt}) == WalkMode::kPerStream);
  CHECK(walk_mode(in, {ReuseMode::kNone}) == WalkMode::kPerStream);
  add_stream(GPU, {});  // an empty stream is no second stream
  CHECK(walk_mode(in, {ReuseMode::kOrt}) == WalkMode::kPerStream);
  add_stream(GPU, {2});  // two GPU streams that run nodes: ORT's baseline, then its multi-stream pass
  CHECK(walk_mode(in, {ReuseMode::kOrt}) == WalkMode::kBaseline);
  CHECK(walk_mode(in, {ReuseMode::kNone}) == WalkMode::kBaseline);
  CHECK(walk_mode(in, {ReuseMode::kMemplan}) == WalkMode::kGlobal);
}

TEST_CASE("ORT MultiStream: CPU and CUDA streams", "[planner][ort]") {
  auto m = make_model(
      {make_node("Transpose", {"Graph_input"}, {"Arg1"}, "n1"), make_node("Transpose", {"Arg1"}, {"Arg2"}, "n2"),
       make_node("Transpose", {"Arg2"}, {"Arg3"}, "n3"), make_node("Transpose", {"Arg3"}, {"Arg4"}, "n4")},
      {}, {tensor_info("Arg4", 1, {"1"})});
  *m.mutable_graph()->add_initializer() = header_only_initializer("Graph_input", {1});
  auto h = hand_plan(m, "ms1.onnx", {{CPU, {"n1", "n2", "n4"}}, {GPU, {"n3"}}},
                     {{"n1", CPU}, {"n2", CPU}, {"n3", GPU}, {"n4", CPU}});
  CHECK(h.steps(0) == V{"LaunchKernel(n1)", "LaunchKernel(n2)", "TriggerDownstream(n2)", "Barrier(n4)", "WaitOnEP(n4)",
                        "LaunchKernel(n4)"});
  CHECK(h.steps(1) == V{"Barrier(n3)", "LaunchKernel(n3)", "ActivateNotification(n3)", "TriggerDownstream(n3)"});
  CHECK(h.plan.num_barriers == 2);
}

TEST_CASE("ORT MultiStream1StreamWaitFor2Streams", "[planner][ort]") {
  auto m = make_model({make_node("Transpose", {"Graph_input"}, {"Arg1"}, "node1"),
                       make_node("Transpose", {"Graph_input"}, {"Arg2"}, "node2"),
                       make_node("Add", {"Arg1", "Arg2"}, {"Arg3"}, "node3")},
                      {tensor_info("Graph_input", 1, {"2", "2"})}, {tensor_info("Arg3", 1, {"2", "2"})});
  auto h = hand_plan(m, "ms2.onnx", {{GPU, {"node1"}}, {GPU, {"node2"}}, {GPU, {"node3"}}},
                     {{"node1", GPU}, {"node2", GPU}, {"node3", GPU}});
  CHECK(h.steps(0) == V{"LaunchKernel(node1)", "ActivateNotification(node1)", "TriggerDownstream(node1)"});
  CHECK(h.steps(1) == V{"LaunchKernel(node2)", "ActivateNotification(node2)", "TriggerDownstream(node2)"});
  CHECK(h.steps(2) ==
        V{"Barrier(node3)", "Barrier(node3)", "WaitOnEP(node3)", "WaitOnEP(node3)", "LaunchKernel(node3)"});
}

TEST_CASE("ORT MultiStreamCudaEPNodeCPUOutput", "[planner][ort]") {
  auto m = make_model(
      {make_node("MemcpyToHost", {"Graph_input"}, {"Arg1"}, "node1"),
       make_node("Transpose", {"Arg1"}, {"Arg2"}, "node2"), make_node("Transpose", {"Arg1"}, {"Arg3"}, "node3")},
      {tensor_info("Graph_input", 1, {"2", "2"})},
      {tensor_info("Arg2", 1, {"2", "2"}), tensor_info("Arg3", 1, {"2", "2"})});
  *m.mutable_graph()->add_value_info() = tensor_info("Arg1", 1, {"2", "2"});
  auto h = hand_plan(m, "ms3.onnx", {{GPU, {"node1", "node3"}}, {CPU, {"node2"}}},
                     {{"node1", GPU}, {"node2", CPU}, {"node3", GPU}});
  CHECK(h.steps(0) == V{"LaunchKernel(node1)", "ActivateNotification(node1)", "TriggerDownstream(node1)",
                        "WaitOnEP(node3)", "LaunchKernel(node3)"});
  CHECK(h.steps(1) == V{"Barrier(node2)", "WaitOnEP(node2)", "LaunchKernel(node2)"});
}

TEST_CASE("ORT MultiStreamMultiOutput: one barrier and one wait for two edges", "[planner][ort]") {
  auto rnn = make_node("RNN", {"Graph_input1", "W", "R"}, {"Arg1", "Arg2"}, "node1");
  auto* hs = rnn.add_attribute();
  hs->set_name("hidden_size");
  hs->set_type(onnx::AttributeProto::INT);
  hs->set_i(2);
  auto m = make_model({rnn, make_node("Add", {"Arg1", "Arg2"}, {"Arg3"}, "node2")},
                      {tensor_info("Graph_input1", 1, {"1", "1", "2"}), tensor_info("W", 1, {"1", "2", "2"}),
                       tensor_info("R", 1, {"1", "2", "2"})},
                      {untyped_output("Arg3")});
  auto h = hand_plan(m, "ms4.onnx", {{GPU, {"node1"}}, {CPU, {"node2"}}}, {{"node1", GPU}, {"node2", CPU}});
  CHECK(h.steps(0) == V{"LaunchKernel(node1)", "ActivateNotification(node1)", "TriggerDownstream(node1)"});
  CHECK(h.steps(1) == V{"Barrier(node2)", "WaitOnEP(node2)", "LaunchKernel(node2)"});
}

TEST_CASE("ORT MultiStream2NodesSameStreamConsumedBy1NodeInDifferentStream", "[planner][ort]") {
  auto m = make_model({make_node("Transpose", {"Graph_input1"}, {"Arg1"}, "node1"),
                       make_node("Transpose", {"Graph_input2"}, {"Arg2"}, "node2"),
                       make_node("Add", {"Arg1", "Arg2"}, {"Arg3"}, "node3")},
                      {tensor_info("Graph_input1", 1, {"2", "2"}), tensor_info("Graph_input2", 1, {"2", "2"})},
                      {tensor_info("Arg3", 1, {"2", "2"})});
  auto h = hand_plan(m, "ms5.onnx", {{GPU, {"node1", "node2"}}, {CPU, {"node3"}}},
                     {{"node1", GPU}, {"node2", GPU}, {"node3", CPU}});
  // ORT's default order runs node2 first here (the reverse DFS pops the higher index first, as checked
  // against ORT itself in interop.ort_default_order); the steps per node are ORT's.
  CHECK(h.steps(0) == V{"LaunchKernel(node2)", "ActivateNotification(node2)", "TriggerDownstream(node2)",
                        "LaunchKernel(node1)", "ActivateNotification(node1)", "TriggerDownstream(node1)"});
  CHECK(h.steps(1) ==
        V{"Barrier(node3)", "Barrier(node3)", "WaitOnEP(node3)", "WaitOnEP(node3)", "LaunchKernel(node3)"});
}

TEST_CASE("ORT ParaPlanCreation: in-place reuse on two CPU streams", "[planner][ort]") {
  auto conv = [](const std::string& x, const std::string& w, const std::string& b, const std::string& y,
                 const std::string& name, int k, int pad, int stride) {
    auto n = make_node("Conv", {x, w, b}, {y}, name);
    auto ints = [&](const char* attr, std::vector<int64_t> v) {
      auto* a = n.add_attribute();
      a->set_name(attr);
      a->set_type(onnx::AttributeProto::INTS);
      for (auto x : v) a->add_ints(x);
    };
    ints("kernel_shape", {k, k});
    ints("pads", {pad, pad, pad, pad});
    ints("strides", {stride, stride});
    return n;
  };
  auto pool = make_node("MaxPool", {"relu_0_out"}, {"maxpool_out"}, "maxpool_0");
  for (auto [attr, v] : {std::pair{"kernel_shape", 3}, {"pads", 1}, {"strides", 1}}) {
    auto* a = pool.add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::INTS);
    int reps = std::string(attr) == "pads" ? 4 : 2;
    for (int i = 0; i < reps; ++i) a->add_ints(v);
  }
  auto m = make_model({conv("graph_in", "W0", "B0", "conv_0_out", "conv_0", 7, 3, 2),
                       make_node("Relu", {"conv_0_out"}, {"relu_0_out"}, "relu_0"), pool,
                       conv("maxpool_out", "W1", "B1", "conv_1_out", "conv_1", 1, 0, 1),
                       make_node("Relu", {"conv_1_out"}, {"relu_1_out"}, "relu_1"),
                       conv("relu_1_out", "W2", "B2", "conv_2_out", "conv_2", 3, 1, 1),
                       make_node("Relu", {"conv_2_out"}, {"relu_2_out"}, "relu_2"),
                       conv("relu_2_out", "W3", "B3", "conv_3_out", "conv_3", 1, 0, 1),
                       conv("maxpool_out", "W4", "B4", "conv_4_out", "conv_4", 1, 0, 1),
                       make_node("Add", {"conv_3_out", "conv_4_out"}, {"graph_out"}, "add_0")},
                      {tensor_info("graph_in", 1, {"3", "3", "300", "300"})}, {untyped_output("graph_out")});
  auto* g = m.mutable_graph();
  for (auto [name, dims] : std::vector<std::pair<std::string, std::vector<int64_t>>>{{"W0", {64, 3, 7, 7}},
                                                                                     {"B0", {64}},
                                                                                     {"W1", {64, 64, 1, 1}},
                                                                                     {"B1", {64}},
                                                                                     {"W2", {64, 64, 3, 3}},
                                                                                     {"B2", {64}},
                                                                                     {"W3", {256, 64, 1, 1}},
                                                                                     {"B3", {256}},
                                                                                     {"W4", {256, 64, 1, 1}},
                                                                                     {"B4", {256}}})
    *g->add_initializer() = header_only_initializer(name, dims);
  auto h = hand_plan(m, "ssd.onnx",
                     {{CPU, {"conv_0", "relu_0", "maxpool_0", "conv_4", "add_0"}},
                      {CPU, {"conv_1", "relu_1", "conv_2", "relu_2", "conv_3"}}},
                     {{"conv_0", CPU},
                      {"relu_0", CPU},
                      {"maxpool_0", CPU},
                      {"conv_1", CPU},
                      {"relu_1", CPU},
                      {"conv_2", CPU},
                      {"relu_2", CPU},
                      {"conv_3", CPU},
                      {"conv_4", CPU},
                      {"add_0", CPU}});
  std::set<std::string> reused;
  for (const Value& v : h.model.graph.values)
    if (h.plan.values[v.index].kind == AllocKind::kReuse)
      reused.insert(h.model.graph.values[h.plan.values[v.index].reused_buffer].name);
  for (auto n : {"conv_0_out", "conv_1_out", "conv_2_out"}) CHECK(reused.count(n) == 1);
}

TEST_CASE("Location planning: initializers and inputs used only in a subgraph", "[planner][ort]") {
  // C12/C14: an initializer and a graph input read only inside an If's branches live where the If runs.
  onnx::GraphProto branch;
  branch.set_name("b");
  *branch.add_node() = make_node("Add", {"abs_data_out", "init_data"}, {"o"}, "add");
  *branch.add_node() = make_node("Relu", {"image_data_in"}, {"o2"}, "relu");
  *branch.add_output() = tensor_info("o", 1, {"2"});
  auto iff = make_node("If", {"if_in"}, {"if_out"}, "if");
  for (const char* name : {"then_branch", "else_branch"}) {
    auto* a = iff.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = branch;
  }
  auto m = make_model(
      {make_node("Abs", {"abs_data_in"}, {"abs_data_out"}, "abs"), iff},
      {tensor_info("abs_data_in", 1, {"2"}), tensor_info("if_in", 9, {}), tensor_info("image_data_in", 1, {"2"})},
      {tensor_info("if_out", 1, {"2"})});
  *m.mutable_graph()->add_initializer() = header_only_initializer("init_data", {1});
  auto h = hand_plan(m, "loc.onnx", {{GPU, {"abs", "if"}}}, {{"abs", GPU}, {"if", GPU}});
  const Graph& gr = h.model.graph;
  CHECK(h.plan.values[gr.find_value("init_data")->index].location.type == GPU);
  CHECK(h.plan.values[gr.find_value("image_data_in")->index].location.type == GPU);
  CHECK(h.plan.values[gr.find_value("abs_data_out")->index].location.type == GPU);
}

TEST_CASE("subgraphs are planned with outer-scope values PreExisting, and the Loop-body Share", "[planner][ort]") {
  // Loop body: (i, c_in, acc) -> (c_out = Identity(c_in), acc_out = Identity(acc), y = Add(acc, h)).
  onnx::GraphProto body;
  body.set_name("body");
  *body.add_input() = tensor_info("i", 7, {});
  *body.add_input() = tensor_info("c_in", 9, {});
  *body.add_input() = tensor_info("acc", 1, {"4"});
  *body.add_node() = make_node("Identity", {"c_in"}, {"c_out"}, "cond");
  *body.add_node() = make_node("Identity", {"acc"}, {"acc_out"}, "pass");
  *body.add_node() = make_node("Add", {"acc", "h"}, {"y"}, "add");
  *body.add_output() = tensor_info("c_out", 9, {});
  *body.add_output() = tensor_info("acc_out", 1, {"4"});
  *body.add_output() = tensor_info("y", 1, {"4"});
  auto loop = make_node("Loop", {"trips", "cond", "x"}, {"final", "ys"}, "loop");
  auto* a = loop.add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = body;
  auto m = make_model({make_node("Relu", {"x"}, {"h"}, "relu"), loop},
                      {tensor_info("trips", 7, {}), tensor_info("cond", 9, {}), tensor_info("x", 1, {"4"})},
                      {tensor_info("final", 1, {"4"}), tensor_info("ys", 1, {"3", "4"})});
  Model model = onnx_io::load_model(write_temp_model("loop.onnx", m));
  partition::PartitionRequest r;
  auto parts = partition::partition_model(model, r);
  auto subs = plan_subgraphs(parts.placed.graph, parts.placed.placement, parts.ops, parts.opset, {ReuseMode::kOrt}, {});
  REQUIRE(subs.size() == 1);
  const Graph& g = *subs[0].graph;
  const Plan& p = subs[0].plan;
  auto kind = [&](const char* name) { return p.values[g.find_value(name)->index].kind; };
  CHECK(subs[0].attribute == "body");
  CHECK(kind("h") == AllocKind::kPreExisting);  // outer scope
  CHECK(kind("acc") == AllocKind::kPreExisting);
  CHECK(kind("acc_out") == AllocKind::kShare);  // Identity of a PreExisting value other than the iteration number
  CHECK(g.values[p.values[g.find_value("acc_out")->index].reused_buffer].name == "acc");
  CHECK(kind("y") == AllocKind::kAllocateOutput);
  CHECK(kind("c_out") == AllocKind::kShare);
}
