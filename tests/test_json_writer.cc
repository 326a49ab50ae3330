// JsonWriter (json_writer.h) writes plans as text without a tree: its text must be what nlohmann's dump writes
// for the same document, because plans are compared byte for byte (tests, `diff`, users' CI).
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "memplan/file_io.h"
#include "memplan/json_writer.h"
#include "memplan/memplan.h"
#include "memplan/onnx_io/load.h"
#include "memplan/ordered_parts.h"
#include "memplan/planner/pipeline.h"
#include "memplan/planner/plan_io.h"
#include "memplan/text_escape.h"
#include "model_builder.h"

using namespace memplan;

namespace {

// Writes `j` through JsonWriter, element by element (keys in the order nlohmann::json keeps them: byte order).
void write(JsonWriter& w, const nlohmann::json& j) {
  if (j.is_object()) {
    w.begin_object();
    for (auto it = j.begin(); it != j.end(); ++it) {
      w.key(it.key());
      write(w, it.value());
    }
    w.end_object();
  } else if (j.is_array()) {
    w.begin_array();
    for (const auto& item : j) write(w, item);
    w.end_array();
  } else if (j.is_null()) {
    w.null();
  } else if (j.is_boolean()) {
    w.boolean(j.get<bool>());
  } else if (j.is_number_unsigned()) {
    w.unsigned_integer(j.get<unsigned long long>());
  } else if (j.is_number_integer()) {
    w.integer(j.get<long long>());
  } else if (j.is_string()) {
    w.string(j.get_ref<const std::string&>());
  } else {
    w.json(j);  // floats: nlohmann's own formatting
  }
}

}  // namespace

TEST_CASE("JsonWriter writes nlohmann's dump, byte for byte", "[json]") {
  nlohmann::json doc = {
      {"empty_array", nlohmann::json::array()},
      {"empty_object", nlohmann::json::object()},
      {"nested", {{"a", {1, -2, nullptr, true, false}}, {"b", {{"c", nlohmann::json::array()}, {"d", {{"e", 0}}}}}}},
      {"strings",
       {"plain", "quote \" and \\ backslash", "tab\tnewline\n", "\x01\x1f\x7f", "caf\xc3\xa9",
        std::string("bad \xff\xfe utf-8"), std::string("nul\0inside", 10), ""}},
      {"numbers", {INT64_MIN, INT64_MAX, UINT64_MAX, 0.5, 1e-7, 1.0, -0.0}},
      {"key \"quoted\"\n", "v"}};
  // Past the writer's one-piece lines: a key longer than 64 bytes, and nesting indented more than 128 spaces.
  nlohmann::json deep = {{"leaf", 1}};
  for (int level = 0; level < 40; ++level) deep = nlohmann::json{{"k", deep}, {"list", {level, deep.size()}}};
  doc[std::string(100, 'k')] = {{std::string(65, 'x'), deep}};
  for (int indent : {0, 1, 2, 4}) {
    INFO("indent " << indent);
    JsonWriter w(indent);
    write(w, doc);
    CHECK(w.text() == doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace));
    // A subtree handed over whole is indented where it lands.
    JsonWriter embedded(indent);
    embedded.begin_object().key("x").begin_array().json(doc).end_array().end_object();
    const nlohmann::json outer = {{"x", {doc}}};
    CHECK(embedded.text() == outer.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  CHECK(JsonWriter().begin_array().end_array().text() == "[]");
  CHECK(JsonWriter().value(std::vector<std::optional<int>>{1, std::nullopt}).text() == "[\n 1,\n null\n]");
}

TEST_CASE("plans are written in nlohmann's canonical form: keys in byte order, one-space indent", "[json]") {
  // Every part of the format: streams with waits and notifications (two GPU streams), bodies (control_flow),
  // workspaces of their owners, an incomplete plan's unsized values, the ORT-rules estimate.
  const std::string samples = std::string(MEMPLAN_SOURCE_DIR) + "/samples/";
  PlanSettings gpu;
  gpu.device = "gpu";
  gpu.streams_per_device = 2;
  PlanSettings unsized;
  unsized.allow_unknown_sizes = true;
  for (const auto& [model, settings] : std::vector<std::pair<std::string, PlanSettings>>{
           {"branches.onnx", gpu}, {"control_flow.onnx", gpu}, {"scan_rnn.onnx", {}}, {"free_dims.onnx", unsized}}) {
    INFO(model);
    const std::string text = make_plan(samples + model, settings).json;
    const nlohmann::json parsed = nlohmann::json::parse(text);
    CHECK(text == dump_json(parsed, 1) + "\n");
    CHECK(parsed.contains("streams"));
  }
}

TEST_CASE("a writer continuing another's document: the two texts are the document", "[json]") {
  // What write_plan_json does on two threads: the first writer stops inside an array of an object, the second
  // goes on from there and closes both.
  const nlohmann::json doc = {{"a", 1}, {"values", {{{"x", 1}}, {{"x", 2}}, {{"x", 3}}}}, {"z", "end"}};
  JsonWriter head(1);
  head.begin_object().field("a", 1).key("values").begin_array();
  head.begin_object().field("x", 1).end_object();
  JsonWriter tail = JsonWriter::continuing(1, {true, false});
  tail.begin_object().field("x", 2).end_object().begin_object().field("x", 3).end_object();
  tail.end_array().field("z", "end").end_object();
  CHECK(head.text() + tail.text() == doc.dump(1));
}

TEST_CASE("a writer continuing inside a list the first left empty closes it empty", "[json]") {
  const nlohmann::json doc = {{"a", 1}, {"values", nlohmann::json::array()}, {"z", "end"}};
  JsonWriter head(1);
  head.begin_object().field("a", 1).key("values").begin_array();
  JsonWriter tail = JsonWriter::continuing(1, {true, false}, /*innermost_empty=*/true);
  tail.end_array().field("z", "end").end_object();
  CHECK(head.text() + tail.text() == doc.dump(1));
}

TEST_CASE("parts made on two threads go out in order, at most `ahead` of them waiting, and an error stops both",
          "[json]") {
  std::mt19937 random(7);
  std::vector<int> delays(300);
  for (int& d : delays) d = static_cast<int>(random() % 200);
  for (size_t ahead : {size_t{1}, size_t{3}, size_t{16}}) {
    INFO("ahead " << ahead);
    std::atomic<size_t> waiting{0};
    size_t most_waiting = 0;
    std::string text;
    make_parts_in_order(
        delays.size(), 2, ahead,
        [&](size_t i) {
          std::this_thread::sleep_for(std::chrono::microseconds(delays[i]));
          ++waiting;
          return std::to_string(i) + ",";
        },
        [&](std::string& part) {
          most_waiting = std::max<size_t>(most_waiting, waiting.load());
          --waiting;
          text += part;
        });
    std::string expected;
    for (size_t i = 0; i < delays.size(); ++i) expected += std::to_string(i) + ",";
    CHECK(text == expected);
    CHECK(most_waiting <= ahead);
  }
  // A part that cannot be made: its error comes out, and no part after it goes out.
  size_t out_count = 0;
  CHECK_THROWS_WITH(make_parts_in_order(
                        100, 2, 4,
                        [&](size_t i) -> std::string {
                          if (i == 40) throw std::runtime_error("no memory");
                          return "x";
                        },
                        [&](std::string&) { ++out_count; }),
                    "no memory");
  CHECK(out_count <= 40);
}

// More values than write_plan_json writes on one thread (20,000): a chain of `n` Relu and Neg nodes.
static std::string long_chain_model(int n) {
  using namespace memplan::testing;
  std::vector<onnx::NodeProto> nodes;
  for (int i = 0; i < n; ++i)
    nodes.push_back(make_node(i % 2 ? "Neg" : "Relu", {i ? "t" + std::to_string(i - 1) : "x"},
                              {i + 1 < n ? "t" + std::to_string(i) : "y"}, "n" + std::to_string(i)));
  return write_temp_model("long_chain.onnx",
                          make_model(nodes, {tensor_info("x", 1, {"2", "3"})}, {tensor_info("y", 1, {"2", "3"})}));
}

TEST_CASE("a large plan, its values written on two threads, is nlohmann's canonical text", "[json]") {
  const int n = 21000;
  const std::string path = long_chain_model(n);
  for (int streams : {1, 2}) {
    PlanSettings settings;
    settings.streams_per_device = streams;
    const std::string text = make_plan(path, settings).json;
    const nlohmann::json parsed = nlohmann::json::parse(text);
    CHECK(parsed["values"].size() == n + 1);
    CHECK(parsed["values"][n]["name"] == "y");
    CHECK(text == dump_json(parsed, 1) + "\n");
  }
}

TEST_CASE("a large plan streamed in pieces: the pieces are the text, and a failing sink stops both threads", "[json]") {
  const std::string path = long_chain_model(21000);
  const Model model = onnx_io::load_model(path, {});
  const planner::PlannedModel planned = planner::plan_model(model, {});
  const planner::PlanContext ctx{planned.graph(), planned.plan, path, "", {}, &planned.layout, &planned.subgraphs};
  std::vector<size_t> sizes;
  std::string text;
  planner::write_plan_json(ctx, [&](std::string_view piece) {
    sizes.push_back(piece.size());
    text += piece;
  });
  CHECK(text == planner::plan_to_json(ctx));
  CHECK(text == dump_json(nlohmann::json::parse(text), 1) + "\n");
  REQUIRE(sizes.size() >= 4);  // written out as it is made, not held whole
  CHECK(*std::max_element(sizes.begin(), sizes.end()) < text.size() / 2);
  // A write that fails (a full disk) in the first thread's part, at its end, and in the second thread's last
  // piece: the error comes out, both threads stop, and nothing is written after it.
  for (size_t fail_at : {size_t{0}, size_t{1}, sizes.size() - 1}) {
    INFO("the write that fails: " << fail_at);
    size_t calls = 0;
    CHECK_THROWS_WITH(planner::write_plan_json(ctx,
                                               [&](std::string_view) {
                                                 if (calls++ == fail_at) throw std::runtime_error("disk full");
                                               }),
                      "disk full");
    CHECK(calls == fail_at + 1);
  }
}

TEST_CASE("a file written in pieces, small ones gathered into one write, is its pieces in order", "[json][io]") {
  // Many small pieces (corrupt's edits), pieces around the gathering size and one larger than it, mixed.
  std::mt19937 rng(7);
  std::vector<std::string> held;
  for (int i = 0; i < 5000; ++i) {
    const size_t n = i % 997 == 0 ? (size_t{1} << 20) + static_cast<size_t>(i) : rng() % (i % 50 == 0 ? 70000 : 40);
    held.push_back(std::string(n, static_cast<char>('a' + i % 26)));
  }
  std::vector<std::string_view> pieces(held.begin(), held.end());
  std::string expected;
  for (std::string_view p : pieces) expected += p;
  const std::string path = testing::write_temp("pieces.txt", "");
  write_pieces_atomically(path, pieces);
  CHECK(read_file(path) == expected);
}

TEST_CASE("text set aside in a spill file comes back whole and in order, and the file is empty after", "[json][io]") {
  const std::string target = testing::write_temp("spilled-plan.json", "");
  SpillFile spill(target);
  REQUIRE(spill.ok());
  std::string expected;
  for (int round = 0; round < 2; ++round) {  // (used again after it was handed on)
    expected.clear();
    for (int i = 0; i < 300; ++i) {
      const std::string piece(static_cast<size_t>(i) * 97 + (i % 7 == 0 ? (1 << 16) : 0),
                              static_cast<char>('a' + i % 26));
      spill.append(piece);
      expected += piece;
    }
    CHECK(spill.size() == expected.size());
    std::string back;
    size_t blocks = 0;
    spill.hand_on([&](std::string_view block) {
      back += block;
      ++blocks;
    });
    CHECK(back == expected);
    CHECK(blocks >= 2);  // (in blocks, not read back whole)
    CHECK(spill.size() == 0);
  }
  // A device is written in place: nothing can be set aside beside it.
  CHECK_FALSE(SpillFile("/dev/null").ok());
}

TEST_CASE("text set aside for an output file is copied into it inside the kernel, in order, else through a buffer",
          "[json][io]") {
  std::string spilled;
  for (int i = 0; i < 40; ++i)
    spilled += std::string(static_cast<size_t>(i) * 4099 + 1, static_cast<char>('a' + i % 26));
  spilled += std::string(9 << 20, 'z');  // (more than one block of the copy)
  const std::string target = testing::write_temp("copied-plan.json", "");
  {
    OutputFile file(target);
    SpillFile spill(target, &file);
    REQUIRE(spill.ok());
    file.append("before it, ");
    spill.append(spilled.substr(0, 1000));
    spill.append(spilled.substr(1000));
    file.append("then the text it waited for, ");
    size_t through_buffer = 0;
    spill.hand_on([&](std::string_view block) {
      through_buffer += block.size();
      file.append(block);
    });
    file.append(" and after it");
    file.finish();
    file.commit();
    CHECK(spill.size() == 0);
    CHECK(through_buffer == 0);  // (Linux copies between two files of one file system)
  }
  CHECK(read_file(target) == "before it, then the text it waited for, " + spilled + " and after it");

  // Where the kernel cannot copy to the destination (a device, written in place), the bytes go through out().
  OutputFile device("/dev/null");
  SpillFile beside(target, &device);
  REQUIRE(beside.ok());
  beside.append(spilled);
  std::string back;
  beside.hand_on([&](std::string_view block) { back += block; });
  CHECK(back == spilled);
}

TEST_CASE("ORT's estimate still being made when the plan's text reaches it: the rest is set aside, same text",
          "[json][io]") {
  const std::string path = long_chain_model(21000);
  const Model model = onnx_io::load_model(path, {});
  const planner::PlannedModel planned = planner::plan_model(model, {});
  const std::vector<DeviceTotal> estimate = {{"cpu", 1024, 256, 0, 64, 0}};
  planner::PlanContext known{planned.graph(), planned.plan, path, "", {}, &planned.layout, &planned.subgraphs};
  known.totals = &planned.totals;
  known.ort_rules = &estimate;
  const std::string expected = planner::plan_to_json(known);
  REQUIRE(expected.find("\"ort_rules_estimate\"") != std::string::npos);
  const size_t before_estimate = expected.find(",\n \"ort_rules_estimate\"");

  // ready() turns true after `ready_after` questions (never: only wait() at the end makes it ready).
  for (int ready_after : {0, 3, 1000000}) {
    for (bool with_spill : {true, false}) {
      INFO("ready after " << ready_after << " questions, spill " << with_spill);
      planner::PlanContext ctx = known;
      ctx.ort_rules = nullptr;
      std::atomic<int> asked{0};
      std::atomic<bool> waited{false};
      std::string text;
      size_t out_when_waited = 0;
      ctx.ort_rules_pending.ready = [&] { return waited || ++asked > ready_after; };
      ctx.ort_rules_pending.wait = [&] {
        if (!waited) out_when_waited = text.size();
        waited = true;
        return &estimate;
      };
      const std::string target = testing::write_temp("pending-estimate.json", "");
      SpillFile spill(target);
      planner::write_plan_json(
          ctx, [&](std::string_view piece) { text += piece; }, with_spill ? &spill : nullptr);
      CHECK(text == expected);
      CHECK(waited);
      // The estimate is waited for where the text reaches it; with a spill file and an estimate never ready before,
      // only once everything after it is made and set aside (what went out by then is the text before it).
      CHECK(out_when_waited == before_estimate);
      if (with_spill && ready_after == 1000000) CHECK(asked > 3);
      CHECK(spill.size() == 0);
    }
  }
  // No estimate after all (its wait gives none): no section, the rest as usual.
  planner::PlanContext none = known;
  none.ort_rules = nullptr;
  none.ort_rules_pending = {[] { return false; }, []() -> const std::vector<DeviceTotal>* { return nullptr; }};
  planner::PlanContext without = known;
  without.ort_rules = nullptr;
  const std::string target = testing::write_temp("no-estimate.json", "");
  SpillFile spill(target);
  std::string text;
  planner::write_plan_json(
      none, [&](std::string_view piece) { text += piece; }, &spill);
  CHECK(text == planner::plan_to_json(without));
  CHECK(text.find("ort_rules_estimate") == std::string::npos);
}
