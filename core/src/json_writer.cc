#include "memplan/json_writer.h"

#include <charconv>
#include <cstring>

namespace memplan {

namespace {

// Printable ASCII other than the two characters JSON escapes: written as is (nearly every name in a model).
bool plain(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7E || c == '"' || c == '\\') return false;
  }
  return true;
}

// A new line's separator (none before the first value), line break and `spaces` of indentation, as one piece of
// a constant text (a 100k-node plan is five million lines, and each append costs more than the bytes it copies);
// up to kIndentText spaces.
constexpr size_t kIndentText = 128;
std::string_view new_line_text(bool first, size_t spaces) {
  static const std::string text = ",\n" + std::string(kIndentText, ' ');
  return std::string_view(text).substr(first ? 1 : 0, spaces + (first ? 1 : 2));
}

}  // namespace

void JsonWriter::new_line(bool first) {
  const size_t spaces = levels_.size() * static_cast<size_t>(indent_);
  if (spaces <= kIndentText) {
    out_ += new_line_text(first, spaces);
  } else {
    out_ += first ? "\n" : ",\n";
    out_.append(spaces, ' ');
  }
}

JsonWriter JsonWriter::continuing(int indent, const std::vector<bool>& open, bool innermost_empty) {
  JsonWriter w(indent);
  for (bool object : open) w.levels_.push_back({object, 1});
  if (innermost_empty && !w.levels_.empty()) w.levels_.back().count = 0;
  return w;
}

void JsonWriter::before_value() {
  if (levels_.empty()) return;
  Level& level = levels_.back();
  if (level.object) {
    // key() wrote the separator and the indentation already.
    key_pending_ = false;
    return;
  }
  new_line(level.count++ == 0);
}

JsonWriter& JsonWriter::key(std::string_view k) {
  Level& level = levels_.back();
  const bool first = level.count++ == 0;
  const size_t spaces = levels_.size() * static_cast<size_t>(indent_);
  key_pending_ = true;
  if (spaces <= kIndentText && k.size() <= kShortKey && plain(k)) {
    // The line up to the value in one piece: separator, indentation, the quoted key and ": ".
    char line[2 + kIndentText + kShortKey + 4];
    const std::string_view lead = new_line_text(first, spaces);
    std::memcpy(line, lead.data(), lead.size());
    char* at = line + lead.size();
    *at++ = '"';
    std::memcpy(at, k.data(), k.size());
    at += k.size();
    std::memcpy(at, "\": ", 3);
    out_.append(line, static_cast<size_t>(at + 3 - line));
    return *this;
  }
  new_line(first);
  string(k);
  key_pending_ = true;
  out_ += ": ";
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  levels_.push_back({true, 0});
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  levels_.push_back({false, 0});
  return *this;
}

void JsonWriter::close(char bracket) {
  const bool empty = levels_.back().count == 0;
  levels_.pop_back();
  if (!empty) new_line(true);
  out_ += bracket;
}

JsonWriter& JsonWriter::end_object() {
  close('}');
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  close(']');
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::boolean(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::integer(long long v) {
  before_value();
  char buffer[24];
  auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  out_.append(buffer, end);
  return *this;
}

JsonWriter& JsonWriter::unsigned_integer(unsigned long long v) {
  before_value();
  char buffer[24];
  auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  out_.append(buffer, end);
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view s) {
  if (!key_pending_) before_value();
  key_pending_ = false;
  if (plain(s)) {
    const size_t at = out_.size();
    out_.resize(at + s.size() + 2);  // (one append of the quoted text, without a copy first)
    out_[at] = '"';
    std::memcpy(&out_[at + 1], s.data(), s.size());
    out_[at + 1 + s.size()] = '"';
  } else {
    out_ += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return *this;
}

JsonWriter& JsonWriter::json(const nlohmann::json& j) {
  before_value();
  const std::string text = j.dump(indent_, ' ', false, nlohmann::json::error_handler_t::replace);
  // dump() indents from column 0; here every line after the first moves right by this level's indentation.
  // Strings in JSON text hold no raw newline, so each '\n' starts a line of the document.
  const std::string shift(levels_.size() * static_cast<size_t>(indent_), ' ');
  for (char c : text) {
    out_ += c;
    if (c == '\n') out_ += shift;
  }
  return *this;
}

}  // namespace memplan
