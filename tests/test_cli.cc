// End-to-end tests of the memplan executable: exit codes, messages, outputs.
#include <sys/wait.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "memplan/progress.h"
#include "model_builder.h"

using namespace memplan::testing;

namespace {

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
    std::string name = m;
    std::string dims = name == "resnet50"                          ? " --dim N=1"
                       : name == "bert_like" || name == "gpt_like" ? " --dim batch=1 --dim seq=128"
                                                                   : "";
    auto r = run_stdout("inspect --json" + dims + " " + kModels + m + ".onnx");
    CHECK(r.exit_code == 0);
    CHECK(nlohmann::json::parse(r.out)["nodes"].get<int>() > 0);
  }
  for (const char* s : {"residual", "branches", "control_flow", "free_dims", "ort_observed"}) {
    INFO(s);
    std::string dims = std::string(s) == "free_dims" ? " --dim batch=1 --dim seq=8" : "";
    CHECK(run_stdout("inspect" + dims + " " + kSamples + s + ".onnx").exit_code == 0);
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
  CHECK_THAT(r.out, Catch::Contains("arena cpu ") && Catch::Contains("peak at step") &&
                        Catch::Contains("buffers side by side") && !Catch::Contains("same-shape"));
  CHECK_THAT(read_text(svg), Catch::StartsWith("<svg") && Catch::Contains("<title>"));
  CHECK_THAT(read_text(html), Catch::Contains("<table id=\"values\">"));
  auto j = nlohmann::json::parse(run_stdout("inspect --json " + plan).out);
  CHECK(j["arenas"][0]["efficiency"].get<double>() > 0.99);
  CHECK(j["complete"] == true);
  CHECK(j["devices"][0]["device"] == "cpu");
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

TEST_CASE("pictures of large plans stay small: values narrower than a pixel are drawn together", "[cli]") {
  // 6,000 steps of Sigmoid then Tanh (each output a new buffer): every value spans under a pixel of the timeline.
  std::vector<onnx::NodeProto> nodes;
  std::string last = "x";
  for (int i = 0; i < 6000; ++i) {
    const std::string out = "v" + std::to_string(i);
    nodes.push_back(make_node(i % 2 ? "Tanh" : "Sigmoid", {last}, {out}, "n" + std::to_string(i)));
    last = out;
  }
  nodes.push_back(make_node("Identity", {last}, {"y"}, "out"));
  const std::string model =
      write_temp_model("cli_long_chain.onnx",
                       make_model(nodes, {tensor_info("x", 1, {"16", "16"})}, {tensor_info("y", 1, {"16", "16"})}));
  const std::string plan = write_temp("cli_long_chain.json", ""), svg = write_temp("cli_long_chain.svg", ""),
                    html = write_temp("cli_long_chain.html", "");
  REQUIRE(run("plan " + model + " -o " + plan).exit_code == 0);
  REQUIRE(run("inspect " + plan + " --svg " + svg + " --html " + html).exit_code == 0);
  const std::string s = read_text(svg), h = read_text(html);
  CHECK_THAT(s, Catch::Contains("values too small to draw one by one") && Catch::Contains("bytes held"));
  // One bar per pixel column, one lane rect: far fewer rects than values, and a picture of kilobytes.
  std::string cmd =
      "/usr/bin/python3 -c \"import xml.etree.ElementTree as E,sys; "
      "print(len(E.parse(sys.argv[1]).getroot().findall('.//{http://www.w3.org/2000/svg}rect')))\" " +
      svg;
  const RunResult count = run_shell(cmd);
  REQUIRE(count.exit_code == 0);
  CHECK(std::stoi(count.out) < 1200);
  CHECK(s.size() < 200'000);
  // The page lists the largest values, says how many there are, and stays small too.
  CHECK_THAT(h, Catch::Contains("the 5000 largest of 6002"));
  CHECK(h.size() < 2'000'000);
}

TEST_CASE("budgets: --max-arena exits 4 naming the device and the biggest values, and diff exits 1 on drift", "[cli]") {
  std::string p1 = memplan::testing::write_temp("cli_budget1.json", ""),
              p2 = memplan::testing::write_temp("cli_budget2.json", "");
  auto r = run("plan " + kModels + "resnet50.onnx --dim N=1 -o " + p1 + " --max-arena cpu=50MiB");
  CHECK(r.exit_code == 4);
  // The device total: arenas (9.19 MiB activations, 97.31 MiB weights, outputs) and the 588 KiB input.
  CHECK_THAT(r.out, Catch::Contains("device cpu needs 107.07 MiB (activations 9.19 MiB, outputs 4.00 KiB, weights "
                                    "97.31 MiB, inputs 588.00 KiB)") &&
                        Catch::Contains("over the budget of 50.00 MiB") && Catch::Contains("biggest at the peak:"));
  CHECK(run("plan " + kModels + "resnet50.onnx --dim N=1 -o " + p1 + " --max-arena cpu=1GB").exit_code == 0);
  CHECK(run("plan " + kModels + "resnet50.onnx --dim N=1 -o " + p1 + " --max-arena cpu=lots").exit_code == 2);
  CHECK(run("plan " + kModels + "resnet50.onnx --dim N=2 -o " + p2).exit_code == 0);
  auto d = run_stdout("diff " + p1 + " " + p2);
  CHECK(d.exit_code == 1);
  CHECK_THAT(d.out, Catch::Contains("arena cpu: 9.19 MiB (9633792 B) -> 18.38 MiB (19267584 B)"));
  CHECK(run_stdout("diff " + p1 + " " + p1).exit_code == 0);
}

TEST_CASE("solve reads MiniMalloc CSV and writes offsets", "[cli]") {
  auto r = run_stdout("solve " + std::string(MEMPLAN_SHARED_DIR) + "/anchors/minimalloc/examples/input.12.csv");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("id,lower,upper,size,offset\nb1,0,3,4,"));
  CHECK(run("solve " + std::string(MEMPLAN_SHARED_DIR) + "/anchors/minimalloc/examples/input.12.csv --capacity 8")
            .exit_code == 4);
}

TEST_CASE("an unnamed node is named by its position in the reasons for unknown sizes", "[cli][gate]") {
  // #1 and #4 NonZero: sized by their data (one cause, grouped); #3 Reshape to [-1, -1]: no shape anyone can infer.
  // No node has a name.
  std::vector<onnx::NodeProto> nodes = {make_node("Relu", {"x"}, {"r"}), make_node("NonZero", {"r"}, {"nz"}),
                                        make_node("Relu", {"x"}, {"r2"}), make_node("Reshape", {"r2", "s"}, {"y"}),
                                        make_node("NonZero", {"x"}, {"nz2"})};
  onnx::ModelProto m = make_model(
      nodes, {tensor_info("x", 1, {"2", "3"})},
      {tensor_info("nz", 7, {"?", "?"}), tensor_info("y", 1, {"?", "?"}), tensor_info("nz2", 7, {"?", "?"})});
  onnx::TensorProto* shape = m.mutable_graph()->add_initializer();
  shape->set_name("s");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(-1);
  shape->add_int64_data(-1);
  auto r = run("plan " + write_temp_model("cli_unnamed_nodes.onnx", m) + " -o /dev/null");
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("2 because data-dependent: its size depends on the values computed by node #1 "
                                    "(NonZero) (and likewise 1 other)") &&
                        Catch::Contains("1 because no shape inferred for the output of node #3 (Reshape)"));
  CHECK(r.out.find("node ''") == std::string::npos);
  CHECK(r.out.find("(unnamed)") == std::string::npos);
}

TEST_CASE("the reasons for an incomplete plan come grouped: one line per cause whatever node it names", "[cli][gate]") {
  // 40 NonZero results (sized by their data) each transposed: 80 unsized values, from two causes.
  std::vector<onnx::NodeProto> nodes;
  std::vector<onnx::ValueInfoProto> outputs;
  for (int i = 0; i < 40; ++i) {
    const std::string k = std::to_string(i);
    nodes.push_back(make_node("NonZero", {"x"}, {"nz" + k}, "find" + k));
    nodes.push_back(make_node("Transpose", {"nz" + k}, {"t" + k}, "flip" + k));
    outputs.push_back(tensor_info("t" + k, 7, {"?", "?"}));
  }
  const std::string path =
      write_temp_model("cli_many_nonzero.onnx", make_model(nodes, {tensor_info("x", 1, {"2", "3"})}, outputs));
  auto r = run("plan " + path + " -o /dev/null");
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("80 values the plan must allocate have no known size (40 because data-dependent") &&
                        Catch::Contains("'find0' (NonZero) (and likewise 39 others)") &&
                        Catch::Contains("40 because data-dependent: depends on 'nz0' (and likewise 39 others)"));
  CHECK(r.out.find("find17") == std::string::npos);
  CHECK(r.out.size() < 1000);
}

TEST_CASE("plan refuses an incomplete plan unless --allow-unknown-sizes, and then marks it", "[cli][gate]") {
  std::string out = memplan::testing::write_temp("cli_unsized.json", "");
  auto r = run("plan " + kModels + "resnet50.onnx -o " + out);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("the plan would be incomplete: 26 values") && Catch::Contains("--dim N=...") &&
                        Catch::Contains("--allow-unknown-sizes"));
  auto allowed = run("plan " + kModels + "resnet50.onnx --allow-unknown-sizes -o " + out);
  CHECK(allowed.exit_code == 0);
  CHECK_THAT(allowed.out, Catch::Contains("INCOMPLETE PLAN") && Catch::Contains("needs at least"));
  auto j = nlohmann::json::parse(read_text(out));
  CHECK(j["complete"] == false);
  CHECK(j["unsized_values"].size() == 26);
  auto fixed = run("plan " + kModels + "resnet50.onnx --dim N=1 -o " + out);
  CHECK(fixed.exit_code == 0);
  CHECK_THAT(fixed.out, !Catch::Contains("no known size"));
  CHECK(nlohmann::json::parse(read_text(out))["complete"] == true);
}

// ---- The CI gate (issue 13): no false green, one answer per device, sweeps, diff, manners. ----

TEST_CASE("false green: a misspelt --dim is a usage error naming the real dims", "[cli][gate]") {
  auto r = run("plan " + kModels + "bert_like.onnx --dim batch=8 --dim sequence=128 --device gpu --max-arena " +
               "gpu:0=120MiB -o /dev/null");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("no dimension named 'sequence'") && Catch::Contains("Did you mean 'seq'?") &&
                        Catch::Contains("inputs: batch, seq."));
  // Spelt right, the same model is over that budget.
  auto ok = run("plan " + kModels + "bert_like.onnx --dim batch=8 --dim seq=128 --device gpu --max-arena " +
                "gpu:0=120MiB -o /dev/null");
  CHECK(ok.exit_code == 4);
  CHECK_THAT(ok.out, Catch::Contains("device gpu:0 needs 143.49 MiB"));
  // Every command that loads a model checks --dim names.
  CHECK(run("inspect " + kModels + "bert_like.onnx --dim sequence=128").exit_code == 2);
  CHECK(run("partition " + kModels + "bert_like.onnx --dim sequence=128 -o /dev/null").exit_code == 2);
}

TEST_CASE("false green: a dimension or input given twice with different values is a usage error", "[cli][gate]") {
  // Which one would win is not for memplan to guess (the plan records the options as given, and validate --model
  // loads the model with them): refused before any work, also where the first is a sweep.
  const std::string m = kSamples + "free_dims.onnx";
  for (const std::string twice :
       {" --dim batch=1 --dim seq=1 --dim batch=2", " --dim batch=1,2 --dim seq=1 --dim batch=2",
        " --dim batch=1 --dim seq=1 --input-shape x=1x1x64 --input-shape x=1x2x64"}) {
    INFO(twice);
    auto r = run("plan " + m + twice + " -o /dev/null");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Catch::Contains("is given twice, with different values") && !Catch::Contains("planning"));
  }
  CHECK(run("inspect " + m + " --dim batch=1 --dim batch=3").exit_code == 2);
  // The same value twice says the same thing: accepted.
  CHECK(run("plan " + m + " --dim batch=1 --dim seq=1 --dim batch=1 -o /dev/null").exit_code == 0);
}

TEST_CASE("an output that is a directory, in none, or empty is refused before any work", "[cli]") {
  const std::string dir = memplan::testing::write_temp("outdir_probe", "");
  const std::string directory = dir + ".d";
  std::filesystem::create_directories(directory);
  for (const std::string& out : {directory, directory + "/", std::string("/nonexistent-dir/plan.json")}) {
    INFO(out);
    auto r = run("plan " + kSamples + "branches.onnx -o " + out);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Catch::StartsWith("memplan: error: " + out + ": ") && !Catch::Contains("nodes on"));
    CHECK(run("plan " + kSamples + "branches.onnx --export-problem " + out + " -o /dev/null").exit_code == 1);
  }
  CHECK_THAT(run("shapes " + kSamples + "branches.onnx -o " + directory).out, Catch::Contains("is a directory"));
  CHECK(std::filesystem::is_empty(directory));  // nothing left inside it either
  // An empty path (an unset variable in a script) is a usage error, not stdout.
  auto empty = run("plan " + kSamples + "branches.onnx -o ''");
  CHECK(empty.exit_code == 2);
  CHECK_THAT(empty.out, Catch::Contains("--output: an empty path"));
  CHECK(run("inspect " + kSamples + "branches.onnx --html ''").exit_code == 2);
  // And as the file to read: bad input naming it as such.
  auto read_empty = run("inspect ''");
  CHECK(read_empty.exit_code == 1);
  CHECK_THAT(read_empty.out, Catch::StartsWith("memplan: error: '': an empty path"));
}

TEST_CASE("false green: a budget never passes a plan whose sizes are unknown", "[cli][gate]") {
  std::string out = memplan::testing::write_temp("cli_gate_incomplete.json", "");
  auto r = run("plan " + kModels + "resnet50.onnx --device gpu --max-arena gpu=100MiB -o " + out);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("incomplete") && Catch::Contains("--dim N=..."));
  auto allowed =
      run("plan " + kModels + "resnet50.onnx --device gpu --max-arena gpu=100MiB --allow-unknown-sizes -o " + out);
  CHECK(allowed.exit_code == 4);
  CHECK_THAT(allowed.out, Catch::Contains("device gpu:0: the plan is incomplete (26 values of unknown size), so it "
                                          "cannot be shown to fit the budget of 100.00 MiB"));
  // The plan was written (for inspection) and says it is incomplete.
  CHECK(nlohmann::json::parse(read_text(out))["complete"] == false);
  // Fixed, resnet50 at N=1 is over 100 MiB on the GPU.
  auto fixed = run("plan " + kModels + "resnet50.onnx --device gpu --dim N=1 --max-arena gpu=100MiB -o /dev/null");
  CHECK(fixed.exit_code == 4);
  CHECK_THAT(fixed.out, Catch::Contains("device gpu:0 needs") && Catch::Contains("over the budget of 100.00 MiB"));
}

TEST_CASE("false green: validate and inspect say an incomplete plan is incomplete", "[cli][gate]") {
  std::string out = memplan::testing::write_temp("cli_gate_incomplete2.json", "");
  REQUIRE(run("plan " + kModels + "resnet50.onnx --allow-unknown-sizes -o " + out).exit_code == 0);
  auto v = run_stdout("validate " + out);
  CHECK(v.exit_code == 3);
  CHECK_THAT(v.out, Catch::Contains("incomplete: 26 values the plan must allocate have no known size") &&
                        !Catch::Contains(": valid"));
  auto accepted = run_stdout("validate --allow-unknown-sizes " + out);
  CHECK(accepted.exit_code == 0);
  CHECK_THAT(accepted.out, Catch::Contains("valid but INCOMPLETE"));
  auto text = run_stdout("inspect " + out);
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::StartsWith("INCOMPLETE    26 values") && Catch::Contains("device cpu    at least"));
  auto j = nlohmann::json::parse(run_stdout("inspect --json " + out).out);
  CHECK(j["complete"] == false);
  CHECK(j["unsized_values"].size() == 26);
  CHECK(j["devices"][0]["complete"] == false);
  // inspect MODEL: the activation total is labelled a partial one.
  auto model = run_stdout("inspect " + kModels + "resnet50.onnx");
  CHECK_THAT(model.out, Catch::Contains("at least") && Catch::Contains("INCOMPLETE: the 123 values of unknown size"));
  auto mj = nlohmann::json::parse(run_stdout("inspect --json " + kModels + "resnet50.onnx").out);
  CHECK(mj["activations"]["complete"] == false);
}

TEST_CASE("one answer per device: plan, the plan file and inspect agree, largest device first", "[cli][gate]") {
  std::string out = memplan::testing::write_temp("cli_gate_totals.json", "");
  auto r = run("plan " + kModels + "bert_like.onnx --dim batch=2 --dim seq=64 --device gpu -o " + out);
  REQUIRE(r.exit_code == 0);
  auto plan = nlohmann::json::parse(read_text(out));
  auto j = nlohmann::json::parse(run_stdout("inspect --json " + out).out);
  REQUIRE(plan["device_totals"].size() == 2);
  REQUIRE(j["devices"].size() == 2);
  CHECK(plan["device_totals"][0]["device"] == "gpu:0");  // the GPU holds the weights: largest first
  for (size_t d = 0; d < 2; ++d) {
    INFO(d);
    CHECK(j["devices"][d]["device"] == plan["device_totals"][d]["device"]);
    CHECK(j["devices"][d]["total"] == plan["device_totals"][d]["total"]);
    auto t = plan["device_totals"][d];
    CHECK(t["total"].get<uint64_t>() == t["activations"].get<uint64_t>() + t["outputs"].get<uint64_t>() +
                                            t["weights"].get<uint64_t>() + t["inputs"].get<uint64_t>());
    CHECK(j["devices"][d]["ort_rules_total"] == plan["ort_rules_estimate"]["device_totals"][d]["total"]);
  }
  // The summary line states the same total, with the ORT-rules figure beside it.
  uint64_t gpu = plan["device_totals"][0]["total"];
  CHECK_THAT(r.out, Catch::Contains("memplan: device gpu:0 needs") && Catch::Contains("under ORT's rules"));
  CHECK(gpu > plan["device_totals"][0]["weights"].get<uint64_t>());
  CHECK_THAT(run_stdout("inspect " + out).out, Catch::Contains("under ORT's rules") &&
                                                   Catch::Contains("prediction of ONNX Runtime 1.30") &&
                                                   Catch::Contains("not kernel workspaces"));
}

TEST_CASE("inspect compares a plan with its own buffers, never calling them ORT's", "[cli][gate]") {
  std::string ort = memplan::testing::write_temp("cli_gate_ort.json", "");
  REQUIRE(run("plan " + kModels + "bert_like.onnx --dim batch=2 --dim seq=64 --like ort -o " + ort).exit_code == 0);
  auto j = nlohmann::json::parse(run_stdout("inspect --json " + ort).out);
  for (const auto& a : j["arenas"]) {
    if (a["purpose"] != "activations") continue;
    // Side by side, the plan's buffers never take less than the arena that overlaps them.
    CHECK(a["distinct_buffer_bytes"].get<uint64_t>() >= a["bytes"].get<uint64_t>());
    CHECK(a["no_reuse_bytes"].get<uint64_t>() >= a["distinct_buffer_bytes"].get<uint64_t>());
    CHECK(a["peak_by_op_type"].size() > 0);
    CHECK(a["peak_by_layer_prefix"].size() > 0);
  }
  auto text = run_stdout("inspect " + ort).out;
  CHECK_THAT(text,
             !Catch::Contains("ORT's same-shape") && Catch::Contains("by op type:") && Catch::Contains("by layer:"));
  // Under --like ort the ORT-rules figure is the plan's own total.
  auto plan = nlohmann::json::parse(read_text(ort));
  CHECK(plan["ort_rules_estimate"]["device_totals"][0]["total"] == plan["device_totals"][0]["total"]);
}

TEST_CASE("sweeps: --dim lists and ranges plan each value into one table", "[cli][gate]") {
  auto text = run_stdout("plan " + kModels + "resnet50.onnx --dim N=1,4");
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::StartsWith("dims") && Catch::Contains("N=1") && Catch::Contains("N=4"));
  auto j = nlohmann::json::parse(run_stdout("plan " + kModels + "resnet50.onnx --dim N=1..4:x2 --format json").out);
  CHECK(j["format"] == "memplan.sweep");
  REQUIRE(j["rows"].size() == 3);  // 1, 2, 4
  CHECK(j["rows"][2]["dims"]["N"] == 4);
  uint64_t a1 = j["rows"][0]["devices"][0]["activations"], a4 = j["rows"][2]["devices"][0]["activations"];
  CHECK(a4 == 4 * a1);  // resnet50's activations scale with the batch
  CHECK(j["rows"][0]["devices"][0]["weights"] == j["rows"][2]["devices"][0]["weights"]);
  // A budget is checked at every point; the failing ones are named.
  auto over = run("plan " + kModels + "resnet50.onnx --dim N=1,8 --max-arena cpu=150MiB -o /dev/null");
  CHECK(over.exit_code == 4);
  CHECK_THAT(over.out, Catch::Contains("1 of 2 plans exceed a budget") && Catch::Contains("N=8: device cpu needs"));
  // Malformed sweeps are usage errors; only plan sweeps.
  CHECK(run("plan " + kModels + "resnet50.onnx --dim N=4..1").exit_code == 2);
  CHECK(run("plan " + kModels + "resnet50.onnx --dim N=1..8:x1").exit_code == 2);
  CHECK(run("plan " + kModels + "resnet50.onnx --dim N=1,x").exit_code == 2);
  CHECK(run("inspect " + kModels + "resnet50.onnx --dim N=1,2").exit_code == 2);
}

TEST_CASE("diff for CI: 0 equal, 1 differ, 2 could not compare, 4 grown past a threshold, JSON", "[cli][gate]") {
  std::string p1 = memplan::testing::write_temp("cli_gate_d1.json", ""),
              p2 = memplan::testing::write_temp("cli_gate_d2.json", "");
  REQUIRE(run("plan " + kModels + "resnet50.onnx --dim N=1 -o " + p1).exit_code == 0);
  REQUIRE(run("plan " + kModels + "resnet50.onnx --dim N=2 -o " + p2).exit_code == 0);
  CHECK(run("diff " + p1 + " /nonexistent.json").exit_code == 2);
  CHECK(run("diff " + p1 + " " + kSamples + "residual.onnx").exit_code == 2);
  auto differ = run_stdout("diff " + p1 + " " + p2);
  CHECK(differ.exit_code == 1);
  CHECK_THAT(differ.out, Catch::StartsWith("device cpu: ") && Catch::Contains("more values changed (--all"));
  auto all = run_stdout("diff --all " + p1 + " " + p2);
  CHECK(all.out.size() > differ.out.size());
  CHECK_THAT(all.out, !Catch::Contains("more values changed"));
  auto grown = run("diff " + p1 + " " + p2 + " --fail-if-grows 5%");
  CHECK(grown.exit_code == 4);
  CHECK_THAT(grown.out, Catch::Contains("device cpu grew from") && Catch::Contains("--fail-if-grows 5%"));
  CHECK(run("diff " + p1 + " " + p2 + " --fail-if-grows 1GiB").exit_code == 0);
  CHECK(run("diff " + p2 + " " + p1 + " --fail-if-grows cpu=0%").exit_code == 0);    // shrinking never fails
  CHECK(run("diff " + p1 + " " + p2 + " --fail-if-grows gpu:0=1%").exit_code == 0);  // no such device grew
  CHECK(run("diff " + p1 + " " + p2 + " --fail-if-grows 5 percent").exit_code == 2);
  auto j = nlohmann::json::parse(run_stdout("diff --json " + p1 + " " + p2).out);
  CHECK(j["format"] == "memplan.diff");
  CHECK(j["equal"] == false);
  CHECK(j["devices"][0]["new"].get<uint64_t>() > j["devices"][0]["old"].get<uint64_t>());
  CHECK(j["changes"].size() > 50);
}

TEST_CASE("diff matches values by name, the k-th entry of a name with its k-th, wherever they stand", "[cli][gate]") {
  std::string plan = memplan::testing::write_temp("cli_diff_names.json", "");
  REQUIRE(run("plan " + kSamples + "residual.onnx -o " + plan).exit_code == 0);
  const nlohmann::json original = nlohmann::json::parse(read_text(plan));
  REQUIRE(original["values"].size() >= 9);
  // Values 6, 7, 8 renamed and resized: OLD lists X, Y, X and NEW Y, X, X (the same entries, moved).
  auto variant = [&](const std::string& file, std::vector<std::pair<std::string, int>> names_bytes) {
    nlohmann::json j = original;
    for (size_t i = 0; i < names_bytes.size(); ++i) {
      auto& v = j["values"][6 + i];
      v["name"] = names_bytes[i].first;
      v["bytes"] = names_bytes[i].second;
      v["kind"] = "Allocate";
    }
    std::string path = memplan::testing::write_temp(file, j.dump(1));
    return path;
  };
  const std::string old_plan = variant("cli_diff_old.json", {{"X", 1}, {"Y", 2}, {"X", 3}});
  const std::string moved = variant("cli_diff_moved.json", {{"Y", 2}, {"X", 1}, {"X", 3}});
  auto same = run_stdout("diff " + old_plan + " " + moved);
  CHECK(same.exit_code == 0);
  CHECK_THAT(same.out, Catch::Contains("plans are equal"));
  // The second X grows: one difference, that one (not the first X against the last).
  const std::string grown = variant("cli_diff_grown.json", {{"Y", 2}, {"X", 1}, {"X", 5}});
  auto one = run_stdout("diff " + old_plan + " " + grown);
  CHECK(one.exit_code == 1);
  CHECK_THAT(one.out, Catch::Contains("value X: bytes 3 B -> 5 B") && Catch::Contains("1 difference(s)"));
  // The same in place (the fast path: both lists name the same values in the same order).
  const std::string grown_in_place = variant("cli_diff_grown2.json", {{"X", 1}, {"Y", 2}, {"X", 5}});
  auto in_place = run_stdout("diff " + old_plan + " " + grown_in_place);
  CHECK(in_place.exit_code == 1);
  CHECK_THAT(in_place.out, Catch::Contains("value X: bytes 3 B -> 5 B") && Catch::Contains("1 difference(s)"));
  // A third X in NEW is added; a Y gone from NEW is removed.
  const std::string third = variant("cli_diff_third.json", {{"X", 1}, {"X", 3}, {"X", 2}});
  auto changed = run_stdout("diff " + old_plan + " " + third);
  CHECK(changed.exit_code == 1);
  CHECK_THAT(changed.out, Catch::Contains("value Y: removed") && Catch::Contains("value X: added") &&
                              Catch::Contains("2 difference(s)"));
}

TEST_CASE("CLI manners: suggestions, help CMD, early option checks, plans and models told apart", "[cli][gate]") {
  auto r = run("paln x.onnx");
  CHECK(r.exit_code == 2);
  CHECK(r.out ==
        "memplan: error: unknown command 'paln'. Did you mean 'plan'? Commands: inspect, shapes, partition, "
        "plan, reorder, solve, validate, diff, corrupt, replay, completion, manpage.\n");
  auto help = run_stdout("help plan");
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("--max-arena") && Catch::Contains("Examples:"));
  auto help_typo = run("help plam");
  CHECK(help_typo.exit_code == 2);
  CHECK_THAT(help_typo.out, Catch::Contains("no command 'plam'. Did you mean 'plan'?"));
  for (const char* cmd : {"inspect", "shapes", "partition", "plan", "solve", "validate", "diff", "corrupt", "replay"}) {
    INFO(cmd);
    CHECK_THAT(run_stdout(std::string(cmd) + " --help").out, Catch::Contains("Example"));
  }
  auto flag = run("plan " + kSamples + "residual.onnx --stream-per-device 2 -o /dev/null");
  CHECK(flag.exit_code == 2);
  CHECK_THAT(flag.out, Catch::StartsWith("memplan: error: plan: unknown option '--stream-per-device'. Did you mean "
                                         "'--streams-per-device'?"));
  // Options are checked before any work: no plan is written when the budget is malformed.
  std::string never = memplan::testing::write_temp("cli_gate_never.json", "untouched");
  auto bad = run("plan " + kModels + "resnet50.onnx --dim N=1 --max-arena gpu=1G -o " + never);
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.out, Catch::Contains("Did you mean 'GiB'") && !Catch::Contains("memplan: arena"));
  CHECK(read_text(never) == "untouched");
  std::string plan = memplan::testing::write_temp("cli_gate_plan.json", "");
  REQUIRE(run("plan " + kSamples + "residual.onnx -o " + plan).exit_code == 0);
  auto as_model = run("plan " + plan + " -o /dev/null");
  CHECK(as_model.exit_code == 1);
  CHECK_THAT(as_model.out, Catch::Contains("this is a memplan plan (JSON), not an ONNX model"));
  auto as_plan = run("validate " + kSamples + "residual.onnx");
  CHECK(as_plan.exit_code == 1);
  CHECK_THAT(as_plan.out, Catch::Contains("this is an ONNX model, not a memplan plan"));
  // Every reader says what a misplaced file is: solve, corrupt and replay too.
  CHECK_THAT(run("solve " + plan).out, Catch::Contains("this is a memplan plan (JSON), not a MiniMalloc problem"));
  CHECK_THAT(run("corrupt " + kSamples + "residual.onnx --kind offset").out,
             Catch::Contains("this is an ONNX model, not a memplan plan"));
  CHECK_THAT(run("replay " + kSamples + "residual.onnx").out,
             Catch::Contains("this is an ONNX model, not a memplan plan"));
  auto dims_on_plan = run("inspect " + plan + " --dim N=1");
  CHECK(dims_on_plan.exit_code == 2);
  CHECK_THAT(dims_on_plan.out, Catch::Contains("is a plan"));
}

TEST_CASE("CLI manners: - for stdin and stdout, refused where outputs collide, no JSON on a terminal", "[cli][gate]") {
  // A model from stdin, the plan to stdout, validated from stdin.
  auto piped = run_stdout("plan - -o - < " + kSamples + "residual.onnx | " + MEMPLAN_BINARY + " validate -");
  CHECK(piped.exit_code == 0);
  CHECK_THAT(piped.out, Catch::Contains("-: ") && Catch::Contains("valid"));
  std::string plan = memplan::testing::write_temp("cli_gate_stdout.json", "");
  REQUIRE(run("plan " + kSamples + "residual.onnx -o " + plan).exit_code == 0);
  // --svg -: stdout is the picture alone, the report goes to stderr.
  auto svg = run_stdout("inspect " + plan + " --svg -");
  CHECK(svg.exit_code == 0);
  CHECK_THAT(svg.out, Catch::StartsWith("<svg") && !Catch::Contains("plan          "));
  CHECK(run("inspect " + plan + " --svg - --html -").exit_code == 2);
  CHECK(run("inspect " + plan + " --svg - --json").exit_code == 2);
  CHECK(run("diff - - < " + plan).exit_code == 2);
  // On a terminal, plan without -o refuses to print megabytes of JSON (script(1) gives it a terminal).
  auto tty =
      run_shell("script -qec '" + std::string(MEMPLAN_BINARY) + " plan " + kSamples + "residual.onnx' /dev/null");
  CHECK_THAT(tty.out, Catch::Contains("write it with -o PLAN.json, or give -o - to print it here"));
  auto tty_ok =
      run_shell("script -qec '" + std::string(MEMPLAN_BINARY) + " plan " + kSamples + "residual.onnx -o -' /dev/null");
  CHECK_THAT(tty_ok.out, Catch::Contains("\"format\": \"memplan.plan\""));
}

TEST_CASE(
    "partition: alias-only nodes cost nothing, so no stream gets only them, and the summary says how ORT loads it",
    "[cli][gate]") {
  // resnet50's second stream used to hold exactly its 47 weight Identity nodes (a promised 1.24x).
  std::string config = memplan::testing::write_temp("cli_gate_config.json", "");
  auto r = run("partition " + kModels + "resnet50.onnx --dim N=1 --device gpu --streams-per-device 2 -o " + config);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("1 stream(s)") && Catch::Contains("kept one") &&
                        Catch::Contains("session.node_partition_config_file") && Catch::Contains("level 'disabled'"));
  auto j = nlohmann::json::parse(read_text(config));
  CHECK(j["streams"].size() == 1);
}

TEST_CASE("pictures: largest panel first, weights as a bar, stream lanes, named axes and blocks, an HTML summary",
          "[cli][gate]") {
  std::string plan = memplan::testing::write_temp("cli_gate_picture.json", "");
  REQUIRE(run("plan " + kModels + "bert_like.onnx --dim batch=2 --dim seq=64 --device gpu --streams-per-device 2 -o " +
              plan)
              .exit_code == 0);
  std::string svg = memplan::testing::write_temp("cli_gate_picture.svg", ""),
              html = memplan::testing::write_temp("cli_gate_picture.html", "");
  REQUIRE(run("inspect " + plan + " --svg " + svg + " --html " + html).exit_code == 0);
  std::string s = read_text(svg);
  // Panels: the GPU activation arena (megabytes) before the CPU one (bytes) and the outputs.
  auto gpu = s.find(">arena gpu:0: "), cpu = s.find(">arena cpu: "), outputs = s.find(">arena gpu:0/outputs: ");
  REQUIRE(gpu != std::string::npos);
  REQUIRE(cpu != std::string::npos);
  REQUIRE(outputs != std::string::npos);
  CHECK(gpu < outputs);
  CHECK(gpu < cpu);
  // Weights: one bar each, not a timeline panel.
  CHECK_THAT(s, Catch::Contains("weights (initializers: live for the whole run") && Catch::Contains("gpu:0/weights ") &&
                    !Catch::Contains(">arena gpu:0/weights"));
  // Device totals, stream lanes, the peak and its breakdown, node names on the x axis, names on blocks.
  CHECK_THAT(s, Catch::Contains("device gpu:0: ") && Catch::Contains(">stream 0 gpu:0<") &&
                    Catch::Contains(">stream 1 ") && Catch::Contains("; peak at step ") &&
                    Catch::Contains("at the peak, by op type") && Catch::Contains(">by layer<") &&
                    Catch::Contains(">0: /emb/Gather<") && Catch::Contains("pointer-events=\"none\">"));
  std::string h = read_text(html);
  // The page: totals first, then the picture, then the values largest first with a filter and hover links.
  auto summary = h.find("<th>device</th><th>total</th>"), picture = h.find("<svg"), table = h.find("id=\"values\"");
  CHECK(summary < picture);
  CHECK(picture < table);
  CHECK_THAT(h, Catch::Contains("id=\"filter\"") && Catch::Contains("classList.toggle('sel'") &&
                    Catch::Contains("<tr data-v="));
  auto first_row = h.find("<tr data-v=", table);
  CHECK(h.substr(first_row, 200).find("emb.weight") != std::string::npos);  // the largest value
  CHECK(h.substr(first_row, 400).find("MiB</td>") != std::string::npos);    // sizes readable
}

TEST_CASE("progress: the stage running, on a terminal only, cleared before anything else is printed",
          "[cli][progress]") {
  CHECK(memplan::stage_progress_text("parse", 0.5).empty());  // a stage is shown once it has run a second
  CHECK(memplan::stage_progress_text("parse", 2.5) == "memplan: parse... 2.5 s");
  CHECK(memplan::stage_progress_text("parse", 0.0, 0.0) == "memplan: parse... 0.0 s");

  const std::string plan = memplan::testing::write_temp("progress_plan.json", "");
  const std::string memplan_plan = std::string(MEMPLAN_BINARY) + " plan " + kSamples + "residual.onnx -o " + plan;
  // MEMPLAN_PROGRESS_AFTER=0 shows every stage at once (a sample plans in milliseconds); script(1) gives a terminal.
  auto tty = run_shell("MEMPLAN_PROGRESS_AFTER=0 script -qec '" + memplan_plan + "' /dev/null");
  REQUIRE(tty.exit_code == 0);
  INFO(tty.out);
  CHECK_THAT(tty.out, Catch::Contains("\rmemplan: read... ") && Catch::Contains("\rmemplan: write plan... "));
  // The summary starts on a cleared line, not after the status text.
  const size_t summary = tty.out.rfind("memplan: ", tty.out.find(" nodes on "));
  REQUIRE(summary != std::string::npos);
  REQUIRE(summary >= 4);
  CHECK(tty.out.substr(summary - 4, 4) == "\r\033[K");
  // Every line drawn is cleared: the last control sequence is a clear.
  const size_t last_draw = tty.out.rfind("\rmemplan: ");
  const size_t last_clear = tty.out.rfind("\r\033[K");
  CHECK(last_clear != std::string::npos);
  CHECK(last_clear < summary);
  CHECK(last_draw < last_clear);

  // Not a terminal (a CI log, a pipe): nothing but the summary, whatever the threshold.
  auto piped = run_shell("MEMPLAN_PROGRESS_AFTER=0 " + memplan_plan + " 2>&1");
  CHECK(piped.exit_code == 0);
  CHECK(piped.out.find('\r') == std::string::npos);
  CHECK(piped.out.find('\033') == std::string::npos);
  // MEMPLAN_PROGRESS=0 turns it off on a terminal too.
  auto off = run_shell("MEMPLAN_PROGRESS=0 MEMPLAN_PROGRESS_AFTER=0 script -qec '" + memplan_plan + "' /dev/null");
  CHECK(off.exit_code == 0);
  CHECK(off.out.find('\033') == std::string::npos);
  // The plan readers' stages too, and their reports after a cleared line.
  auto validate = run_shell("MEMPLAN_PROGRESS_AFTER=0 script -qec '" + std::string(MEMPLAN_BINARY) + " validate " +
                            plan + "' /dev/null");
  CHECK(validate.exit_code == 0);
  CHECK_THAT(validate.out, Catch::Contains("\rmemplan: read plan... ") &&
                               Catch::Contains("\rmemplan: check plan... ") && Catch::Contains("\r\033[K" + plan));
}
