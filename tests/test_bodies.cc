// If/Loop/Scan bodies counted in full: each body has an arena of its own, its owner holds the largest of its
// bodies' arenas while it runs (in the enclosing graph's arena), validate checks bodies by the same rules as the
// main graph, and faults planted inside bodies are caught.
#include <catch2/catch.hpp>
#include <functional>
#include <iostream>
#include <map>

#include "memplan/error.h"
#include "memplan/onnx_io/load.h"
#include "memplan/plan_doc/corrupt.h"
#include "memplan/plan_doc/plan_doc.h"
#include "memplan/replay/replay.h"
#include "memplan/validate/validate.h"
#include "model_builder.h"
#include "plan_fixtures.h"

using namespace memplan;
using namespace memplan::testing;

namespace {

struct BodyCase {
  std::string label, json;
};

// Models with bodies: If and Loop (its trip count a graph input), Scan, three Ifs of a scripted torch model, a
// scripted torch Loop whose trip count is a graph input, and a detection model with If in its post-processing; on
// the CPU and on a GPU with three streams.
const std::vector<BodyCase>& body_cases() {
  static const std::vector<BodyCase> cases = [] {
    std::vector<BodyCase> out;
    for (const char* path :
         {MEMPLAN_SOURCE_DIR "/samples/control_flow.onnx", MEMPLAN_SOURCE_DIR "/samples/scan_rnn.onnx",
          MEMPLAN_SOURCE_DIR "/zoo/control_flow/scripted_loop_if.onnx",
          MEMPLAN_SOURCE_DIR "/zoo/control_flow/scripted_step_loop.onnx",
          MEMPLAN_SOURCE_DIR "/zoo/detection/ssdlite320_mobilenet_v3_large.onnx"})
      for (bool gpu : {false, true}) {
        partition::PartitionRequest r;
        if (gpu) r.device = partition::Device{partition::DeviceType::kGpu, 0}, r.streams_per_device = 3;
        std::string name = path;
        out.push_back({name.substr(name.rfind('/') + 1) + (gpu ? " gpu x3" : " cpu"), make_plan_json(path, r)});
      }
    return out;
  }();
  return cases;
}

void for_each_body(const plan_doc::PlanDoc& plan,
                   const std::function<void(const plan_doc::PlanDoc&, const plan_doc::SubgraphDoc&)>& visit) {
  for (const auto& sub : plan.subgraphs) {
    visit(plan, sub);
    for_each_body(sub.plan, visit);
  }
}

}  // namespace

TEST_CASE("each owner holds its bodies' largest arena in the enclosing arena, and validate accepts the plans",
          "[bodies]") {
  for (const BodyCase& c : body_cases()) {
    INFO(c.label);
    const plan_doc::PlanDoc plan = plan_doc::read_plan_doc(c.json, c.label);
    REQUIRE(!plan.subgraphs.empty());
    size_t bodies = 0;
    for_each_body(plan, [&](const plan_doc::PlanDoc& parent, const plan_doc::SubgraphDoc& sub) {
      ++bodies;
      CHECK(sub.plan.streams.size() == (sub.plan.nodes.empty() ? 0u : 1u));
      for (const auto& a : sub.plan.arenas) {
        uint64_t held = 0;
        for (const auto& w : parent.nodes[sub.owner].workspace) {
          const auto& in = parent.arenas[w.arena];
          CHECK(in.purpose == "activations");
          CHECK(in.lower_bound >= w.bytes);  // the bound counts the workspace
          if (in.location == a.location) held = std::max(held, w.bytes);
        }
        CHECK(held >= a.bytes);
      }
    });
    CHECK(bodies > 0);
    auto report = validate::validate_plan(plan);
    for (const auto& v : report.violations) UNSCOPED_INFO(v.check << ": " << v.message);
    CHECK(report.ok());
  }
}

TEST_CASE("the control-flow sample's activation arena is its main graph's values plus the largest body", "[bodies]") {
  // relu's output h (128 B, one 256-byte slot) is read by both owners; the If's branches each write one 4x8 float
  // output (256 B), the Loop's body a product and a sum (512 B). Peak: h with the Loop's body, 768 B.
  const plan_doc::PlanDoc plan = plan_doc::read_plan_doc(body_cases()[0].json, "control_flow");
  const auto& cpu = plan.arenas[0];
  CHECK(cpu.name == "cpu");
  CHECK(cpu.bytes == 768);
  CHECK(cpu.lower_bound == 768);
  std::map<std::string, uint64_t> workspace;
  for (const auto& n : plan.nodes)
    for (const auto& w : n.workspace) workspace[n.name] += w.bytes;
  CHECK(workspace == std::map<std::string, uint64_t>{{"if", 256}, {"loop", 512}});
}

TEST_CASE("mutation tests inside bodies: each kind of corruption is detected", "[bodies][mutation]") {
  std::map<std::string, std::pair<int, int>> rate;  // kind -> (detected, applied)
  for (const BodyCase& c : body_cases()) {
    const auto original = nlohmann::ordered_json::parse(c.json);
    const int bodies = plan_doc::count_bodies(original);
    for (int body = -1; body < bodies; ++body)
      for (auto kind : plan_doc::all_corruptions())
        for (uint64_t seed = 0; seed < 4; ++seed) {
          // The top level only for the workspace an owner holds; everything else inside bodies.
          if ((body < 0) != (kind == plan_doc::Corruption::kShrinkWorkspace)) continue;
          auto j = original;
          std::string what;
          if (!plan_doc::corrupt_plan(j, kind, seed, what, body)) continue;
          auto& r = rate[plan_doc::corruption_name(kind)];
          ++r.second;
          auto report = validate::validate_plan(plan_doc::read_plan_doc(j.dump(), c.label));
          if (!report.ok())
            ++r.first;
          else
            UNSCOPED_INFO("undetected in " << c.label << ": " << what);
        }
  }
  std::cout << "validate mutation detection inside bodies:";
  for (const auto& [kind, r] : rate) std::cout << " " << kind << " " << r.first << "/" << r.second;
  std::cout << "\n";
  for (const char* kind : {"offset", "release", "kind", "shrink", "misalign", "workspace"}) {
    INFO(kind);
    CHECK(rate[kind].second > 0);
    CHECK(rate[kind].first == rate[kind].second);
  }
}

TEST_CASE("replay runs the bodies inside their owners' workspaces, clean", "[bodies][replay]") {
  for (const BodyCase& c : body_cases()) {
    INFO(c.label);
    replay::ReplayOptions o;
    o.jitter = true;
    o.iterations = 4;  // If alternates its branches from run to run
    auto report = replay::replay(plan_doc::read_plan_doc(c.json, c.label), o);
    for (const auto& e : report.errors) UNSCOPED_INFO(e);
    CHECK(report.ok());
  }
}

TEST_CASE("replay catches faults planted inside bodies", "[bodies][replay][mutation]") {
  // Misplaced body memory, an early release inside a body and a workspace too small for its body: each shows
  // as a bad stamp or a refusal when the owner runs its bodies. (Kinds inside bodies are validate's: a replay
  // runs what the offsets say.)
  std::map<std::string, std::pair<int, int>> rate;
  for (const BodyCase& c : body_cases()) {
    if (c.label.find("ssdlite") != std::string::npos) continue;  // long under jitter; the others cover every kind
    const auto original = nlohmann::ordered_json::parse(c.json);
    const int bodies = plan_doc::count_bodies(original);
    for (int body = -1; body < bodies; ++body)
      for (auto kind : {plan_doc::Corruption::kOffsetOntoLiveNeighbour, plan_doc::Corruption::kReleaseEarlier,
                        plan_doc::Corruption::kShrinkArena, plan_doc::Corruption::kMisalignOffset,
                        plan_doc::Corruption::kShrinkWorkspace})
        for (uint64_t seed = 0; seed < 3; ++seed) {
          if ((body < 0) != (kind == plan_doc::Corruption::kShrinkWorkspace)) continue;
          auto j = original;
          std::string what;
          if (!plan_doc::corrupt_plan(j, kind, seed, what, body)) continue;
          replay::ReplayOptions o;
          o.jitter = true;
          o.iterations = 4;
          o.seed = 100 + seed;
          o.timeout_s = 10;
          auto& r = rate[plan_doc::corruption_name(kind)];
          ++r.second;
          if (!replay::replay(plan_doc::read_plan_doc(j.dump(), c.label), o).ok())
            ++r.first;
          else
            UNSCOPED_INFO("not caught in " << c.label << ": " << what);
        }
  }
  std::cout << "replay mutation detection inside bodies:";
  for (const auto& [kind, r] : rate) std::cout << " " << kind << " " << r.first << "/" << r.second;
  std::cout << "\n";
  for (const char* kind : {"offset", "release", "shrink", "misalign", "workspace"}) {
    INFO(kind);
    CHECK(rate[kind].second > 0);
    CHECK(rate[kind].first == rate[kind].second);
  }
}

TEST_CASE("a body naming an outer value its owner does not read is a structure violation", "[bodies]") {
  auto j = nlohmann::ordered_json::parse(body_cases()[0].json);
  auto& loop = j["nodes"][2];
  REQUIRE(loop["name"] == "loop");
  loop["implicit_inputs"] = nlohmann::ordered_json::array();
  auto report = validate::validate_plan(plan_doc::read_plan_doc(j.dump(), "control_flow"));
  bool found = false;
  for (const auto& v : report.violations)
    found = found || (v.check == "structure" &&
                      v.message.find("does not list it among its implicit inputs") != std::string::npos);
  CHECK(found);
}

TEST_CASE("a trip count the user gives (--trip-count) sizes the scan outputs of a Loop whose count is an input",
          "[bodies][shapes]") {
  // Loop(M, "", h0) with a body keeping the carried 4x8 tensor's shape and emitting an 8-float slice per
  // iteration: the carried result follows from the body, the stacked slices only from the count.
  onnx::GraphProto body;
  body.set_name("body");
  *body.add_input() = tensor_info("i", 7, {});
  *body.add_input() = tensor_info("c_in", 9, {});
  *body.add_input() = tensor_info("h_in", 1, {"4", "8"});
  *body.add_node() = make_node("Identity", {"c_in"}, {"c_out"}, "cond");
  *body.add_node() = make_node("Tanh", {"h_in"}, {"h_out"}, "step");
  *body.add_node() = make_node("ReduceSum", {"h_out"}, {"y_t"}, "slice");
  auto* keep = body.mutable_node(2)->add_attribute();
  keep->set_name("keepdims");
  keep->set_type(onnx::AttributeProto::INT);
  keep->set_i(0);
  auto* axes = body.mutable_node(2)->add_attribute();
  axes->set_name("axes");
  axes->set_type(onnx::AttributeProto::INTS);
  axes->add_ints(0);
  *body.add_output() = tensor_info("c_out", 9, {});
  *body.add_output() = tensor_info("h_out", 1, {"4", "8"});
  *body.add_output() = tensor_info("y_t", 1, {"8"});
  auto loop = make_node("Loop", {"M", "", "x"}, {"h_last", "ys"}, "decode");
  auto* a = loop.add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = body;
  auto m = make_model({loop}, {tensor_info("M", 7, {}), tensor_info("x", 1, {"4", "8"})}, {}, 13);
  *m.mutable_graph()->add_output()->mutable_name() = "h_last";
  *m.mutable_graph()->add_output()->mutable_name() = "ys";
  const std::string path = write_temp_model("loop_count.onnx", m);

  Model unknown = onnx_io::load_model(path);
  const Value* ys = unknown.graph.find_value("ys");
  REQUIRE(ys);
  CHECK(!ys->bytes);
  CHECK_THAT(ys->unknown_reason, Catch::Contains("--trip-count decode=N"));
  REQUIRE(unknown.graph.find_value("h_last")->bytes);
  CHECK(*unknown.graph.find_value("h_last")->bytes == 4 * 8 * 4);  // the carried shape holds

  onnx_io::LoadOptions options;
  options.overrides.trip_counts = {{"decode", 5}};
  Model counted = onnx_io::load_model(path, options);
  REQUIRE(counted.graph.find_value("ys")->bytes);
  CHECK(*counted.graph.find_value("ys")->bytes == 5 * 8 * 4);

  options.overrides.trip_counts = {{"decdoe", 5}};
  CHECK_THROWS_WITH(onnx_io::load_model(path, options),
                    Catch::Contains("no Loop node named 'decdoe'") && Catch::Contains("decode"));
}

TEST_CASE("corruptions inside bodies made on the text equal those made on the tree", "[bodies][mutation]") {
  size_t compared = 0;
  for (const BodyCase& c : body_cases()) compared += check_text_corruptions(c.json, c.label);
  CHECK(compared > 50);
}
