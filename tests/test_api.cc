// The library API (memplan/memplan.h): the same plans, configs and reports as the command line, errors with the
// command line's exit codes.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "cli_runner.h"
#include "memplan/memplan.h"
#include "model_builder.h"

using namespace memplan;
using memplan::testing::run;
using memplan::testing::run_stdout;

namespace {

const std::string kSamples = std::string(MEMPLAN_SOURCE_DIR) + "/samples/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("make_plan writes the plan the command line writes, byte for byte", "[api]") {
  struct Case {
    std::string model, cli;
    PlanSettings settings;
  };
  PlanSettings free_dims;
  free_dims.shapes.dims = {{"batch", 2}, {"seq", 6}};
  PlanSettings gpu_streams;
  gpu_streams.device = "gpu";
  gpu_streams.streams_per_device = 2;
  PlanSettings like_ort;
  like_ort.like = "ort";
  PlanSettings no_reuse;
  no_reuse.reuse = "none";
  no_reuse.alignment = 64;
  for (const Case& c :
       {Case{"residual.onnx", "", {}}, Case{"free_dims.onnx", "--dim batch=2 --dim seq=6", free_dims},
        Case{"branches.onnx", "--device gpu --streams-per-device 2", gpu_streams},
        Case{"control_flow.onnx", "--like ort", like_ort}, Case{"branches.onnx", "--no-reuse --align 64", no_reuse}}) {
    INFO(c.model << " " << c.cli);
    const std::string out = memplan::testing::write_temp("api_cli.json", "");
    REQUIRE(run("plan " + kSamples + c.model + " " + c.cli + " -o " + out).exit_code == 0);
    const PlanResult r = make_plan(kSamples + c.model, c.settings);
    CHECK(r.json == slurp(out));
    CHECK(r.complete);
    REQUIRE_FALSE(r.devices.empty());
    CHECK(r.devices[0].total > 0);
    CHECK(r.devices[0].total ==
          r.devices[0].activations + r.devices[0].outputs + r.devices[0].weights + r.devices[0].inputs);
    REQUIRE_FALSE(r.arenas.empty());
    for (const auto& a : r.arenas) CHECK(a.bytes >= a.lower_bound);
    CHECK(check_plan(r.json, c.model).valid());
    save(out, r.json);
    CHECK(slurp(out) == r.json);
  }
}

TEST_CASE("make_partition and inspect give the command line's documents", "[api]") {
  PlanSettings s;
  s.streams_per_device = 2;
  const PartitionResult p = make_partition(kSamples + "branches.onnx", s);
  CHECK(p.config_json + "\n" == run_stdout("partition " + kSamples + "branches.onnx --streams-per-device 2").out);
  CHECK(p.streams == 2);
  CHECK(inspect(kSamples + "residual.onnx") == run_stdout("inspect --json " + kSamples + "residual.onnx").out);
  const std::string plan_path =
      memplan::testing::write_temp("api_inspect.json", make_plan(kSamples + "residual.onnx").json);
  CHECK(inspect(plan_path) == run_stdout("inspect --json " + plan_path).out);
}

TEST_CASE("check_plan reports what validate reports", "[api]") {
  PlanSettings s;
  s.shapes.dims = {{"batch", 2}, {"seq", 6}};
  std::string json = make_plan(kSamples + "free_dims.onnx", s).json;
  // Against the model: same file and sizes; against another model: the model check fails.
  CHECK(check_plan(json, "p", {kSamples + "free_dims.onnx", false}).valid());
  const Validation other =
      check_plan(make_plan(kSamples + "residual.onnx").json, "p", {kSamples + "branches.onnx", false});
  REQUIRE_FALSE(other.valid());
  CHECK(other.violations.front().check == "model");
  // Two values moved onto one offset: an overlap (the same finding as `memplan validate` on the file).
  const std::string path = memplan::testing::write_temp("api_check.json", json);
  const std::string corrupted = memplan::testing::write_temp("api_corrupt.json", "");
  REQUIRE(run("corrupt " + path + " --kind offset --seed 1 -o " + corrupted).exit_code == 0);
  const Validation bad = check_plan(slurp(corrupted), corrupted);
  REQUIRE_FALSE(bad.valid());
  const auto cli = run("validate " + corrupted);
  CHECK(cli.exit_code == 3);
  CHECK(cli.out.find(bad.violations.front().message) != std::string::npos);
}

TEST_CASE("API errors carry the command line's message and exit code", "[api]") {
  auto code_of = [](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      return static_cast<int>(e.code());
    }
    return 0;
  };
  PlanSettings bad_device;
  bad_device.device = "tpu";
  CHECK(code_of([&] { make_plan(kSamples + "residual.onnx", bad_device); }) == 2);
  PlanSettings bad_align;
  bad_align.alignment = 3;
  CHECK(code_of([&] { make_plan(kSamples + "residual.onnx", bad_align); }) == 2);
  CHECK(code_of([&] { make_plan(kSamples + "missing.onnx"); }) == 1);
  CHECK(code_of([&] { make_plan(kSamples + "free_dims.onnx"); }) == 1);  // incomplete: free dims
  PlanSettings allowed;
  allowed.allow_unknown_sizes = true;
  CHECK_FALSE(make_plan(kSamples + "free_dims.onnx", allowed).complete);
  CHECK(code_of([&] { check_plan("{\"format\": \"memplan.plan\"}", "broken.json"); }) == 1);
  CHECK(code_of([&] { save("/nonexistent-dir/plan.json", "{}"); }) == 1);
  try {
    make_plan(kSamples + "missing.onnx");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("missing.onnx") != std::string::npos);
  }
  CHECK(version() == run_stdout("--version").out.substr(8, version().size()));
}
