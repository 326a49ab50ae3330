// JsonWriter (json_writer.h) writes plans as text without a tree: its text must be what nlohmann's dump writes
// for the same document, because plans are compared byte for byte (tests, `diff`, users' CI).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "memplan/json_writer.h"
#include "memplan/memplan.h"
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
  const nlohmann::json doc = {
      {"empty_array", nlohmann::json::array()},
      {"empty_object", nlohmann::json::object()},
      {"nested", {{"a", {1, -2, nullptr, true, false}}, {"b", {{"c", nlohmann::json::array()}, {"d", {{"e", 0}}}}}}},
      {"strings",
       {"plain", "quote \" and \\ backslash", "tab\tnewline\n", "\x01\x1f\x7f", "caf\xc3\xa9",
        std::string("bad \xff\xfe utf-8"), std::string("nul\0inside", 10), ""}},
      {"numbers", {INT64_MIN, INT64_MAX, UINT64_MAX, 0.5, 1e-7, 1.0, -0.0}},
      {"key \"quoted\"\n", "v"}};
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
  // What plan_json_pieces does on two threads: the first writer stops inside an array of an object, the second
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

TEST_CASE("a large plan, its values written on two threads, is nlohmann's canonical text", "[json]") {
  // More values than plan_json_pieces writes on one thread (20,000): a chain of 21,000 Relu and Neg nodes.
  using namespace memplan::testing;
  std::vector<onnx::NodeProto> nodes;
  const int n = 21000;
  for (int i = 0; i < n; ++i)
    nodes.push_back(make_node(i % 2 ? "Neg" : "Relu", {i ? "t" + std::to_string(i - 1) : "x"},
                              {i + 1 < n ? "t" + std::to_string(i) : "y"}, "n" + std::to_string(i)));
  const std::string path = write_temp_model(
      "long_chain.onnx", make_model(nodes, {tensor_info("x", 1, {"2", "3"})}, {tensor_info("y", 1, {"2", "3"})}));
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
