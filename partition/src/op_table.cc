#include "memplan/partition/op_table.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "builtin_data.h"
#include "memplan/error.h"
#include "memplan/json_input.h"
#include "memplan/text_escape.h"

namespace memplan::partition {

bool OpFacts::is_cpu_input(int k) const {
  return std::count(cpu_inputs.begin(), cpu_inputs.end(), k) > 0;
}
bool OpFacts::is_cpu_output(int k) const {
  return std::count(cpu_outputs.begin(), cpu_outputs.end(), k) > 0;
}

OpTable OpTable::builtin() {
  OpTable t;
  t.extend_from_json(kBuiltinOpProperties, "built-in op properties");
  return t;
}

void OpTable::extend_from_json(const std::string& text, const std::string& source) {
  nlohmann::json j = parse_json_input(text, source);
  if (!j.is_object() || json_string(j, "format") != "memplan.op-properties" || !j.contains("ops") ||
      !j["ops"].is_array())
    fail_input(source, "not an op-properties file: expected {\"format\": \"memplan.op-properties\", \"ops\": [...]}");
  size_t index = 0;
  for (const auto& e : j["ops"]) {
    std::string where = "ops[" + std::to_string(index++) + "]";
    try {
      OpEntry entry;
      entry.op = e.at("op").get<std::string>();
      entry.domain = e.value("domain", "");
      if (entry.domain == "ai.onnx") entry.domain.clear();
      entry.providers = e.value("providers", std::vector<std::string>{"cpu", "cuda"});
      entry.since = e.value("since", 1);
      if (e.contains("until") && !e["until"].is_null()) entry.until = e["until"].get<int>();
      if (e.contains("alias")) entry.alias = e["alias"].get<std::vector<std::pair<int, int>>>();
      if (e.contains("may_inplace")) entry.may_inplace = e["may_inplace"].get<std::vector<std::pair<int, int>>>();
      if (e.contains("variadic_alias")) entry.variadic_alias = e["variadic_alias"].get<std::pair<int, int>>();
      if (e.contains("may_inplace_types")) entry.may_inplace_types = e["may_inplace_types"].get<std::vector<int>>();
      if (e.contains("cpu_inputs")) entry.cpu_inputs = e["cpu_inputs"].get<std::vector<int>>();
      if (e.contains("cpu_outputs")) entry.cpu_outputs = e["cpu_outputs"].get<std::vector<int>>();
      if (e.contains("external_outputs")) entry.external_outputs = e["external_outputs"].get<bool>();
      if (e.contains("kernel")) entry.kernel = e["kernel"].get<bool>();
      // Indices of inputs and outputs: no op has a thousand (and an index near INT_MAX would overflow arithmetic).
      auto index_ok = [](int i) { return i >= 0 && i < 1024; };
      auto pairs_ok = [&](const std::optional<std::vector<std::pair<int, int>>>& v) {
        return !v || std::all_of(v->begin(), v->end(), [&](auto p) { return index_ok(p.first) && index_ok(p.second); });
      };
      auto list_ok = [&](const std::optional<std::vector<int>>& v) {
        return !v || std::all_of(v->begin(), v->end(), index_ok);
      };
      if (!pairs_ok(entry.alias) || !pairs_ok(entry.may_inplace) || !list_ok(entry.cpu_inputs) ||
          !list_ok(entry.cpu_outputs) ||
          (entry.variadic_alias && !(index_ok(entry.variadic_alias->first) && index_ok(entry.variadic_alias->second))))
        fail_input(source, where + " ('" + terminal_text(entry.op) +
                               "'): an input or output index outside 0..1023 (indices count from 0)");
      if (entry.since < 1 || entry.since > 1000 || entry.until < entry.since)
        fail_input(source, where + " ('" + terminal_text(entry.op) +
                               "'): \"since\"/\"until\" must be opset versions, since <= until");
      by_op_[entry.op].push_back(entries_.size());
      entries_.push_back(std::move(entry));
    } catch (const nlohmann::json::exception& ex) {
      fail_input(source, where + ": " + ex.what() + " (each entry needs \"op\"; see data/op_properties.json)");
    }
  }
}

OpFacts OpTable::lookup(const std::string& op, const std::string& domain, int opset,
                        const std::string& provider) const {
  OpFacts f;
  auto listed = by_op_.find(op);
  if (listed == by_op_.end()) return f;
  for (size_t i : listed->second) {
    const OpEntry& e = entries_[i];
    if (e.domain != domain || opset < e.since || opset > e.until) continue;
    if (std::find(e.providers.begin(), e.providers.end(), provider) == e.providers.end()) continue;
    if (e.alias) f.alias = *e.alias;
    if (e.may_inplace) f.may_inplace = *e.may_inplace;
    if (e.variadic_alias) f.variadic_alias = e.variadic_alias;
    if (e.may_inplace_types) f.may_inplace_types = *e.may_inplace_types;
    if (e.cpu_inputs) f.cpu_inputs = *e.cpu_inputs;
    if (e.cpu_outputs) f.cpu_outputs = *e.cpu_outputs;
    if (e.external_outputs) f.external_outputs = *e.external_outputs;
    if (e.kernel) f.has_kernel = *e.kernel;
  }
  return f;
}

}  // namespace memplan::partition
