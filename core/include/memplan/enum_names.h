// An enum's names written once, in one table beside the enum: the name of a value, the value of a name, and the
// list for help texts and messages. For enums whose names appear in plan files or on the command line.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memplan {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

// The name of `value`; `fallback` for a value the table lacks (one outside the enum).
template <typename E, size_t N>
constexpr const char* enum_name(const EnumName<E> (&table)[N], E value, const char* fallback) {
  for (const EnumName<E>& row : table)
    if (row.value == value) return row.name;
  return fallback;
}

// The value named `text`, exactly; std::nullopt for any other text.
template <typename E, size_t N>
constexpr std::optional<E> parse_enum(const EnumName<E> (&table)[N], std::string_view text) {
  for (const EnumName<E>& row : table)
    if (text == row.name) return row.value;
  return std::nullopt;
}

// "a, b or c": names offered as alternatives, in help texts and messages.
inline std::string alternatives_text(const std::vector<std::string_view>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
  return out;
}

// "a, b or c", in the table's order.
template <typename E, size_t N>
std::string enum_names_text(const EnumName<E> (&table)[N]) {
  std::vector<std::string_view> names;
  for (const EnumName<E>& row : table) names.push_back(row.name);
  return alternatives_text(names);
}

}  // namespace memplan
