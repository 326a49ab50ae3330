// Models with their weights inside the .onnx file: loading skips the weight bytes (onnx_io/src/model_reader.cc), so
// memory follows the graph, not the file; small shape constants are still read; `shapes -o` keeps the weights.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "cli_runner.h"
#include "memplan/onnx_io/load.h"
#include "memplan/planner/plan_io.h"
#include "model_builder.h"

using namespace memplan;
using namespace memplan::testing;

namespace {

// LAYERS MatMul layers of SIZExSIZE float weights stored inline (raw_data), then a Reshape to a shape held in a
// small int64 initializer: the shape pass must read it to size the output.
onnx::ModelProto inline_weight_model(int layers, int64_t size) {
  std::vector<onnx::NodeProto> nodes;
  std::string prev = "x";
  for (int i = 0; i < layers; ++i) {
    nodes.push_back(make_node("MatMul", {prev, "w" + std::to_string(i)}, {"y" + std::to_string(i)}));
    prev = "y" + std::to_string(i);
  }
  nodes.push_back(make_node("Reshape", {prev, "shape"}, {"r"}));
  nodes.push_back(make_node("Relu", {"r"}, {"out"}));
  auto model = make_model(nodes, {tensor_info("x", 1, {"1", std::to_string(size)})},
                          {tensor_info("out", 1, {std::to_string(size / 4), "4"})});
  auto* g = model.mutable_graph();
  for (int i = 0; i < layers; ++i) {
    auto* w = g->add_initializer();
    *w = header_only_initializer("w" + std::to_string(i), {size, size});
    w->set_raw_data(std::string(static_cast<size_t>(size * size * 4), static_cast<char>(i + 1)));
  }
  auto* shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  for (int64_t v : {size / 4, int64_t{4}}) shape->add_int64_data(v);
  return model;
}

// Runs memplan ARGS and returns its exit code and peak resident memory (KiB).
std::pair<int, long> run_measured(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  std::string binary = MEMPLAN_BINARY;
  argv.push_back(binary.data());
  std::vector<std::string> copies = args;
  for (auto& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(126);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  REQUIRE(wait4(pid, &status, 0, &usage) == pid);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, usage.ru_maxrss};
}

}  // namespace

TEST_CASE("inline weights are skipped while loading, shape constants are read", "[weights]") {
  // 8 layers of 2048x2048 floats: 128 MiB of weights in the file.
  const std::string path = write_temp_model("inline_weights.onnx", inline_weight_model(8, 2048));
  REQUIRE(std::filesystem::file_size(path) > (uint64_t{128} << 20));
  const Model m = onnx_io::load_model(path);
  size_t weights = 0;
  for (const Value& v : m.graph.values)
    if (v.is_initializer && v.name[0] == 'w') {
      ++weights;
      REQUIRE(v.bytes);
      CHECK(*v.bytes == 2048u * 2048u * 4u);
    }
  CHECK(weights == 8);
  // The Reshape's output has the shape the small initializer holds.
  const auto out =
      std::find_if(m.graph.values.begin(), m.graph.values.end(), [](const Value& v) { return v.name == "r"; });
  REQUIRE(out != m.graph.values.end());
  REQUIRE(out->bytes);
  CHECK(*out->bytes == 2048u * 4u);
  REQUIRE(out->dims.size() == 2);
  CHECK(out->dims[0].value == 512);

  // The command line's memory follows the graph: beyond what it takes on a tiny model (a sanitizer build takes far
  // more of its own), a small fraction of the 128 MiB the weights take in the file.
  const auto [base_rc, base_kib] =
      run_measured({"inspect", std::string(MEMPLAN_SOURCE_DIR) + "/samples/residual.onnx"});
  REQUIRE(base_rc == 0);
  const auto [rc, rss_kib] = run_measured({"inspect", path});
  CHECK(rc == 0);
  INFO("memplan inspect peak RSS " << rss_kib << " KiB, " << base_kib << " KiB on a tiny model");
  CHECK(rss_kib < base_kib + 24 * 1024);
  const std::string plan = write_temp("inline_weights.plan.json", "");
  const auto [plan_rc, plan_rss] = run_measured({"plan", path, "-o", plan});
  CHECK(plan_rc == 0);
  INFO("memplan plan peak RSS " << plan_rss << " KiB");
  CHECK(plan_rss < base_kib + 24 * 1024);
  // The plan names the file by the hash of all of its bytes, weights included.
  std::ifstream in(plan);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ifstream model_in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(model_in)), std::istreambuf_iterator<char>());
  CHECK(text.find("\"" + planner::sha256_hex(bytes) + "\"") != std::string::npos);
  CHECK(run("validate " + plan + " --model " + path).exit_code == 0);
}

TEST_CASE("shapes -o keeps inline weights byte for byte", "[weights]") {
  const onnx::ModelProto original = inline_weight_model(2, 512);  // 1 MiB per weight: over the skipping threshold
  const std::string path = write_temp_model("inline_small.onnx", original);
  const std::string out = write_temp("inline_small_shapes.onnx", "");
  REQUIRE(run("shapes " + path + " -o " + out).exit_code == 0);
  onnx::ModelProto written;
  std::ifstream in(out, std::ios::binary);
  REQUIRE(written.ParseFromIstream(&in));
  REQUIRE(written.graph().initializer_size() == original.graph().initializer_size());
  for (int i = 0; i < original.graph().initializer_size(); ++i)
    CHECK(written.graph().initializer(i).SerializeAsString() == original.graph().initializer(i).SerializeAsString());
}

TEST_CASE("a model cut inside a skipped weight is refused as truncated", "[weights]") {
  const onnx::ModelProto model = inline_weight_model(2, 512);
  const std::string bytes = model.SerializeAsString();
  for (size_t cut : {bytes.size() / 3, bytes.size() - 5}) {
    const std::string path = write_temp("cut.onnx", bytes.substr(0, cut));
    const auto r = run("inspect " + path);
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("not a valid ONNX model") != std::string::npos);
    CHECK(r.out.find("internal error") == std::string::npos);
  }
  // Through a pipe (no seeking) the same.
  const std::string path = write_temp("whole.onnx", bytes);
  CHECK(run_shell("cat " + path + " | " + MEMPLAN_BINARY + " inspect - 2>&1").exit_code == 0);
  CHECK(run_shell("head -c 700000 " + path + " | " + MEMPLAN_BINARY + " inspect /dev/stdin 2>&1").exit_code == 1);
}
