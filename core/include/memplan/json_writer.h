// A JSON document written as text as it is produced, without building a tree first: the plan of a 100k-node
// model is ~100 MB of JSON, and a tree of it costs seconds and gigabytes. The text is byte for byte what
// nlohmann's dump(indent) writes for the same document (the readers and the tests compare plans as text),
// and strings that are not valid UTF-8 get U+FFFD as dump_json gives them. Keys are written in the order they
// are given: a caller that wants dump_json's byte order writes them in it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace memplan {

class JsonWriter {
 public:
  explicit JsonWriter(int indent = 1) : indent_(indent) {}

  // A writer that continues a document another writer began, so that the two can be written on two threads:
  // as if the containers `open` lists (outermost first; true for an object, false for an array) were open and
  // each held a value already (the innermost none, with `innermost_empty`). The first writer's text followed by
  // this one's is the document.
  static JsonWriter continuing(int indent, const std::vector<bool>& open, bool innermost_empty = false);

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // Inside an object: the next value's key.
  JsonWriter& key(std::string_view k);

  JsonWriter& null();
  JsonWriter& boolean(bool b);
  JsonWriter& integer(long long v);
  JsonWriter& unsigned_integer(unsigned long long v);
  JsonWriter& string(std::string_view s);
  // A small document made elsewhere (an arena, a device total), indented to fit where it lands; its keys in
  // byte order, as dump_json writes them.
  JsonWriter& json(const nlohmann::json& j);

  // Any value nlohmann would convert the same way: integers, bools, strings, vectors and optionals of them.
  template <class T>
  JsonWriter& value(const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
      return boolean(v);
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      return integer(v);
    } else if constexpr (std::is_integral_v<T>) {
      return unsigned_integer(v);
    } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
      return string(v);
    } else if constexpr (std::is_same_v<T, nlohmann::json> || std::is_same_v<T, nlohmann::ordered_json>) {
      return json(v);
    } else {
      return container(v);
    }
  }
  template <class T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  template <class T>
  JsonWriter& container(const std::vector<T>& items) {
    begin_array();
    for (const auto& item : items) value(item);
    return end_array();
  }
  template <class T>
  JsonWriter& container(const std::optional<T>& item) {
    return item ? value(*item) : null();
  }

  void before_value();        // the separator and indentation a new value needs where it lands
  void new_line(bool first);  // the separator (none before the first), a line break and this level's indentation
  static constexpr size_t kShortKey = 64;  // keys up to this long are written with their line in one piece
  void close(char bracket);

  struct Level {
    bool object = false;
    size_t count = 0;  // values written in it
  };
  int indent_;
  std::vector<Level> levels_;
  bool key_pending_ = false;
  std::string out_;
};

}  // namespace memplan
