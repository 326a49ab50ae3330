// End-to-end tests of the memplan executable: exit codes, messages, outputs.
#include <sys/wait.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model_builder.h"

namespace {

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

RunResult run(const std::string& args, bool with_stderr = true) {
  std::string cmd = std::string(MEMPLAN_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  RunResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

RunResult run_stdout(const std::string& args) {
  return run(args, false);
}

const std::string kSamples = MEMPLAN_SOURCE_DIR "/samples/";
const std::string kModels = MEMPLAN_SHARED_DIR "/models/";

}  // namespace

TEST_CASE("help lists the subcommands and exit codes", "[cli]") {
  auto r = run("--help");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("inspect") && Catch::Contains("Exit codes"));
  auto sub = run("inspect --help");
  CHECK(sub.exit_code == 0);
  CHECK_THAT(sub.out, Catch::Contains("--dim") && Catch::Contains("--input-shape") && Catch::Contains("--json"));
}

TEST_CASE("version flag", "[cli]") {
  auto r = run("--version");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("memplan "));
}

TEST_CASE("usage errors exit 2", "[cli]") {
  CHECK(run("").exit_code == 2);
  CHECK(run("frobnicate").exit_code == 2);
  CHECK(run("inspect").exit_code == 2);
  CHECK(run("inspect " + kSamples + "residual.onnx --order sideways").exit_code == 2);
  auto r = run("inspect " + kSamples + "residual.onnx --input-shape nope=1x2");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("'nope'"));
  CHECK(run("inspect " + kSamples + "residual.onnx --dim N=abc").exit_code == 2);
}

TEST_CASE("bad input exits 1 with one line naming the file", "[cli]") {
  auto r = run("inspect /nonexistent.onnx");
  CHECK(r.exit_code == 1);
  CHECK(r.out == "memplan: error: /nonexistent.onnx: cannot open: No such file or directory\n");
  std::string empty = memplan::testing::write_temp("cli_empty.onnx", "");
  r = run("inspect " + empty);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::StartsWith("memplan: error: " + empty + ": the file is empty"));
}

TEST_CASE("inspect prints a readable summary", "[cli]") {
  auto r = run("inspect " + kSamples + "residual.onnx");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("nodes         5"));
  CHECK_THAT(r.out, Catch::Contains("input         x float [1,16,32,32] 64.00 KiB"));
  CHECK_THAT(r.out, Catch::Contains("unknown size  0 values"));
  CHECK_THAT(r.out, Catch::Contains("Conv 2, Relu 2, Add 1"));
  CHECK_THAT(r.out, Catch::Contains("order         default: conv1 relu1 conv2 add relu2"));
}

TEST_CASE("inspect --json carries counts, sizes and the order", "[cli]") {
  auto r = run_stdout("inspect --json " + kSamples + "control_flow.onnx");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["format"] == "memplan.inspect");
  CHECK(j["nodes"] == 3);
  CHECK(j["nodes_in_subgraphs"] == 5);
  CHECK(j["subgraphs"] == 3);
  CHECK(j["unknown_size"]["count"] == 0);
  CHECK(j["initializers"]["bytes"] == 4);
  // ORT visits leaves from the highest index down: the Loop runs before the If.
  CHECK(j["execution_order"]["nodes"] == nlohmann::json::array({"relu", "loop", "if"}));
  CHECK(j["inputs"][0]["shape"] == nlohmann::json::array({4, 8}));
}

TEST_CASE("inspect reports unknown sizes by name and the dims to fix", "[cli]") {
  auto r = run_stdout("inspect --json " + kModels + "resnet50.onnx");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["unknown_size"]["count"].get<int>() > 100);
  CHECK(j["unknown_size"]["free_dims"] == nlohmann::json::array({"N"}));
  auto fixed = nlohmann::json::parse(run_stdout("inspect --json --dim N=1 " + kModels + "resnet50.onnx").out);
  CHECK(fixed["unknown_size"]["count"] == 0);
  CHECK(fixed["inputs"][0]["bytes"] == 602112);
}

TEST_CASE("inspect works on every shared model and sample", "[cli]") {
  for (const char* m : {"resnet50", "mobilenet_v2", "densenet121", "inception_v3", "squeezenet1_1", "efficientnet_b0",
                        "vit_b_16", "bert_like", "gpt_like", "lstm2"}) {
    INFO(m);
    auto r = run_stdout("inspect --json --dim N=1 --dim batch=1 --dim seq=128 " + kModels + m + ".onnx");
    CHECK(r.exit_code == 0);
    CHECK(nlohmann::json::parse(r.out)["nodes"].get<int>() > 0);
  }
  for (const char* s : {"residual", "branches", "control_flow", "free_dims", "ort_observed"}) {
    INFO(s);
    CHECK(run_stdout("inspect --dim batch=1 --dim seq=8 " + kSamples + s + ".onnx").exit_code == 0);
  }
}

TEST_CASE("partition writes ORT's config to stdout or a file, with a summary on stderr", "[cli]") {
  auto r = run_stdout("partition " + kSamples + "ort_observed.onnx");
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        R"({"devices":["0"],"streams":[["sig1","relu1","Add0","Relu0","mul1"]],"type":"DeviceBasedPartitioner"})"
        "\n");
  std::string out = memplan::testing::write_temp("cli_partition.json", "");
  auto w = run("partition --streams-per-device 2 -o " + out + " " + kSamples + "branches.onnx");
  CHECK(w.exit_code == 0);
  CHECK_THAT(w.out, Catch::Contains("2 stream(s)") && Catch::Contains("speed-up"));
  std::ifstream in(out);
  std::string written((std::istreambuf_iterator<char>(in)), {});
  CHECK(nlohmann::json::parse(written)["streams"].size() == 2);
  // Reading the written config back and writing it again gives the same bytes.
  auto again = run_stdout("partition --partition " + out + " " + kSamples + "branches.onnx");
  CHECK(again.out == written + "\n");
}

TEST_CASE("partition errors: bad configs exit 1, bad options exit 2", "[cli]") {
  std::string bad = memplan::testing::write_temp(
      "cli_bad.json", R"({"type":"DeviceBasedPartitioner","streams":[["sig1"]],"devices":["0"]})");
  auto r = run("partition --partition " + bad + " " + kSamples + "ort_observed.onnx");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains(bad + ": node 'relu1' (Relu) is in no stream"));
  CHECK(run("partition --device tpu " + kSamples + "ort_observed.onnx").exit_code == 2);
  CHECK(run("partition --streams-per-device 0 " + kSamples + "ort_observed.onnx").exit_code == 2);
  CHECK(run("partition --partition " + bad + " --streams-per-device 2 " + kSamples + "ort_observed.onnx").exit_code ==
        2);
  CHECK(run("partition --placement /nonexistent.json --device gpu " + kSamples + "ort_observed.onnx").exit_code == 1);
}

namespace {
std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}
}  // namespace

TEST_CASE("plan writes a deterministic, valid plan, and validate exits 0, or 3 on a corrupted one", "[cli]") {
  std::string a = memplan::testing::write_temp("cli_plan_a.json", ""),
              b = memplan::testing::write_temp("cli_plan_b.json", "");
  REQUIRE(run("plan " + kSamples + "branches.onnx --streams-per-device 2 -o " + a).exit_code == 0);
  REQUIRE(run("plan " + kSamples + "branches.onnx --streams-per-device 2 -o " + b).exit_code == 0);
  CHECK(read_text(a) == read_text(b));  // byte-identical
  auto text = run_stdout("plan " + kSamples + "residual.onnx --format text");
  CHECK_THAT(text.out, Catch::StartsWith("Allocation Plan:\n"));
  auto v = run("validate " + a + " --model " + kSamples + "branches.onnx");
  CHECK(v.exit_code == 0);
  CHECK_THAT(v.out, Catch::EndsWith("valid\n"));
  std::string bad = memplan::testing::write_temp("cli_plan_bad.json", "");
  REQUIRE(run("corrupt " + a + " --kind offset --seed 1 -o " + bad).exit_code == 0);
  auto r = run("validate " + bad);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.out, Catch::Contains("overlap:"));
  CHECK(run("validate " + a + " --model " + kSamples + "residual.onnx").exit_code == 3);  // another model
  CHECK(run("validate /nonexistent.json").exit_code == 1);
}

TEST_CASE("replay: exit 0 clean, 3 on a broken plan, 2 without a usable GPU for --backend cuda", "[cli]") {
  std::string plan = memplan::testing::write_temp("cli_replay.json", ""),
              bad = memplan::testing::write_temp("cli_replay_bad.json", "");
  REQUIRE(run("plan " + kSamples + "branches.onnx --streams-per-device 2 -o " + plan).exit_code == 0);
  auto ok = run_stdout("replay " + plan + " --jitter --iterations 3 --seed 5");
  CHECK(ok.exit_code == 0);
  CHECK_THAT(ok.out, Catch::Contains("replayed on cpu, 3 iteration(s)") && Catch::EndsWith("clean\n"));
  auto once = run_stdout("replay " + plan + " --jitter");  // one run: only stream 0 lagged
  CHECK(once.exit_code == 0);
  CHECK_THAT(once.out, Catch::Contains("note: only 1 of the plan's 2 streams") && Catch::Contains("--iterations 2"));
  REQUIRE(run("corrupt " + plan + " --kind offset --seed 1 -o " + bad).exit_code == 0);
  auto r = run("replay " + bad);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.out, Catch::Contains("expected 0x") && Catch::Contains("found 0x") && Catch::Contains("read by node"));
  CHECK(run("replay " + plan + " --backend tpu").exit_code == 2);
  // Here (no GPU) the CUDA back-end must say why it cannot run; on a GPU machine it must replay clean.
  auto cuda = run("replay " + plan + " --backend cuda");
  if (cuda.exit_code == 0) {
    CHECK_THAT(cuda.out, Catch::Contains("replayed on cuda"));
  } else {
    CHECK(cuda.exit_code == 2);
    CHECK_THAT(cuda.out, Catch::Contains("no usable GPU") || Catch::Contains("built without CUDA"));
  }
}

TEST_CASE("inspect on a plan: summary, JSON, SVG and HTML", "[cli]") {
  std::string plan = memplan::testing::write_temp("cli_inspect_plan.json", "");
  REQUIRE(run("plan " + kModels + "resnet50.onnx --dim N=1 -o " + plan).exit_code == 0);
  std::string svg = memplan::testing::write_temp("cli_timeline.svg", ""),
              html = memplan::testing::write_temp("cli_page.html", "");
  auto r = run_stdout("inspect " + plan + " --svg " + svg + " --html " + html + " --top 3");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out,
             Catch::Contains("arena cpu ") && Catch::Contains("peak at step") && Catch::Contains("same-shape reuse"));
  CHECK_THAT(read_text(svg), Catch::StartsWith("<svg") && Catch::Contains("<title>"));
  CHECK_THAT(read_text(html), Catch::Contains("<table id=\"values\">"));
  auto j = nlohmann::json::parse(run_stdout("inspect --json " + plan).out);
  CHECK(j["arenas"][0]["efficiency"].get<double>() > 0.99);
  CHECK(j["largest"].size() == 10);
  // The SVG parses as XML and holds one rectangle per placed value (plus frames and legend).
  std::string cmd =
      "/usr/bin/python3 -c \"import xml.etree.ElementTree as E,sys; "
      "print(len(E.parse(sys.argv[1]).getroot().findall('.//{http://www.w3.org/2000/svg}rect')))\" " +
      svg;
  FILE* pipe = popen(cmd.c_str(), "r");
  char buf[64] = {0};
  REQUIRE(fgets(buf, sizeof buf, pipe));
  CHECK(pclose(pipe) == 0);
  CHECK(std::stoi(buf) > 50);
}

TEST_CASE("budgets: --max-arena exits 4 naming the device and the biggest values, and diff exits 1 on drift", "[cli]") {
  std::string p1 = memplan::testing::write_temp("cli_budget1.json", ""),
              p2 = memplan::testing::write_temp("cli_budget2.json", "");
  auto r = run("plan " + kModels + "resnet50.onnx --dim N=1 -o " + p1 + " --max-arena cpu=50MiB");
  CHECK(r.exit_code == 4);
  CHECK_THAT(r.out, Catch::Contains("device cpu needs 106.50 MiB") && Catch::Contains("over the budget of 50.00 MiB") &&
                        Catch::Contains("biggest at the peak:"));
  CHECK(run("plan " + kModels + "resnet50.onnx --dim N=1 -o " + p1 + " --max-arena cpu=1GB").exit_code == 0);
  CHECK(run("plan " + kModels + "resnet50.onnx --dim N=1 -o " + p1 + " --max-arena cpu=lots").exit_code == 2);
  CHECK(run("plan " + kModels + "resnet50.onnx --dim N=2 -o " + p2).exit_code == 0);
  auto d = run_stdout("diff " + p1 + " " + p2);
  CHECK(d.exit_code == 1);
  CHECK_THAT(d.out, Catch::Contains("arena cpu: 9.19 MiB -> 18.38 MiB"));
  CHECK(run_stdout("diff " + p1 + " " + p1).exit_code == 0);
}

TEST_CASE("solve reads MiniMalloc CSV and writes offsets", "[cli]") {
  auto r = run_stdout("solve " + std::string(MEMPLAN_SHARED_DIR) + "/anchors/minimalloc/examples/input.12.csv");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("id,lower,upper,size,offset\nb1,0,3,4,"));
  CHECK(run("solve " + std::string(MEMPLAN_SHARED_DIR) + "/anchors/minimalloc/examples/input.12.csv --capacity 8")
            .exit_code == 4);
}

TEST_CASE("plan warns when allocated values have no size, naming the free dims", "[cli]") {
  std::string out = memplan::testing::write_temp("cli_unsized.json", "");
  auto r = run("plan " + kModels + "resnet50.onnx -o " + out);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("allocated values have no known size") && Catch::Contains("--dim N=..."));
  auto fixed = run("plan " + kModels + "resnet50.onnx --dim N=1 -o " + out);
  CHECK_THAT(fixed.out, !Catch::Contains("no known size"));
}
