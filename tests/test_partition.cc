// Placement, copy nodes, partition configs (ORT's format) and stream splitting.
#include <catch2/catch.hpp>

#include "memplan/error.h"
#include "memplan/execution_order.h"
#include "memplan/onnx_io/load.h"
#include "memplan/partition/pipeline.h"
#include "memplan/partition/provider.h"
#include "model_builder.h"

using namespace memplan;
using namespace memplan::partition;
using namespace memplan::testing;

namespace {

Model sample(const std::string& name) {
  return onnx_io::load_model(MEMPLAN_SOURCE_DIR "/samples/" + name + ".onnx");
}

// `model` (its node `custom_node` in the "custom" domain: an op with no CUDA kernel) partitioned for a GPU.
PartitionedModel on_gpu_with_custom_op(onnx::ModelProto model, int custom_node, const std::string& file) {
  model.mutable_graph()->mutable_node(custom_node)->set_domain("custom");
  auto* op = model.add_opset_import();
  op->set_domain("custom");
  op->set_version(1);
  Model m = onnx_io::load_model(write_temp_model(file, model));
  PartitionRequest r;
  r.device = Device{DeviceType::kGpu, 0};
  r.op_properties_file = write_temp("noop.json", R"({"format":"memplan.op-properties","ops":[
      {"op":"Mystery","domain":"custom","providers":["cuda"],"kernel":false}]})");
  return partition_model(m, r);
}

void expect_config_error(const Model& m, const std::string& text, const std::string& needle) {
  OpTable ops = OpTable::builtin();
  Placement p = place_nodes(m.graph, 14, default_rules({}), ops);
  auto order = default_order(m.graph);
  std::vector<std::string> warnings;
  try {
    auto config = parse_partition_config(text, "cfg.json");
    apply_partition_config(m.graph, p, order, config, "cfg.json", warnings);
    FAIL("expected an error containing " << needle);
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kBadInput);
    CHECK_THAT(e.what(), Catch::StartsWith("cfg.json: ") && Catch::Contains(needle));
  }
}

}  // namespace

TEST_CASE("one provider row per device type names it everywhere: --device, plans, the op table, ORT", "[partition]") {
  using partition::DeviceType;
  const auto& rows = partition::providers();
  REQUIRE(rows.size() == 4);
  for (size_t i = 0; i < rows.size(); ++i) CHECK(static_cast<size_t>(rows[i].type) == i);  // enum order, no gaps
  for (const partition::Provider& p : rows) {
    const partition::Device d{p.type, p.numbered ? 2 : 0};
    const std::string name = partition::device_name(d);
    CHECK(name == std::string(p.device_word) + (p.numbered ? ":2" : ""));
    // Selectable devices parse back from their names and from the op table's; the others from neither.
    CHECK(partition::parse_device(name).has_value() == p.selectable);
    CHECK(partition::parse_device(std::string(p.op_table)).has_value() == p.selectable);
    if (p.selectable) CHECK(*partition::parse_device(name) == d);
    CHECK(partition::provider_name(p.type) == p.op_table);
    CHECK(partition::ort_provider_type(p.type) == p.ort_type);
  }
  CHECK(partition::device_name({DeviceType::kGpu, 1}) == "gpu:1");
  CHECK(*partition::parse_device("cuda:1") == partition::Device{DeviceType::kGpu, 1});
  CHECK_FALSE(partition::parse_device("cpu:1"));  // one CPU
  CHECK_FALSE(partition::parse_device("gpu:x"));
  CHECK(partition::ort_provider_type(DeviceType::kGpu) == "CUDAExecutionProvider");
  // ORT waits on notifications from CUDA's streams; a CPU kernel is done when it returns.
  CHECK(partition::provider(DeviceType::kGpu).has_wait_handle);
  CHECK_FALSE(partition::provider(DeviceType::kCpu).has_wait_handle);
  // The GPU's built-in rules parse and keep shape computations on the CPU; the CPU needs none.
  const partition::PlacementRules gpu = partition::default_rules({DeviceType::kGpu, 0});
  CHECK(gpu.cpu_fallback);
  CHECK(gpu.device == partition::Device{DeviceType::kGpu, 0});
  CHECK_FALSE(partition::default_rules({DeviceType::kCpu, 0}).cpu_fallback);
}

TEST_CASE("the op table knows ORT's kernel facts by provider and opset", "[partition]") {
  OpTable t = OpTable::builtin();
  CHECK(t.lookup("Reshape", "", 14, "cpu").alias == std::vector<std::pair<int, int>>{{0, 0}});
  CHECK(t.lookup("Reshape", "", 14, "cpu").cpu_inputs.empty());
  CHECK(t.lookup("Reshape", "", 14, "cuda").cpu_inputs == std::vector<int>{1});
  CHECK(t.lookup("Reshape", "", 4, "cuda").cpu_inputs.empty());  // since 5
  CHECK(t.lookup("Relu", "", 14, "cuda").may_inplace == std::vector<std::pair<int, int>>{{0, 0}});
  // ORT 1.30 onnxruntime/core/providers/cpu/math/clip.cc: MayInplace(0, 0) for Clip 6-10, 11, 12 and 13 onwards
  // (the table once stopped at 13, so every ReLU6 of a model importing opset 14 lost its in-place output).
  for (int opset : {6, 10, 11, 12, 13, 14, 17, 21}) {
    INFO("Clip opset " << opset);
    CHECK(t.lookup("Clip", "", opset, "cpu").may_inplace == std::vector<std::pair<int, int>>{{0, 0}});
  }
  CHECK(t.lookup("Shape", "", 14, "cuda").is_cpu_output(0));
  CHECK(t.lookup("Gelu", "com.microsoft", 1, "cuda").may_inplace.size() == 1);

  t.extend_from_json(R"({"format":"memplan.op-properties","ops":[
      {"op":"MyOp","domain":"custom","providers":["cpu"],"external_outputs":true,"alias":[[1,0]]},
      {"op":"Relu","providers":["cpu"],"may_inplace":[]}]})",
                     "user.json");
  OpFacts mine = t.lookup("MyOp", "custom", 1, "cpu");
  CHECK(mine.external_outputs);
  CHECK(mine.alias == std::vector<std::pair<int, int>>{{1, 0}});
  CHECK(t.lookup("Relu", "", 14, "cpu").may_inplace.empty());  // overridden
  CHECK_THROWS_WITH(t.extend_from_json("{", "bad.json"), Catch::StartsWith("bad.json: not valid JSON"));
  CHECK_THROWS_WITH(t.extend_from_json(R"({"format":"memplan.op-properties","ops":[{"providers":["cpu"]}]})", "x.json"),
                    Catch::Contains("ops[0]"));
}

TEST_CASE("default partition: one stream per device, node names as ORT writes them", "[partition]") {
  Model m = sample("ort_observed");
  PartitionRequest r;
  auto result = partition_model(m, r);
  CHECK(write_partition_config(result.placed.graph, result.partition) ==
        R"({"devices":["0"],"streams":[["sig1","relu1","Add0","Relu0","mul1"]],"type":"DeviceBasedPartitioner"})");
}

TEST_CASE("configs round-trip: read then write gives the same file", "[partition]") {
  for (const char* name : {"branches", "residual", "control_flow"}) {
    INFO(name);
    Model m = sample(name);
    PartitionRequest r;
    r.streams_per_device = 2;
    auto result = partition_model(m, r);
    std::string text = write_partition_config(result.placed.graph, result.partition);
    std::vector<std::string> warnings;
    Partition back = apply_partition_config(result.placed.graph, result.placed.placement, result.order,
                                            parse_partition_config(text, "x"), "x", warnings);
    CHECK(write_partition_config(result.placed.graph, back) == text);
    CHECK(warnings.empty());
  }
}

TEST_CASE("nodes in a stream run in execution order, not config order", "[partition]") {
  Model m = sample("ort_observed");
  OpTable ops = OpTable::builtin();
  Placement p = place_nodes(m.graph, 14, default_rules({}), ops);
  auto order = default_order(m.graph);
  std::vector<std::string> warnings;
  auto config = parse_partition_config(
      R"({"type":"DeviceBasedPartitioner","streams":[["mul1","Add0","ghost"],["Relu0","relu1","sig1"]],"devices":["0","0"]})",
      "c");
  Partition part = apply_partition_config(m.graph, p, order, config, "c", warnings);
  REQUIRE(part.streams.size() == 2);
  auto names = ort_node_names(m.graph, order);
  CHECK(names[part.streams[0][0]] == "Add0");
  CHECK(names[part.streams[1][0]] == "sig1");
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("'ghost'"));
}

TEST_CASE("config errors name the node, stream or device", "[partition]") {
  Model m = sample("ort_observed");
  expect_config_error(m, "not json", "not valid JSON");
  expect_config_error(m, R"({"streams":[],"devices":[]})", "missing \"type\"");
  expect_config_error(m, R"({"type":"Other","streams":[],"devices":[]})", "\"Other\"");
  expect_config_error(m, R"({"type":"DeviceBasedPartitioner","streams":[["sig1"]],"devices":["0","0"]})",
                      "1 streams but 2 devices");
  expect_config_error(
      m, R"({"type":"DeviceBasedPartitioner","streams":[["sig1","relu1","Add0","Relu0"]],"devices":["0"]})",
      "node 'mul1' (Mul) is in no stream");
  expect_config_error(
      m,
      R"({"type":"DeviceBasedPartitioner","streams":[["sig1","relu1","Add0","Relu0","mul1"],["sig1"]],"devices":["0","0"]})",
      "node 'sig1' is in stream 0 and stream 1");
  expect_config_error(
      m, R"({"type":"DeviceBasedPartitioner","streams":[["sig1","relu1","Add0","Relu0","mul1"]],"devices":["1"]})",
      "node 'sig1' is placed on cpu but stream 0 is on device type 1");
  expect_config_error(m, R"({"type":"DeviceBasedPartitioner","streams":[["sig1"]],"devices":["7"]})", "devices[0]");
}

TEST_CASE("GPU placement keeps shape computations on the CPU, as ORT's CPU fallback", "[partition]") {
  onnx_io::LoadOptions o;
  o.overrides.dims = {{"batch", 2}, {"seq", 5}};
  Model m = onnx_io::load_model(MEMPLAN_SOURCE_DIR "/samples/free_dims.onnx", o);
  PartitionRequest r;
  r.device = Device{DeviceType::kGpu, 0};
  auto result = partition_model(m, r);
  const Graph& g = result.placed.graph;
  auto on = [&](const std::string& name) {
    for (const Node& n : g.nodes)
      if (n.name == name) return result.placed.placement.node_device[n.index].type;
    FAIL("no node " << name);
    return DeviceType::kCpu;
  };
  CHECK(on("proj") == DeviceType::kGpu);
  CHECK(on("shape") == DeviceType::kGpu);         // Shape runs on the GPU and writes to CPU memory
  CHECK(on("gather_batch") == DeviceType::kCpu);  // fed by a CPU tensor and a small initializer
  CHECK(on("concat_shape") == DeviceType::kCpu);
  CHECK(on("split_heads") == DeviceType::kGpu);  // Reshape reads its shape as a CPU input
  CHECK(result.placed.copies_to_device + result.placed.copies_to_host == 0);
  CHECK(result.partition.streams.size() == 2);
  CHECK(write_partition_config(g, result.partition).find(R"("devices":["1","0"])") != std::string::npos);
}

TEST_CASE("copy nodes where values cross devices, named as ORT names them", "[partition]") {
  // relu (GPU) -> a -> mystery (no CUDA kernel: CPU) -> b -> neg (GPU) -> y
  auto model = make_model({make_node("Relu", {"x"}, {"a"}, "relu"), make_node("Mystery", {"a"}, {"b"}, "mystery"),
                           make_node("Neg", {"b"}, {"y"}, "neg")},
                          {tensor_info("x", 1, {"8"})}, {tensor_info("y", 1, {"8"})});
  *model.mutable_graph()->add_value_info() = tensor_info("b", 1, {"8"});
  auto result = on_gpu_with_custom_op(model, 1, "copies.onnx");
  const Graph& g = result.placed.graph;
  CHECK(result.placed.copies_to_host == 1);
  CHECK(result.placed.copies_to_device == 1);
  REQUIRE(g.nodes.size() == 5);
  CHECK(g.nodes[3].op_type == "MemcpyFromHost");  // FromHost copies come first
  CHECK(g.nodes[3].name == "Memcpy");
  CHECK(g.values[g.nodes[3].inputs[0]].name == "b");
  CHECK(g.values[g.nodes[3].outputs[0]].name == "b_CUDAExecutionProvider");
  CHECK(g.nodes[4].op_type == "MemcpyToHost");
  CHECK(g.nodes[4].name == "Memcpy_token_0");
  CHECK(g.values[g.nodes[4].inputs[0]].name == "a_CUDAExecutionProvider");
  CHECK(g.values[g.nodes[4].outputs[0]].name == "a");
  CHECK(g.values[g.nodes[0].outputs[0]].name == "a_CUDAExecutionProvider");  // relu writes the device copy
  CHECK(g.values[g.nodes[2].inputs[0]].name == "b_CUDAExecutionProvider");   // neg reads the device copy
  CHECK(g.find_value("b_CUDAExecutionProvider")->bytes == 32u);
  auto order = default_order(g);
  CHECK(order.size() == 5);
}

TEST_CASE("a graph input read on both devices is copied once, as ORT copies it", "[partition]") {
  // x -> relu (GPU) -> y; x -> mystery (no CUDA kernel: CPU) -> z. ORT's memcpy transformer copies a graph input
  // itself only when both sides read it (otherwise the session copies the input on its way in).
  auto model = make_model({make_node("Relu", {"x"}, {"y"}, "relu"), make_node("Mystery", {"x"}, {"z"}, "mystery")},
                          {tensor_info("x", 1, {"8"})}, {tensor_info("y", 1, {"8"}), tensor_info("z", 1, {"8"})});
  auto result = on_gpu_with_custom_op(model, 1, "input_both_sides.onnx");
  const Graph& g = result.placed.graph;
  CHECK(result.placed.copies_to_device == 1);
  CHECK(result.placed.copies_to_host == 0);
  REQUIRE(g.nodes.size() == 3);
  CHECK(g.nodes[2].op_type == "MemcpyFromHost");
  CHECK(g.values[g.nodes[2].inputs[0]].name == "x");
  CHECK(g.values[g.nodes[2].outputs[0]].name == "x_CUDAExecutionProvider");
  CHECK(g.values[g.nodes[0].inputs[0]].name == "x_CUDAExecutionProvider");  // relu reads the device copy
  CHECK(g.values[g.nodes[1].inputs[0]].name == "x");                        // mystery reads the input itself
  CHECK(default_order(g).size() == 3);
}

TEST_CASE("stream splitting runs parallel branches on separate streams", "[partition]") {
  Model m = sample("branches");
  PartitionRequest r;
  r.streams_per_device = 4;
  auto result = partition_model(m, r);
  REQUIRE(result.split);
  CHECK(result.partition.streams.size() == 2);  // two branches, the Concat joins one of them
  CHECK(result.split->estimated_us < result.split->serial_us);
  CHECK(result.split->estimated_us >= result.split->critical_path_us);
  // Each branch stays whole on its stream.
  auto names = ort_node_names(result.placed.graph, result.order);
  for (const auto& stream : result.partition.streams) {
    std::string branch = names[stream[0]].find("_a") != std::string::npos ? "_a" : "_b";
    for (NodeId n : stream)
      if (names[n] != "concat") CHECK(names[n].find(branch) != std::string::npos);
  }
}

TEST_CASE("stream splitting on a real model: every node once, streams in one device, a speed-up", "[partition]") {
  Model m = onnx_io::load_model(MEMPLAN_SHARED_DIR "/models/inception_v3.onnx");
  PartitionRequest r;
  r.streams_per_device = 4;
  auto result = partition_model(m, r);
  size_t total = 0;
  for (const auto& s : result.partition.streams) total += s.size();
  CHECK(total == m.graph.nodes.size());
  CHECK(result.partition.streams.size() > 1);
  // The speed-up is measured against one stream per device, from real work only.
  CHECK(result.split->one_stream_us / result.split->estimated_us > 1.0);
  CHECK(result.split->estimated_us >= result.split->critical_path_us);
  // No stream but the first holds only nodes ORT runs as aliases (its 83 weight Identity nodes).
  auto free = alias_only_nodes(result.placed.graph, result.placed.placement, result.ops, result.opset);
  size_t free_count = 0;
  for (bool f : free) free_count += f;
  CHECK(free_count >= 83);
  for (size_t s = 1; s < result.partition.streams.size(); ++s) {
    INFO("stream " << s);
    CHECK(std::any_of(result.partition.streams[s].begin(), result.partition.streams[s].end(),
                      [&](NodeId n) { return !free[n]; }));
  }
  CHECK_THROWS_AS(
      [&] {
        PartitionRequest both;
        both.streams_per_device = 2;
        both.config_file = "x.json";
        partition_model(m, both);
      }(),
      Error);
}
