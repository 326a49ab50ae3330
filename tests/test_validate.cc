// memplan validate: valid plans pass; every kind of corruption is caught (detection rate per kind).
#include <catch2/catch.hpp>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>

#include "memplan/error.h"
#include "memplan/interned_string.h"
#include "memplan/plan_doc/corrupt.h"
#include "memplan/plan_doc/plan_doc.h"
#include "memplan/plan_doc/recorded_options.h"
#include "memplan/replay/replay.h"
#include "memplan/validate/validate.h"
#include "model_builder.h"
#include "plan_fixtures.h"

using namespace memplan;
using namespace memplan::testing;

TEST_CASE("every plan memplan makes is valid", "[validate]") {
  for (const PlanCase& c : standard_plan_cases()) {
    INFO(c.label);
    auto report = validate::validate_plan(plan_doc::read_plan_doc(c.json, c.label));
    for (const auto& v : report.violations) UNSCOPED_INFO(v.check << ": " << v.message);
    CHECK(report.ok());
    CHECK(report.uses_checked > 0);
  }
}

TEST_CASE("a plan's kinds, devices, dtypes and op types are held once, whichever thread read them",
          "[validate][read]") {
  // Equal text, one copy: what makes a million values cheap to hold, and their comparison one of pointers.
  const InternedString a = std::string("Allocate"), b = std::string_view("AllocateX").substr(0, 8);
  CHECK(&a.str() == &b.str());
  CHECK(a == b);
  CHECK(a == "Allocate");
  CHECK(a != "Reuse");
  CHECK(a == std::string("Allocate"));
  CHECK(a < InternedString("Reuse"));
  CHECK(a + "/x" == "Allocate/x");
  CHECK(InternedString().empty());
  CHECK(&InternedString("").str() == &InternedString().str());
  // Interned on several threads at once (the reader's two), more strings than the per-thread cache holds.
  std::vector<std::vector<const std::string*>> seen(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t)
    threads.emplace_back([&seen, t] {
      for (int round = 0; round < 50; ++round)
        for (int k = 0; k < 40; ++k) seen[t].push_back(&InternedString("kind" + std::to_string(k)).str());
    });
  for (auto& t : threads) t.join();
  for (size_t t = 1; t < seen.size(); ++t) CHECK(seen[t] == seen[0]);
  for (int k = 0; k < 40; ++k) CHECK(*seen[0][static_cast<size_t>(k)] == "kind" + std::to_string(k));

  // A plan read in pieces on two threads: every value of one kind points at the same text.
  for (const PlanCase& c : standard_plan_cases()) {
    INFO(c.label);
    const std::string path = write_temp("interned.json", c.json);
    const plan_doc::PlanDoc plan = plan_doc::read_plan_file(path, /*split_from_bytes=*/0, /*piece_bytes=*/1);
    std::map<std::string, const std::string*> copy;
    for (const plan_doc::ValueDoc& v : plan.values)
      for (const InternedString* s : {&v.kind, &v.location, &v.dtype}) {
        const auto [at, first] = copy.emplace(s->str(), &s->str());
        CHECK(at->second == &s->str());
      }
    for (const plan_doc::NodeDoc& n : plan.nodes) {
      const auto [at, first] = copy.emplace(n.op_type.str(), &n.op_type.str());
      CHECK(at->second == &n.op_type.str());
    }
  }
}

TEST_CASE("mutation tests: each kind of corruption is detected", "[validate][mutation]") {
  constexpr int kSeeds = 6;
  std::map<std::string, std::pair<int, int>> rate;  // kind -> (detected, applied)
  for (const PlanCase& c : standard_plan_cases())
    for (auto kind : plan_doc::all_corruptions())
      for (int seed = 0; seed < kSeeds; ++seed) {
        auto j = nlohmann::ordered_json::parse(c.json);
        std::string what;
        if (!plan_doc::corrupt_plan(j, kind, static_cast<uint64_t>(seed), what)) continue;
        auto& r = rate[plan_doc::corruption_name(kind)];
        ++r.second;
        auto report = validate::validate_plan(plan_doc::read_plan_doc(j.dump(), c.label));
        if (!report.ok())
          ++r.first;
        else
          UNSCOPED_INFO("undetected in " << c.label << ": " << what);
      }
  std::cout << "validate mutation detection:";
  for (const auto& [kind, r] : rate) std::cout << " " << kind << " " << r.first << "/" << r.second;
  std::cout << "\n";
  // Every kind applied somewhere, and caught every time.
  REQUIRE(rate.size() == plan_doc::all_corruptions().size());
  for (const auto& [kind, r] : rate) {
    INFO(kind);
    CHECK(r.second > 0);
    CHECK(r.first == r.second);
  }
}

TEST_CASE("malformed plan files are bad input naming the field", "[validate]") {
  CHECK_THROWS_WITH(plan_doc::read_plan_doc("{", "p.json"), Catch::StartsWith("p.json: not valid JSON"));
  CHECK_THROWS_WITH(plan_doc::read_plan_doc("{\"format\":\"other\"}", "p.json"), Catch::Contains("not a memplan plan"));
  auto j = nlohmann::ordered_json::parse(standard_plan_cases()[0].json);
  j["version"] = 9;
  CHECK_THROWS_WITH(plan_doc::read_plan_doc(j.dump(), "p.json"), Catch::Contains("version 9 is not supported"));
  j = nlohmann::ordered_json::parse(standard_plan_cases()[0].json);
  j["nodes"][0]["inputs"][0] = 99999;
  CHECK_THROWS_WITH(plan_doc::read_plan_doc(j.dump(), "p.json"),
                    Catch::Contains("reads value 99999, which does not exist"));
  j = nlohmann::ordered_json::parse(standard_plan_cases()[0].json);
  j["values"].erase(0);
  CHECK_THROWS_AS(plan_doc::read_plan_doc(j.dump(), "p.json"), Error);
  // A broken token in a field memplan does not read (a value's shape) is still broken JSON.
  std::string text = standard_plan_cases()[0].json;
  text.replace(text.find("\"shape\": ["), 10, "\"shape\": [ 6x,");
  CHECK_THROWS_WITH(plan_doc::read_plan_doc(text, "p.json"), Catch::StartsWith("p.json: not valid JSON"));
}

namespace {

// Everything read_plan_doc reads, compared field by field.
void check_same_plan(const plan_doc::PlanDoc& a, const plan_doc::PlanDoc& b) {
  REQUIRE(a.values.size() == b.values.size());
  for (size_t i = 0; i < a.values.size(); ++i) {
    const plan_doc::ValueDoc &x = a.values[i], &y = b.values[i];
    INFO("value " << i);
    CHECK(std::tie(x.index, x.name, x.kind, x.location, x.dtype, x.bytes, x.graph_input, x.initializer, x.graph_output,
                   x.inplace, x.alias, x.outer_scope, x.reused_buffer, x.inplace_of, x.producer, x.consumers,
                   x.implicit_consumers, x.first_use, x.last_use, x.arena, x.offset) ==
          std::tie(y.index, y.name, y.kind, y.location, y.dtype, y.bytes, y.graph_input, y.initializer, y.graph_output,
                   y.inplace, y.alias, y.outer_scope, y.reused_buffer, y.inplace_of, y.producer, y.consumers,
                   y.implicit_consumers, y.first_use, y.last_use, y.arena, y.offset));
  }
  REQUIRE(a.nodes.size() == b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i)
    CHECK(std::tie(a.nodes[i].name, a.nodes[i].op_type, a.nodes[i].stream, a.nodes[i].inputs, a.nodes[i].outputs,
                   a.nodes[i].releases) == std::tie(b.nodes[i].name, b.nodes[i].op_type, b.nodes[i].stream,
                                                    b.nodes[i].inputs, b.nodes[i].outputs, b.nodes[i].releases));
  REQUIRE(a.streams.size() == b.streams.size());
  for (size_t s = 0; s < a.streams.size(); ++s) CHECK(a.streams[s].steps.size() == b.streams[s].steps.size());
  CHECK(a.execution_order == b.execution_order);
  CHECK(a.arenas.size() == b.arenas.size());
  CHECK(a.releases.size() == b.releases.size());
  CHECK(a.subgraphs.size() == b.subgraphs.size());
  CHECK(std::tie(a.version, a.model_path, a.model_sha256, a.graph, a.options, a.complete) ==
        std::tie(b.version, b.model_path, b.model_sha256, b.graph, b.options, b.complete));
}

std::string read_error(const std::function<void()>& read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a plan read in pieces on two threads is the plan read in one pass - errors included", "[validate][read]") {
  size_t split = 0, nodes_cut = 0;
  for (const PlanCase& c : standard_plan_cases()) {
    INFO(c.label);
    const std::string path = write_temp("two_threads.json", c.json);
    if (const auto shape = plan_doc::split_shape(c.json, /*piece_bytes=*/1)) {
      ++split;
      // In pieces of one node and one value each, after the first of each: every boundary a cut.
      const auto j = nlohmann::json::parse(c.json);
      CHECK(shape->value_pieces == j["values"].size() - 1);
      if (shape->node_pieces > 0) {
        ++nodes_cut;
        CHECK(shape->node_pieces == j["nodes"].size() - 1);
      }
    }
    const plan_doc::PlanDoc one_pass = plan_doc::read_plan_doc(c.json, path);
    check_same_plan(one_pass, plan_doc::read_plan_file(path, /*split_from_bytes=*/0));
    check_same_plan(one_pass, plan_doc::read_plan_file(path, 0, /*piece_bytes=*/1));
  }
  // memplan's own layout is cut (a plan of one value is read in one pass), its nodes too where it has two or more.
  CHECK(split * 4 >= standard_plan_cases().size() * 3);
  CHECK(nodes_cut * 2 >= split);

  // Broken plans: one field wrong in the first, a middle or the last node or value, and a list that is not the
  // values (or not the nodes) where they should be.
  const std::string& text = standard_plan_cases()[0].json;
  auto j = nlohmann::json::parse(text);
  const size_t n = j["values"].size(), nodes = j["nodes"].size();
  REQUIRE(nodes >= 3);
  REQUIRE(plan_doc::split_shape(text, 1)->node_pieces == nodes - 1);
  std::vector<std::string> broken;
  for (size_t v : {size_t{0}, n / 2, n - 1}) {
    auto k = j;
    k["values"][v]["kind"] = 5;
    broken.push_back(k.dump(1));
    k = j;
    k["values"][v]["first_use"] = 1u << 31;
    broken.push_back(k.dump(1));
  }
  for (size_t v : {size_t{0}, nodes / 2, nodes - 1}) {
    auto k = j;
    k["nodes"][v]["op_type"] = 5;
    broken.push_back(k.dump(1));
    k = j;
    k["nodes"][v]["inputs"] = {1 << 30};  // (a value that does not exist: caught after reading)
    broken.push_back(k.dump(1));
  }
  std::string renamed = text;
  renamed.replace(renamed.rfind("\"values\": ["), 8, "\"valuez\"");
  broken.push_back(renamed);
  renamed = text;
  renamed.replace(renamed.find("\"nodes\": ["), 7, "\"nodez\"");
  broken.push_back(renamed);
  for (size_t at : {text.find("\"shape\": ["), text.rfind("\"shape\": [")}) {  // (a field read by neither)
    std::string bad_token = text;
    bad_token.replace(at, 10, "\"shape\": [ 6x,");
    broken.push_back(bad_token);
  }
  for (const std::string& b : broken) {
    const std::string path = write_temp("two_threads_broken.json", b);
    CHECK(plan_doc::split_shape(b));  // (so the reader in pieces meets the fault, then falls back)
    const std::string one = read_error([&] { plan_doc::read_plan_doc(b, path); });
    INFO(one);
    CHECK(one != "(no error)");
    CHECK(read_error([&] { plan_doc::read_plan_file(path, 0); }) == one);
    CHECK(read_error([&] { plan_doc::read_plan_file(path, 0, 1); }) == one);
  }
}

TEST_CASE("a plan's summary (what diff compares) is the plan without its nodes and steps - errors in its text too",
          "[validate][read]") {
  auto same_values = [](const plan_doc::PlanDoc& a, const plan_doc::PlanDoc& b) {
    REQUIRE(a.values.size() == b.values.size());
    for (size_t i = 0; i < a.values.size(); ++i)
      CHECK(std::tie(a.values[i].name, a.values[i].kind, a.values[i].bytes, a.values[i].location,
                     a.values[i].graph_input, a.values[i].arena, a.values[i].offset) ==
            std::tie(b.values[i].name, b.values[i].kind, b.values[i].bytes, b.values[i].location,
                     b.values[i].graph_input, b.values[i].arena, b.values[i].offset));
    const auto ta = plan_doc::device_totals(a), tb = plan_doc::device_totals(b);
    REQUIRE(ta.size() == tb.size());
    for (size_t i = 0; i < ta.size(); ++i)
      CHECK(std::tie(ta[i].device, ta[i].activations, ta[i].outputs, ta[i].weights, ta[i].inputs, ta[i].unsized) ==
            std::tie(tb[i].device, tb[i].activations, tb[i].outputs, tb[i].weights, tb[i].inputs, tb[i].unsized));
    CHECK(std::tie(a.version, a.model_path, a.model_sha256, a.execution_order) ==
          std::tie(b.version, b.model_path, b.model_sha256, b.execution_order));
  };
  size_t cases = 0;
  for (const PlanCase& c : standard_plan_cases()) {
    INFO(c.label);
    const std::string path = write_temp("summary.json", c.json);
    const plan_doc::PlanDoc whole = plan_doc::read_plan_doc(c.json, path);
    for (uint64_t split_from : {plan_doc::kSplitReadBytes, uint64_t{0}}) {
      const plan_doc::PlanDoc summary = plan_doc::read_plan_summary(path, split_from, /*piece_bytes=*/1);
      same_values(whole, summary);
      CHECK(summary.nodes.empty());
      CHECK(summary.streams.empty());
      for (const plan_doc::ValueDoc& v : summary.values) CHECK(v.consumers.empty());
    }
    ++cases;
  }
  CHECK(cases > 10);
  // A broken token in a section the summary does not read still refuses the file; a node naming a value that does
  // not exist refuses the whole plan, not its summary.
  const std::string& text = standard_plan_cases()[0].json;
  auto j = nlohmann::json::parse(text);
  REQUIRE(!j["nodes"].empty());
  std::string bad_token = text;
  const size_t nodes_at = bad_token.find("\"nodes\": [");
  const size_t op_at = bad_token.find("\"op_type\": ", nodes_at);
  REQUIRE(op_at != std::string::npos);
  bad_token.replace(op_at, 11, "\"op_type\": 6x, \"x\": ");
  const std::string bad_path = write_temp("summary_bad_token.json", bad_token);
  CHECK(read_error([&] { plan_doc::read_plan_summary(bad_path); }) != "(no error)");
  CHECK(read_error([&] { plan_doc::read_plan_summary(bad_path, 0, 1); }) != "(no error)");
  // The same in the last node (read in a piece of its own).
  bad_token = text;
  const size_t last_op_at = bad_token.rfind("\"op_type\": ", bad_token.find("\n ],", nodes_at));
  REQUIRE(last_op_at > op_at);
  bad_token.replace(last_op_at, 11, "\"op_type\": 6x, \"x\": ");
  const std::string bad_last = write_temp("summary_bad_last_node.json", bad_token);
  CHECK(read_error([&] { plan_doc::read_plan_summary(bad_last); }) != "(no error)");
  CHECK(read_error([&] { plan_doc::read_plan_summary(bad_last, 0, 1); }) != "(no error)");
  j["nodes"][0]["inputs"] = {1 << 30};
  const std::string dangling = write_temp("summary_dangling.json", j.dump(1));
  CHECK_THAT(read_error([&] { plan_doc::read_plan_file(dangling); }), Catch::Contains("which does not exist"));
  CHECK(read_error([&] { plan_doc::read_plan_summary(dangling); }) == "(no error)");
  // A value in an arena that does not exist refuses both.
  j = nlohmann::json::parse(text);
  j["values"][0]["arena"] = 1 << 20;
  j["values"][0]["offset"] = 0;
  const std::string no_arena = write_temp("summary_no_arena.json", j.dump(1));
  CHECK_THAT(read_error([&] { plan_doc::read_plan_summary(no_arena); }), Catch::Contains("which does not exist"));
}

TEST_CASE("a corruption made on a plan's text equals the one made on its tree, byte for byte", "[validate][mutation]") {
  size_t compared = 0;
  for (const PlanCase& c : standard_plan_cases()) compared += check_text_corruptions(c.json, c.label);
  CHECK(compared > 100);
}

TEST_CASE("an edit given the text's sections parses only the section it is in", "[validate][mutation]") {
  const std::string& text = standard_plan_cases()[0].json;
  const plan_doc::PlanDoc doc = plan_doc::read_plan_doc(text, "plan.json");
  REQUIRE(doc.sections.size() > 10);
  CHECK(doc.sections.front().key == "arenas");
  CHECK(doc.sections.back().key == "version");
  // A raw control byte in the "generator" string: any parse of the whole text refuses it at once.
  std::string broken = text;
  const size_t generator = broken.find("\"generator\": \"");
  REQUIRE(generator != std::string::npos);
  broken[generator + 15] = '\x01';
  plan_doc::PlanEdit edit;
  edit.path = {"nodes", "0", "stream"};
  edit.value = 7;
  CHECK_THROWS_WITH(plan_doc::apply_edits(broken, broken.capacity(), {edit}, "plan.json"),
                    Catch::Contains("cannot edit the plan"));
  const std::string edited = plan_doc::apply_edits(broken, broken.capacity(), {edit}, "plan.json", &doc.sections);
  auto expected = nlohmann::ordered_json::parse(text);
  expected["nodes"][0]["stream"] = 7;
  std::string want = expected.dump(1) + (text.back() == '\n' ? "\n" : "");
  want[want.find("\"generator\": \"") + 15] = '\x01';
  CHECK(edited == want);

  // The same in a list read in pieces: an edit of one value parses its piece, not the values.
  const plan_doc::PlanDoc in_pieces = plan_doc::read_plan_file(write_temp("edit_pieces.json", text), 0, 1);
  const auto values = std::find_if(in_pieces.sections.begin(), in_pieces.sections.end(),
                                   [](const plan_doc::TextSection& x) { return x.key == "values"; });
  REQUIRE(values != in_pieces.sections.end());
  REQUIRE(values->pieces.size() >= 2);
  CHECK(values->pieces.front().first == 1);  // (the first value is read with the middle of the text)
  for (size_t k = 1; k < values->pieces.size();
       ++k) {  // (each thread's pieces, in the text's order, one after another)
    CHECK(values->pieces[k].first == values->pieces[k - 1].first + values->pieces[k - 1].count);
    CHECK(values->pieces[k].begin > values->pieces[k - 1].end);
  }
  CHECK(values->pieces.back().first + values->pieces.back().count == in_pieces.values.size());
  broken = text;
  const size_t last_name = broken.rfind("\"name\": \"");  // (the last value's)
  REQUIRE(last_name > values->pieces.front().end);
  broken[last_name + 10] = '\x01';
  edit.path = {"values", "1", "offset"};
  edit.value = 12345;
  CHECK_THROWS_WITH(plan_doc::apply_edits(broken, broken.capacity(), {edit}, "plan.json", &doc.sections),
                    Catch::Contains("cannot edit the plan"));
  expected = nlohmann::ordered_json::parse(text);
  expected["values"][1]["offset"] = 12345;
  want = expected.dump(1) + (text.back() == '\n' ? "\n" : "");
  want[want.rfind("\"name\": \"") + 10] = '\x01';
  CHECK(plan_doc::apply_edits(broken, broken.capacity(), {edit}, "plan.json", &in_pieces.sections) == want);

  // Pieces parsed where they stand (the text made writable, as corrupt does): the same edits, in every piece and
  // out of order, and the text's bytes as they were after.
  std::vector<plan_doc::PlanEdit> spread;
  expected = nlohmann::ordered_json::parse(text);
  for (size_t i : {in_pieces.values.size() - 1, size_t{1}, in_pieces.values.size() / 2, size_t{2}}) {
    spread.push_back({plan_doc::PlanEdit::Op::kSet, {"values", std::to_string(i), "offset"}, 777 + i});
    expected["values"][i]["offset"] = 777 + i;
  }
  want = expected.dump(1) + (text.back() == '\n' ? "\n" : "");
  std::string writable = text;
  writable.reserve(text.size() + 64);
  const plan_doc::EditedText in_place =
      plan_doc::edit_text(writable, writable.capacity(), spread, "plan.json", &in_pieces.sections, writable.data());
  std::string joined;
  for (std::string_view piece : in_place.pieces) joined += piece;
  CHECK(joined == want);
  CHECK(writable == text);
  CHECK(plan_doc::apply_edits(text, text.capacity(), spread, "plan.json", &in_pieces.sections) == want);
  // An edit that names no value throws, and leaves the text as it was.
  spread.push_back({plan_doc::PlanEdit::Op::kSet, {"values", "1", "no such key"}, 1});
  CHECK_THROWS_WITH(
      plan_doc::edit_text(writable, writable.capacity(), spread, "plan.json", &in_pieces.sections, writable.data()),
      Catch::Contains("cannot edit the plan"));
  CHECK(writable == text);
}

TEST_CASE(
    "a value of unknown size never holds a sized value's bytes, and validate and replay refuse plans where one does",
    "[validate][unsized]") {
  // MaxViT's pattern: a Transpose whose output size is unknown (here: its input comes from an op ONNX
  // cannot infer), then a Reshape to a constant shape (known size: ORT would make it a view) and a MatMul.
  auto reshape_to = [] {
    onnx::TensorProto t;
    t.set_name("shape");
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(2);
    t.add_int64_data(8);
    t.add_int64_data(4);
    return t;
  };
  auto mystery = testing::make_node("Mystery", {"x"}, {"m"}, "mystery");
  mystery.set_domain("com.example");
  auto model =
      testing::make_model({mystery, testing::make_node("Transpose", {"m"}, {"t"}, "transpose"),
                           testing::make_node("Reshape", {"t", "shape"}, {"r"}, "reshape"),
                           testing::make_node("MatMul", {"r", "w"}, {"y"}, "matmul")},
                          {testing::tensor_info("x", 1, {"4", "8"})}, {testing::tensor_info("y", 1, {"8", "4"})});
  auto* opset = model.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  *model.mutable_graph()->add_initializer() = reshape_to();
  *model.mutable_graph()->add_initializer() = testing::header_only_initializer("w", {4, 4});
  // The custom op's output: float, shape unknown.
  auto* m_info = model.mutable_graph()->add_value_info();
  m_info->set_name("m");
  m_info->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  const std::string path = testing::write_temp_model("maxvit_pattern.onnx", model);
  for (bool gpu : {false, true}) {
    partition::PartitionRequest request;
    if (gpu) request.device = partition::Device{partition::DeviceType::kGpu, 0};
    auto json = nlohmann::ordered_json::parse(testing::make_plan_json(path, request));
    auto value = [&](const std::string& name) -> nlohmann::ordered_json& {
      for (auto& v : json["values"])
        if (v["name"] == name) return v;
      FAIL("no value " << name);
      throw;
    };
    REQUIRE(value("t")["bytes"].is_null());
    REQUIRE(value("r")["bytes"] == 128);
    // The planner keeps the sized Reshape out of the unsized Transpose's memory: a buffer of its own.
    CHECK(value("r")["inplace_of"] == -1);
    CHECK(value("r")["reused_buffer"] == value("r")["index"]);
    CHECK(value("r")["arena"].is_number());
    auto sound = plan_doc::read_plan_doc(json.dump(), "sound.json");
    CHECK(validate::validate_plan(sound).ok());
    replay::ReplayOptions o;
    CHECK(replay::replay(sound, o).ok());

    // The plan ORT's alias rule alone would give: validate and replay refuse it, naming both values.
    value("r")["kind"] = "Reuse";
    value("r")["inplace"] = true;
    value("r")["alias"] = true;
    value("r")["inplace_of"] = value("t")["index"];
    value("r")["reused_buffer"] = value("t")["index"];
    auto unsound = plan_doc::read_plan_doc(json.dump(), "unsound.json");
    auto report = validate::validate_plan(unsound);
    REQUIRE_FALSE(report.ok());
    bool named = false;
    for (const auto& v : report.violations)
      named = named || (v.check == "unsized" && v.message.find("'r'") != std::string::npos &&
                        v.message.find("'t'") != std::string::npos);
    CHECK(named);
    auto replayed = replay::replay(unsound, o);
    REQUIRE_FALSE(replayed.ok());
    CHECK_THAT(replayed.errors.at(0), Catch::Contains("'r'") && Catch::Contains("size is unknown"));
  }
}

TEST_CASE(
    "regions in large groups over partly shared bytes are checked in their writers' order, every corruption "
    "there is caught",
    "[validate][mutation][scale]") {
  // 200 Ifs on the GPU: each group of regions over the same bytes holds about 200 (checked pair by pair, 20,000 Ifs
  // took 80 s to validate); the groups are checked against each other as one sequence in their writers' order.
  std::vector<onnx::NodeProto> nodes;
  std::string cur = "x";
  for (int i = 0; i < 200; ++i) {
    const std::string s = std::to_string(i);
    nodes.push_back(make_node("ReduceSum", {cur}, {"sum" + s}, "sum" + s));
    nodes.push_back(make_node("Greater", {"sum" + s, "zero"}, {"cond" + s}, "cond" + s));
    onnx::NodeProto branch = make_node("If", {"cond" + s}, {"if" + s}, "if" + s);
    for (const auto& [name, op] : {std::pair{"then_branch", "Relu"}, {"else_branch", "Neg"}}) {
      auto* a = branch.add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::GRAPH);
      onnx::GraphProto* g = a->mutable_g();
      g->set_name(std::string(name) + s);
      *g->add_node() = make_node(op, {cur}, {std::string(op) + s}, std::string(op) + s);
      g->add_output()->set_name(std::string(op) + s);
    }
    nodes.push_back(branch);
    cur = "if" + s;
  }
  onnx::ModelProto model =
      make_model(nodes, {tensor_info("x", 1, {"batch", "64"})}, {tensor_info(cur, 1, {"batch", "64"})}, 17);
  *model.mutable_graph()->add_initializer() = header_only_initializer("zero", {});
  const std::string path = write_temp_model("two_hundred_ifs.onnx", model);
  partition::PartitionRequest gpu;
  gpu.device = partition::Device{partition::DeviceType::kGpu, 0};
  const std::string json = make_plan_json(path, gpu);
  const auto clean = validate::validate_plan(plan_doc::read_plan_doc(json, "200 ifs"));
  for (const auto& v : clean.violations) UNSCOPED_INFO(v.check << ": " << v.message);
  REQUIRE(clean.ok());
  CHECK(clean.regions_checked > 400);
  int applied = 0;
  for (auto kind : plan_doc::all_corruptions())
    for (int seed = 0; seed < 6; ++seed) {
      auto j = nlohmann::ordered_json::parse(json);
      std::string what;
      if (!plan_doc::corrupt_plan(j, kind, static_cast<uint64_t>(seed), what)) continue;
      ++applied;
      INFO(what);
      CHECK_FALSE(validate::validate_plan(plan_doc::read_plan_doc(j.dump(), "200 ifs")).ok());
    }
  CHECK(applied >= 20);
}

TEST_CASE("a plan's options record reads back as written, in the keys plan files have", "[validate][options]") {
  plan_doc::RecordedOptions o;
  o.device = "gpu:1";
  o.order = "priority";
  o.streams_per_device = 3;
  o.arena_algorithm = "exact";
  o.alignment = 64;
  o.pack_outputs = true;
  o.allow_unknown_sizes = true;
  o.partition_config = "p.json";
  o.like = "ort";
  o.offload = "weights";
  o.host_bandwidth = "12.5";
  o.dims = {{"batch", "8"}, {"seq len", "128"}};
  o.input_shapes = {{"x", "1x3x224x224"}};
  o.trip_counts = {{"loop_0", "7"}};
  std::map<std::string, std::string> written = plan_doc::options_object(o);
  // The spelling earlier plans were written in (validate --model reads them back).
  CHECK(written.at("dim seq len") == "128");
  CHECK(written.at("input_shape x") == "1x3x224x224");
  CHECK(written.at("trip_count loop_0") == "7");
  CHECK(written.at("streams_per_device") == "3");
  CHECK(written.at("align") == "64");
  CHECK(written.at("host_bandwidth") == "12.5");
  written["reuse"] = "memplan";  // (the planner's own key) and a key from a later memplan: ignored
  written["something_new"] = "x";
  const plan_doc::RecordedOptions back = plan_doc::read_recorded_options(written);
  CHECK(back.device == o.device);
  CHECK(back.order == o.order);
  CHECK(back.streams_per_device == 3);
  CHECK(back.arena_algorithm == o.arena_algorithm);
  CHECK(back.alignment == 64);
  CHECK(back.pack_outputs);
  CHECK(back.allow_unknown_sizes);
  CHECK(back.partition_config == o.partition_config);
  CHECK(back.like == o.like);
  CHECK(back.offload == o.offload);
  CHECK(back.host_bandwidth == o.host_bandwidth);
  CHECK(back.dims == o.dims);
  CHECK(back.input_shapes == o.input_shapes);
  CHECK(back.trip_counts == o.trip_counts);
  CHECK(plan_doc::options_object(back) == plan_doc::options_object(o));
  // Defaults leave their optional keys out; a spoilt number keeps the default.
  const auto plain = plan_doc::options_object({});
  CHECK(plain.count("offload") == 0);
  CHECK(plain.count("like") == 0);
  CHECK(plain.count("partition") == 0);
  CHECK(plan_doc::read_recorded_options({{"streams_per_device", "two"}}).streams_per_device == 1);
}
