// Hostile input (issue 16): every class of input that once crashed memplan, hung it, exhausted its memory or
// injected into its output, each with a case that fails fast with one message and a documented exit code. The
// fuzz targets (fuzz/) search for more; every input they find lands in tests/hostile/ and runs here.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "memplan/arena/bound.h"
#include "memplan/arena/solve.h"
#include "memplan/error.h"
#include "memplan/isolated.h"
#include "memplan/onnx_io/load.h"
#include "memplan/text_escape.h"
#include "model_builder.h"

using namespace memplan;
using namespace memplan::testing;
namespace fs = std::filesystem;

namespace {

const std::string kSamples = MEMPLAN_SOURCE_DIR "/samples/";

bool has_raw_control(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return is_control_byte(static_cast<unsigned char>(c)); });
}

// The command failed as documented: exit `code`, an error line containing `needle`, no internal error, nothing
// raw that could drive a terminal. (Sanitizer reports of a crashed child may precede the line: the last one counts.)
void expect_failure(const RunResult& r, int code, const std::string& needle) {
  INFO(r.out);
  CHECK(r.exit_code == code);
  CHECK(r.out.find("memplan: internal error") == std::string::npos);
  const size_t at = r.out.rfind("memplan: error: ");
  REQUIRE(at != std::string::npos);
  CHECK_THAT(r.out.substr(at), Catch::Contains(needle));
  CHECK_FALSE(has_raw_control(r.out.substr(at)));
}

// Loading `model` gives Error(kBadInput) naming the file and containing `needle`, or loads.
void expect_load_fails(const onnx::ModelProto& model, const std::string& file, const std::string& needle) {
  const std::string path = write_temp_model(file, model);
  expect_failure(run("inspect " + path), 1, needle);
}

onnx::NodeProto with_int(onnx::NodeProto n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
  return n;
}

onnx::TensorProto ints(const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

onnx::ModelProto with_inits(onnx::ModelProto m, const std::vector<onnx::TensorProto>& inits) {
  for (const auto& t : inits) *m.mutable_graph()->add_initializer() = t;
  return m;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A real plan (of a bundled sample) as JSON, to break one field at a time.
nlohmann::json sample_plan() {
  static const nlohmann::json plan = [] {
    const std::string path = write_temp("hostile-base.json", "");
    const RunResult r = run("plan " + kSamples + "branches.onnx -o " + path);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(read(path));
  }();
  return plan;
}

// Every command that reads plans refuses `plan` with exit 1 (diff: 2, "could not compare") naming the problem.
// diff reads only what it compares (the model, arenas and values: read_plan_summary); a fault elsewhere (nodes,
// steps) it leaves to validate (`diff_reads` false): it compares the plan and must find it equal to itself.
void expect_plan_refused(const nlohmann::json& plan, const std::string& needle, const std::string& name,
                         bool diff_reads) {
  const std::string path = write_temp(name + ".json", dump_json(plan));
  for (const std::string command : {"validate", "inspect", "replay", "corrupt --kind offset -o /dev/null --"}) {
    SECTION(command) {
      expect_failure(run(command + " " + path), 1, needle);
    }
  }
  SECTION("diff") {
    const RunResult r = run("diff " + path + " " + path);
    if (diff_reads) {
      expect_failure(r, 2, needle);
    } else {
      INFO(r.out);
      CHECK(r.exit_code == 0);
      CHECK_THAT(r.out, Catch::Contains("plans are equal"));
    }
  }
}

}  // namespace

TEST_CASE("hostile models: schema faults are refused before libonnx sees them", "[hostile]") {
  SECTION("Scan without num_scan_inputs") {
    auto m = make_model({make_node("Scan", {"x"}, {"y"}, "scan")}, {tensor_info("x", 1, {"2"})},
                        {tensor_info("y", 1, {"2"})}, 11);
    auto* body = m.mutable_graph()->mutable_node(0)->add_attribute();
    body->set_name("body");
    body->set_type(onnx::AttributeProto::GRAPH);
    body->mutable_g()->set_name("body");
    expect_load_fails(m, "scan.onnx", "required attribute 'num_scan_inputs' is missing");
  }
  SECTION(
      "a Constant without its value attribute, or with two (found by fuzz_model: its output was planned as "
      "nothing, and validate refused the plan)") {
    auto n = make_node("Constant", {}, {"y"}, "c");
    auto* a = n.add_attribute();
    a->set_name(std::string("val\0e", 5));
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(3);
    expect_load_fails(make_model({n}, {}, {tensor_info("y", 7, {})}), "constant.onnx",
                      "node 'c' (Constant) has no value attribute");
    auto* b = n.add_attribute();
    b->set_name("value_int");
    b->set_type(onnx::AttributeProto::INT);
    b->set_i(3);
    auto* c = n.add_attribute();
    c->set_name("value_float");
    c->set_type(onnx::AttributeProto::FLOAT);
    c->set_f(3);
    expect_load_fails(make_model({n}, {}, {tensor_info("y", 7, {})}), "constant2.onnx", "has several value attributes");
  }
  SECTION("an attribute of the wrong type") {
    auto n = make_node("Concat", {"x", "x"}, {"y"}, "cat");
    auto* a = n.add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(0.5f);
    expect_load_fails(make_model({n}, {tensor_info("x", 1, {"2"})}, {tensor_info("y", 1, {"4"})}), "axis.onnx",
                      "attribute 'axis' is a float but Concat takes an int");
  }
  SECTION("too many inputs") {
    expect_load_fails(make_model({make_node("Relu", {"x", "x"}, {"y"}, "r")}, {tensor_info("x", 1, {"2"})},
                                 {tensor_info("y", 1, {"2"})}),
                      "inputs.onnx", "has 2 inputs; Relu takes 1 to 1");
  }
  SECTION("a name that is not UTF-8") {
    expect_load_fails(make_model({make_node("Relu", {"x"}, {"y"}, "bad\xC1\x80name")}, {tensor_info("x", 1, {"2"})},
                                 {tensor_info("y", 1, {"2"})}),
                      "utf8.onnx", "is not valid UTF-8");
  }
  SECTION("subgraphs nested 100 deep") {
    onnx::GraphProto inner;
    inner.set_name("g");
    for (int i = 0; i < 100; ++i) {
      onnx::GraphProto outer;
      outer.set_name("g");
      auto* n = outer.add_node();
      n->set_op_type("If");
      n->add_input("c");
      for (const char* branch : {"then_branch", "else_branch"}) {  // (one branch nests: 100 levels, not 2^100)
        auto* a = n->add_attribute();
        a->set_name(branch);
        a->set_type(onnx::AttributeProto::GRAPH);
        if (branch[0] == 't')
          *a->mutable_g() = inner;
        else
          a->mutable_g()->set_name("empty");
      }
      inner = outer;
    }
    auto m = make_model({}, {tensor_info("c", 9, {})}, {});
    *m.mutable_graph()->mutable_node() = inner.node();
    // (protobuf's own nesting limit refuses it first, and the error says so; memplan's 64-level bound is for what
    // protobuf lets by)
    expect_load_fails(m, "deep.onnx", "nest deeper than 100 levels, protobuf's limit");
  }
}

TEST_CASE("bodies nested as deep as protobuf allows are planned, one more is refused as too deep", "[hostile]") {
  // An If whose then_branch holds the next If, `depth` levels, each branch reading the main graph's input. The
  // branches' outputs are untyped in the model (inference types them).
  auto untyped = [](const std::string& name) {
    onnx::ValueInfoProto v;
    v.set_name(name);
    return v;
  };
  auto nested = [&](int depth) {
    onnx::GraphProto inner;
    inner.set_name("leaf");
    *inner.add_node() = make_node("Relu", {"x"}, {"leaf"}, "leaf");
    *inner.add_output() = untyped("leaf");
    for (int d = depth - 1; d >= 0; --d) {
      const std::string s = std::to_string(d);
      onnx::GraphProto other, outer;
      other.set_name("else" + s);
      *other.add_node() = make_node("Neg", {"x"}, {"neg" + s}, "neg" + s);
      *other.add_output() = untyped("neg" + s);
      outer.set_name("level" + s);
      onnx::NodeProto n = make_node("If", {"c"}, {"out" + s}, "if" + s);
      for (const auto& [name, body] : {std::pair{"then_branch", &inner}, {"else_branch", &other}}) {
        auto* a = n.add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::GRAPH);
        *a->mutable_g() = *body;
      }
      *outer.add_node() = n;
      *outer.add_output() = untyped("out" + s);
      inner = outer;
    }
    auto m = make_model({}, {tensor_info("c", 9, {}), tensor_info("x", 1, {"4"})}, {tensor_info("out0", 1, {"4"})});
    *m.mutable_graph()->mutable_node() = inner.node();
    return m;
  };
  // 32 levels: the model nests 99 messages deep; what inference adds (a type for the deepest body's value) goes past
  // 100, which the reply from the inference child once failed to parse (an internal error).
  const std::string path = write_temp_model("deep32.onnx", nested(32));
  const RunResult planned = run("plan " + path + " -o " + path + ".json");
  INFO(planned.out);
  REQUIRE(planned.exit_code == 0);
  CHECK(run("validate " + path + ".json").exit_code == 0);
  expect_load_fails(nested(33), "deep33.onnx", "nest deeper than 100 levels, protobuf's limit");
}

TEST_CASE("hostile models: a crash inside libonnx's inference is contained", "[hostile]") {
  // GatherND with batch_dims INT32_MIN once made ONNX 1.12's inference read out of bounds; memplan now refuses it
  // before inference, naming the attribute.
  auto m = with_inits(make_model({with_int(make_node("GatherND", {"k", "x"}, {"y"}, "g"), "batch_dims",
                                           std::numeric_limits<int32_t>::min())},
                                 {tensor_info("x", 1, {"1", "0", "2"})}, {tensor_info("y", 1, {})}, 13),
                      {});
  onnx::TensorProto k;
  k.set_name("k");
  k.set_data_type(onnx::TensorProto::FLOAT);
  k.add_dims(3);
  k.add_dims(0);
  *m.mutable_graph()->add_initializer() = k;
  const std::string path = write_temp_model("gathernd.onnx", m);
  const RunResult r = run("plan " + path + " -o /dev/null --allow-unknown-sizes");
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("attribute batch_dims=-2147483648 is negative"));
  // Whatever crashes libonnx next is contained the same way: the work runs in a child, and its death is an error
  // naming the file and the step, not memplan's crash.
  try {
    run_isolated(
        []() -> std::string {
          std::raise(SIGSEGV);
          return "";
        },
        "m.onnx", "ONNX's shape inference");
    FAIL("a crashing child was not reported");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kBadInput);
    CHECK_THAT(e.what(), Catch::StartsWith("m.onnx: ") && Catch::Contains("ONNX's shape inference crashed"));
  }
}

namespace {
std::vector<char*> g_exhausting_blocks;  // (kept where the compiler must assume they are read, so no new is elided)

// Allocates until the memory limit stops it, inside a function that no exception can leave: a bad_alloc here would
// call std::terminate, as one inside libonnx's inference did.
void exhaust_memory() noexcept {
  for (;;) {
    char* block = new char[16 << 20];
    block[0] = 1;
    g_exhausting_blocks.push_back(block);
  }
}
}  // namespace

TEST_CASE("isolated runs: memory exhausted in the child is reported as such even where no exception can pass",
          "[hostile]") {
  IsolationLimits limits;
  limits.memory_bytes = 256ULL << 20;
  try {
    run_isolated(
        []() -> std::string {
          exhaust_memory();
          return "";
        },
        "big.onnx", "ONNX's shape inference", limits);
    FAIL("a child out of memory was not reported");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kBadInput);
    CHECK_THAT(e.what(), Catch::StartsWith("big.onnx: ONNX's shape inference "));
#if !defined(MEMPLAN_INSTRUMENTED)
    // (Under the sanitizers their allocator reports running out and ends the child itself: a child that stopped.)
    CHECK_THAT(e.what(), Catch::Contains("ran out of memory on this model (more than 256 MiB)"));
#endif
  }
}

TEST_CASE("isolated runs side by side: each its own result and fault, one dropped unfinished is killed", "[hostile]") {
  IsolatedRun slow = start_isolated(
      [] {
        ::usleep(200'000);
        return std::string("first");
      },
      "a.onnx", "A");
  IsolatedRun quick = start_isolated([] { return std::string("second"); }, "b.onnx", "B");
  CHECK(quick.finish() == "second");
  CHECK(slow.finish() == "first");

  IsolatedRun crashing = start_isolated(
      []() -> std::string {
        std::raise(SIGSEGV);
        return "";
      },
      "d.onnx", "D");
  IsolatedRun fine = start_isolated([] { return std::string("fine"); }, "e.onnx", "E");
  CHECK_THROWS_WITH(crashing.finish(), Catch::StartsWith("d.onnx: ") && Catch::Contains("D crashed"));
  CHECK(fine.finish() == "fine");

  const auto start = std::chrono::steady_clock::now();
  {
    IsolatedRun dropped = start_isolated(
        [] {
          ::sleep(100);
          return std::string();
        },
        "c.onnx", "C");
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  CHECK(::waitpid(-1, nullptr, WNOHANG) == -1);  // killed and reaped: no child of this process is left
  CHECK(errno == ECHILD);
}

TEST_CASE("two isolated runs side by side each return their own result - and a death is only its own", "[hostile]") {
  // load_model_and_ort_view: memplan's view and ORT's, two children at once, collected in either order. Results
  // larger than a pipe's buffer too (a child blocks writing until its result is read).
  const std::string big(1 << 20, 'b');
  for (const bool isolated : {true, false}) {
    INFO((isolated ? "in children" : "in this process (MEMPLAN_NO_ISOLATION=1)"));
    if (!isolated) ::setenv("MEMPLAN_NO_ISOLATION", "1", 1);
    IsolatedRun first = start_isolated([&big] { return big; }, "a.onnx", "A");
    IsolatedRun second = start_isolated([] { return std::string("second"); }, "a.onnx", "B");
    if (!isolated) ::unsetenv("MEMPLAN_NO_ISOLATION");
    CHECK(second.finish() == "second");
    CHECK(first.finish() == big);
  }
  IsolatedRun dying = start_isolated(
      []() -> std::string {
        std::raise(SIGSEGV);
        return "";
      },
      "c.onnx", "C");
  IsolatedRun failing =
      start_isolated([]() -> std::string { throw Error(ExitCode::kUsage, "no such dim"); }, "d.onnx", "D");
  IsolatedRun living = start_isolated([] { return std::string("model"); }, "e.onnx", "E");
  CHECK_THROWS_WITH(dying.finish(), Catch::StartsWith("c.onnx: ") && Catch::Contains("C crashed"));
  try {
    failing.finish();
    FAIL("finish returned");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::kUsage);
    CHECK(std::string(e.what()) == "no such dim");
  }
  CHECK(living.finish() == "model");
}

TEST_CASE("an isolated child ends with the process that started it, collected or not", "[hostile]") {
  // A process starts a child that would sleep 100 s, then ends at once without collecting it (as memplan killed by a
  // signal, or leaving ORT's view to its exit): the child is gone within seconds, not left running.
  int fds[2], ready[2];  // the child's pid to this process; "started" to the starter
  REQUIRE(::pipe(fds) == 0);
  REQUIRE(::pipe(ready) == 0);
  const pid_t starter = ::fork();
  REQUIRE(starter >= 0);
  if (starter == 0) {
    ::close(fds[0]);
    ::close(ready[1]);
    IsolatedRun run = start_isolated(
        [&fds] {
          const pid_t me = ::getpid();
          (void)!::write(fds[1], &me, sizeof me);
          ::sleep(100);
          return std::string();
        },
        "a.onnx", "A");
    char started = 0;
    (void)!::read(ready[0], &started, 1);
    (void)run;
    ::_exit(0);  // no destructor: the run is not collected
  }
  ::close(ready[0]);
  ::close(fds[1]);
  pid_t child = 0;
  REQUIRE(::read(fds[0], &child, sizeof child) == static_cast<ssize_t>(sizeof child));
  ::close(fds[0]);
  REQUIRE(::write(ready[1], "s", 1) == 1);
  ::close(ready[1]);
  REQUIRE(::waitpid(starter, nullptr, 0) == starter);
  auto running = [&] {  // neither gone nor a zombie waiting for its new parent to reap it
    std::FILE* f = std::fopen(("/proc/" + std::to_string(child) + "/stat").c_str(), "r");
    if (!f) return false;
    int pid = 0;
    char comm[256] = {}, state = 0;
    const bool read = std::fscanf(f, "%d %255s %c", &pid, comm, &state) == 3;
    std::fclose(f);
    return read && state != 'Z' && state != 'X';
  };
  const auto start = std::chrono::steady_clock::now();
  while (running() && std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) ::usleep(10'000);
  CHECK(!running());
}

TEST_CASE("hostile models: the constant evaluator checks every input and count", "[hostile]") {
  const auto x = tensor_info("x", 1, {"2", "3"});
  onnx::ValueInfoProto y;  // a float output of undeclared shape: inference and the shape pass decide it
  y.set_name("y");
  y.mutable_type()->mutable_tensor_type()->set_elem_type(1);
  SECTION("an initializer holding more values than its dims") {
    // (Abs: a computation ONNX's data propagation leaves to memplan's evaluator, which does not take the
    // initializer as a constant: the size stays unknown, and plan says so)
    const std::string path = write_temp_model(
        "count.onnx",
        with_inits(
            make_model({make_node("Abs", {"s"}, {"a"}, "abs"), make_node("Reshape", {"x", "a"}, {"y"}, "r")}, {x}, {y}),
            {ints("s", {2}, {3, 2, 1})}));
    expect_failure(run("plan " + path + " -o /dev/null"), 1, "no known size");
  }
  SECTION("Range with an integer start and a float limit") {
    onnx::TensorProto limit;
    limit.set_name("l");
    limit.set_data_type(onnx::TensorProto::FLOAT);
    limit.add_float_data(5.5f);
    auto m = with_inits(make_model({make_node("Range", {"s", "l", "d"}, {"r"}, "range"),
                                    make_node("Reshape", {"x", "r"}, {"y"}, "use")},
                                   {x}, {y}),
                        {ints("s", {}, {0}), limit, ints("d", {}, {1})});
    const RunResult r = run("plan " + write_temp_model("range.onnx", m) + " -o /dev/null --allow-unknown-sizes");
    INFO(r.out);
    CHECK((r.exit_code == 0 || r.exit_code == 1));
    CHECK(r.out.find("memplan: internal error") == std::string::npos);
  }
  SECTION("Range whose element count overflows, delta INT64_MIN") {
    auto m = with_inits(
        make_model({make_node("Range", {"s", "l", "d"}, {"y"}, "range")}, {x}, {y}),
        {ints("s", {}, {std::numeric_limits<int64_t>::max()}), ints("l", {}, {std::numeric_limits<int64_t>::min()}),
         ints("d", {}, {std::numeric_limits<int64_t>::min()})});
    const RunResult r = run("plan " + write_temp_model("range2.onnx", m) + " -o /dev/null --allow-unknown-sizes");
    INFO(r.out);
    CHECK((r.exit_code == 0 || r.exit_code == 1));
    CHECK(r.out.find("memplan: internal error") == std::string::npos);
  }
  SECTION("Expand to negative dims") {
    const std::string path = write_temp_model(
        "expand.onnx",
        with_inits(make_model({make_node("Expand", {"x", "s"}, {"y"}, "e")}, {x}, {y}), {ints("s", {2}, {-4, 3})}));
    expect_failure(run("plan " + path + " -o /dev/null"), 1, "no known size");
  }
  SECTION("ConstantOfShape with an empty value") {
    auto n = make_node("ConstantOfShape", {"s"}, {"y"}, "c");
    auto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_dims(0);
    expect_load_fails(with_inits(make_model({n}, {x}, {y}), {ints("s", {1}, {4})}), "cos.onnx", "exactly one element");
  }
  SECTION("Concat whose dims overflow") {
    auto n = with_int(make_node("Concat", {"a", "b"}, {"c"}, "cat"), "axis", 0);
    auto m = with_inits(make_model({n, make_node("ConstantOfShape", {"c"}, {"y"}, "big")}, {x}, {y}),
                        {ints("a", {1}, {std::numeric_limits<int64_t>::max()}), ints("b", {1}, {5})});
    const RunResult r = run("plan " + write_temp_model("concat.onnx", m) + " -o /dev/null --allow-unknown-sizes");
    INFO(r.out);
    CHECK((r.exit_code == 0 || r.exit_code == 1));
    CHECK(r.out.find("memplan: internal error") == std::string::npos);
  }
  SECTION("a zero-element raw initializer in a shape computation") {
    onnx::TensorProto e;
    e.set_name("e");
    e.set_data_type(onnx::TensorProto::INT64);
    e.add_dims(0);
    e.set_raw_data("");
    auto m = with_inits(make_model({with_int(make_node("Concat", {"e", "s"}, {"c"}, "cat"), "axis", 0),
                                    make_node("Reshape", {"x", "c"}, {"y"}, "r")},
                                   {x}, {y}),
                        {e, ints("s", {2}, {3, 2})});
    const RunResult r = run("plan " + write_temp_model("raw0.onnx", m) + " -o /dev/null");
    INFO(r.out);
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("hostile plans: every field is checked once, for every command", "[hostile]") {
  using Json = nlohmann::json;
  struct Case {
    const char* name;
    std::function<void(Json&)> mutate;
    const char* needle;
    bool diff_reads = true;  // the field is in what diff compares
  };
  const std::vector<Case> cases = {
      {"align0", [](Json& p) { p["arenas"][0]["alignment"] = 0; }, "\"alignment\" is 0"},
      {"lifetime", [](Json& p) { p["values"][1]["last_use"] = 1000000; }, "outside the execution order"},
      {"cycle",
       [](Json& p) {
         p["values"][1]["inplace_of"] = 2;
         p["values"][2]["inplace_of"] = 1;
       },
       "cycle of \"inplace_of\""},
      {"stream", [](Json& p) { p["nodes"][0]["stream"] = 99; }, "names stream 99", false},
      {"trigger",
       [](Json& p) {
         p["streams"][0]["steps"].push_back({{"kind", "TriggerDownstream"}, {"node", 0}, {"trigger", 1000000000}});
       },
       "has trigger 1000000000", false},
      {"wait",
       [](Json& p) {
         p["streams"][0]["steps"].push_back({{"kind", "WaitOnEP"}, {"node", 0}});
       },
       "has notification -1", false},
      {"streams",
       [](Json& p) {
         for (int i = 0; i < 2000; ++i) p["streams"].push_back({{"device", "cpu"}, {"steps", Json::array()}});
       },
       "at most 1024", false},
      {"format", [](Json& p) { p["format"] = nullptr; }, "not a memplan plan"},
      {"float-index", [](Json& p) { p["values"][0]["producer"] = 1.5; }, "not an integer"},
      {"big-index", [](Json& p) { p["values"][0]["producer"] = int64_t{1} << 40; }, "outside -1..2147483647"},
      {"kind", [](Json& p) { p["values"][0]["kind"] = "<script>alert(1)</script>"; }, "not an allocation kind"},
      {"deep",
       [](Json& p) {
         Json deep = "x";
         for (int i = 0; i < 1000; ++i) deep = Json::array({deep});
         p["values"][0]["name"] = deep;
       },
       "nested deeper than 64"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      Json plan = sample_plan();
      c.mutate(plan);
      expect_plan_refused(plan, c.needle, c.name, c.diff_reads);
    }
  }
}

TEST_CASE("hostile plans: replay refuses an arena larger than the machine", "[hostile]") {
  auto p = sample_plan();
  p["arenas"][0]["bytes"] = uint64_t{1} << 60;
  const std::string path = write_temp("huge-arena.json", dump_json(p));
  expect_failure(run("replay " + path), 1, "more than half of this machine's memory");
}

TEST_CASE("hostile plans: replay counts a body's own buffers before allocating them", "[hostile]") {
  const std::string base = write_temp("control-flow-base.json", "");
  REQUIRE(run("plan " + kSamples + "control_flow.onnx -o " + base).exit_code == 0);
  auto p = nlohmann::json::parse(read(base));
  bool planted = false;
  for (auto& body : p["subgraphs"])
    for (auto& v : body["values"])
      if (v["arena"].is_null() && !v.value("outer_scope", false) && !v["bytes"].is_null() && !planted) {
        v["bytes"] = uint64_t{1} << 60;  // a Loop's iteration number, say, claiming an exabyte
        planted = true;
      }
  REQUIRE(planted);
  const std::string path = write_temp("huge-body-input.json", dump_json(p));
  expect_failure(run("replay " + path), 1, "more than half of this machine's memory");
}

TEST_CASE("output injection: names reach HTML, SVG and the terminal escaped", "[hostile]") {
  auto p = sample_plan();
  const std::string evil = "<script>alert(1)</script><rect/>\x1b[2J\x07&\"'";
  for (auto& v : p["values"]) v["name"] = evil + v["name"].get<std::string>();
  for (auto& n : p["nodes"]) n["name"] = evil;
  p["model"]["path"] = evil;
  p["arenas"][0]["name"] = evil;
  const std::string plan = write_temp("evil.json", dump_json(p));
  const std::string svg = write_temp("evil.svg", ""), html = write_temp("evil.html", "");
  const RunResult r = run("inspect " + plan + " --svg " + svg + " --html " + html);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(has_raw_control(r.out));
  CHECK_THAT(r.out, Catch::Contains("\\x1b[2J"));
  for (const std::string& file : {svg, html}) {
    const std::string text = read(file);
    CHECK_FALSE(has_raw_control(text));
    CHECK(text.find("<script>alert") == std::string::npos);
    CHECK(text.find("<rect/>") == std::string::npos);
    CHECK_THAT(text, Catch::Contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;rect/&gt;"));
  }
  // The page's own script is its only one; the picture has none.
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count(read(html), "<script") == 1);
  CHECK(count(read(svg), "<script") == 0);
  SECTION("the SVG is well-formed XML") {
    const RunResult xml =
        run_shell("/usr/bin/python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' " + svg + " 2>&1");
    INFO(xml.out);
    CHECK(xml.exit_code == 0);
  }
  SECTION("the page parses as HTML with the elements of the page of the plan without hostile names") {
    // Python's own HTML parser (the standard library's), not a substring search: what it sees as elements is what
    // a browser builds. The hostile names change text only, so both pages have the same elements in the same order.
    const std::string plain_html = write_temp("plain.html", "");
    const std::string plain = write_temp("plain.json", dump_json(sample_plan()));
    REQUIRE(run("inspect " + plain + " --html " + plain_html).exit_code == 0);
    const std::string script =
        "import sys, html.parser\n"
        "class P(html.parser.HTMLParser):\n"
        "    tags = []\n"
        "    def handle_starttag(self, tag, attrs): self.tags.append(tag)\n"
        "p = P(); p.feed(open(sys.argv[1], encoding='utf-8').read()); p.close()\n"
        "print(' '.join(p.tags))\n";
    const std::string parser = write_temp("tags.py", script);
    const RunResult hostile_tags = run_shell("/usr/bin/python3 " + parser + " " + html + " 2>&1");
    const RunResult plain_tags = run_shell("/usr/bin/python3 " + parser + " " + plain_html + " 2>&1");
    INFO(hostile_tags.out);
    REQUIRE(hostile_tags.exit_code == 0);
    REQUIRE(plain_tags.exit_code == 0);
    CHECK_THAT(plain_tags.out, Catch::Contains("script"));
    CHECK(hostile_tags.out == plain_tags.out);
  }
  SECTION("an error naming a value shows its control characters escaped") {
    auto bad = p;
    bad["values"][0]["reused_buffer"] = 12345;
    const RunResult e = run("validate " + write_temp("evil-bad.json", dump_json(bad)));
    expect_failure(e, 1, "\\x1b[2J");
  }
}

TEST_CASE("output injection: a model's names reach the text plan and messages escaped", "[hostile]") {
  const std::string evil = "r\x1b[2J\x1b]0;title\x07";
  const std::string path = write_temp_model(
      "evil-names.onnx", make_model({make_node("Relu", {"x"}, {evil}, evil)}, {tensor_info("x", 1, {"N", "3"})},
                                    {tensor_info(evil, 1, {"N", "3"})}));
  const RunResult text = run("plan " + path + " --dim N=2 --format text -o -");
  INFO(text.out);
  CHECK(text.exit_code == 0);
  CHECK_FALSE(has_raw_control(text.out));
  CHECK_THAT(text.out, Catch::Contains("r\\x1b[2J"));
  // inspect's report lists the value of unknown size (N is free) by name.
  const RunResult report = run("inspect " + path + " --list 5");
  INFO(report.out);
  CHECK_FALSE(has_raw_control(report.out));
  CHECK_THAT(report.out, Catch::Contains("r\\x1b[2J"));
}

TEST_CASE("hostile options: sizes, alignments and seconds are checked", "[hostile]") {
  const std::string model = kSamples + "branches.onnx";
  expect_failure(run("plan " + model + " -o /dev/null --max-arena cpu=."), 2, "is not a size");
  expect_failure(run("plan " + model + " -o /dev/null --max-arena cpu=1.5.5"), 2, "is not a size");
  expect_failure(run("plan " + model + " -o /dev/null --max-arena cpu=99999999999999999999999TB"), 2, "too large");
  expect_failure(run("plan " + model + " -o /dev/null --align 9223372036854775808"), 2, "power of two");
  expect_failure(run("plan " + model + " -o /dev/null --time-budget nan"), 2, "--time-budget");
  expect_failure(run("solve /dev/null --time-budget inf"), 2, "--time-budget");
  expect_failure(run("replay /dev/null --timeout -1"), 2, "--timeout");
  const std::string null_format = write_temp("null-format.json", R"({"format": null, "ops": []})");
  expect_failure(run("plan " + model + " -o /dev/null --op-properties " + null_format), 1, "not an op-properties file");
  expect_failure(run("plan " + model + " -o /dev/null --placement " + null_format), 1, "not a placement file");
  expect_failure(run("plan " + model + " -o /dev/null --partition " + null_format), 1, "");
}

TEST_CASE("hostile sizes: buffers adding up past 2^62 bytes are refused, not overflowed", "[hostile]") {
  // fuzz_shapes found two values of 8e18 bytes live together: their sum overflowed the layout's bound (UBSan). Each
  // size fits; the sum of any two does not.
  SECTION("memplan solve") {
    const std::string csv =
        write_temp("huge.csv", "id,lower,upper,size\na,0,2,8000000000000000000\nb,1,3,8000000000000000000\n");
    expect_failure(run("solve " + csv + " -o /dev/null"), 1, "add up to more than 2^62 bytes");
  }
  SECTION("memplan plan") {
    const std::vector<std::string> huge = {"1000000000", "1000000000", "2"};  // 2e18 floats: 8e18 bytes
    const std::string path = write_temp_model(
        "huge-values.onnx",
        make_model({make_node("Relu", {"x"}, {"y"}, "relu"), make_node("Sigmoid", {"x"}, {"z"}, "sigmoid"),
                    make_node("Add", {"y", "z"}, {"w"}, "add")},
                   {tensor_info("x", 1, huge)}, {tensor_info("w", 1, huge)}));
    expect_failure(run("plan " + path + " -o /dev/null"), 1, "add up to more than 2^62 bytes");
  }
  SECTION("the solver itself") {
    memplan::arena::Problem p;
    p.buffers = {{"a", 0, 2, uint64_t{7} << 59, 1}, {"b", 1, 3, uint64_t{7} << 59, 1}};  // 4e18 each
    CHECK_THROWS_WITH(memplan::arena::lower_bound(p), Catch::Contains("at buffer 'b'"));
    CHECK_THROWS_AS(memplan::arena::solve(p, {}), memplan::Error);
  }
}

TEST_CASE("hostile files: bounded reads, and outputs that are complete or absent", "[hostile]") {
  const std::string model = kSamples + "branches.onnx";
  SECTION("a device never ends: refused at once") {
    expect_failure(run("inspect /dev/zero"), 1, "not a regular file");
  }
  SECTION("a file over the read cap") {
    expect_failure(
        run_shell("MEMPLAN_MAX_INPUT_BYTES=100 " + std::string(MEMPLAN_BINARY) + " inspect " + model + " 2>&1"), 1,
        "larger than 100 bytes");
  }
  const fs::path dir = fs::path(write_temp("outputs-keep", "")).parent_path() / "outputs";
  fs::create_directories(dir);
  SECTION("a second output that cannot be written leaves the first unwritten") {
    const std::string plan = (dir / "first.json").string();
    fs::remove(plan);
    expect_failure(run("plan " + model + " -o " + plan + " --export-problem " + (dir / "missing" / "p.csv").string()),
                   1, "does not exist");
    CHECK_FALSE(fs::exists(plan));
  }
  SECTION("a planted symbolic link is replaced, not written through") {
    const fs::path victim = dir / "victim.txt", link = dir / "link.json";
    { std::ofstream(victim) << "keep"; }
    fs::remove(link);
    fs::create_symlink(victim, link);
    REQUIRE(run("plan " + model + " -o " + link.string()).exit_code == 0);
    CHECK(read(victim.string()) == "keep");
    CHECK_FALSE(fs::is_symlink(link));
    CHECK(fs::is_regular_file(link));
  }
  SECTION("a pipe or device is written to, not replaced by a file") {
    const fs::path fifo = dir / "fifo", got = dir / "got.json";
    fs::remove(fifo);
    const RunResult r = run_shell("mkfifo " + fifo.string() + " && { timeout 20 cat " + fifo.string() + " > " +
                                  got.string() + " & reader=$!; " + std::string(MEMPLAN_BINARY) + " plan " + model +
                                  " -o " + fifo.string() + "; rc=$?; wait $reader; exit $rc; }");
    INFO(r.out);
    CHECK(r.exit_code == 0);
    CHECK(fs::is_fifo(fifo));
    CHECK(read(got.string()).rfind("{", 0) == 0);
    fs::remove(fifo);
    fs::remove(got);
  }
  SECTION("no temporary file is left behind") {
    for (const auto& e : fs::directory_iterator(dir))
      CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
  }
}

TEST_CASE("fuzzer findings stay fixed (tests/hostile/)", "[hostile]") {
  // Each file there is an input a fuzz target once failed on, in the directory of the command that reads it.
  const fs::path root = MEMPLAN_SOURCE_DIR "/tests/hostile";
  int count = 0;
  for (const auto& kind : {"model", "plan", "csv"}) {
    if (!fs::is_directory(root / kind)) continue;
    for (const auto& e : fs::directory_iterator(root / kind)) {
      const std::string path = e.path().string();
      const std::string command = std::string(kind) == "model"  ? "plan " + path + " -o /dev/null --time-budget 0"
                                  : std::string(kind) == "plan" ? "inspect " + path
                                                                : "solve " + path + " -o /dev/null --time-budget 0.1";
      const RunResult r = run(command);
      INFO(command << "\n" << r.out);
      CHECK(r.exit_code >= 0);
      CHECK(r.exit_code <= 4);
      CHECK(r.out.find("memplan: internal error") == std::string::npos);
      CHECK_FALSE(has_raw_control(r.out));
      ++count;
    }
  }
  CHECK(count > 0);
}
