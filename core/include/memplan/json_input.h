// Parsing a JSON input file (plan, partition config, placement rules, op properties) with the checks every one
// needs: a bound on nesting (deep nesting would exhaust the stack when the value is later written or destroyed) and
// errors that name the file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "memplan/error.h"

namespace memplan {

// The deepest nesting of arrays and objects any memplan input has is 4; this leaves room.
inline constexpr size_t kMaxJsonDepth = 64;

// Throws Error(kBadInput) naming `source` when `text` nests deeper than kMaxJsonDepth (checked before parsing).
void check_json_depth(const std::string& text, const std::string& source);

// Parses `text` as JSON (nlohmann::json or nlohmann::ordered_json); throws Error(kBadInput) naming `source`.
template <typename Json = nlohmann::json>
Json parse_json_input(const std::string& text, const std::string& source) {
  check_json_depth(text, source);
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail_input(source, std::string("not valid JSON: ") + e.what());
  }
}

// j[key] when j is an object holding a string there, else "" (a "format": null is not a format, not a crash).
template <typename Json>
std::string json_string(const Json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->template get<std::string>() : std::string();
}

}  // namespace memplan
