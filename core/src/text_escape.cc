#include "memplan/text_escape.h"

#include <cstdio>

namespace memplan {
namespace {

// The length of the valid UTF-8 sequence at s[i], or 0 when the bytes there are not one.
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0)
    n = 2, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0)
    n = 3, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0)
    n = 4, cp = c & 0x07;
  else
    return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  static const uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < smallest[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

void append_hex(std::string& out, unsigned char c) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  out += buf;
}

}  // namespace

bool is_control_byte(unsigned char c) {
  return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7F;
}

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

namespace {

// Walks `s` by UTF-8 character: bytes that are not valid UTF-8, and characters `hidden` says must not appear, are
// written as \xNN (each byte); every other character goes through `write`.
template <typename Hidden, typename Write>
std::string escape_each(std::string_view s, Hidden&& hidden, Write&& write) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    if (n == 0 || hidden(s.substr(i, n))) {
      append_hex(out, static_cast<unsigned char>(s[i]));
      ++i;
      continue;
    }
    write(out, s.substr(i, n));
    i += n;
  }
  return out;
}

// Control bytes (is_control_byte) but `kept`, and (two-byte) C1 controls U+0080..U+009F.
bool control(std::string_view ch, char kept = '\n') {
  const auto c = static_cast<unsigned char>(ch[0]);
  if (ch.size() == 2) return c == 0xC2 && static_cast<unsigned char>(ch[1]) < 0xA0;
  return ch.size() == 1 && ch[0] != kept && is_control_byte(c);
}

}  // namespace

std::string terminal_text(std::string_view s) {
  return escape_each(
      s, [](std::string_view ch) { return control(ch); },
      [](std::string& out, std::string_view ch) { out.append(ch); });
}

std::string markup_text(std::string_view s) {
  return escape_each(
      s, [](std::string_view ch) { return control(ch, '\r'); },  // (XML allows carriage returns)
      [](std::string& out, std::string_view ch) {
        switch (ch[0]) {
          case '&':
            out += "&amp;";
            break;
          case '<':
            out += "&lt;";
            break;
          case '>':
            out += "&gt;";
            break;
          case '"':
            out += "&quot;";
            break;
          case '\'':
            out += "&#39;";
            break;
          default:
            out.append(ch);
        }
      });
}

std::string dump_json(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string text_excerpt(std::string_view text, size_t max_chars) {
  std::string out(text.substr(0, max_chars));
  if (text.size() > max_chars) {
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
    if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
    out += "...";
  }
  return terminal_text(out);
}

std::string json_excerpt(const nlohmann::json& j, size_t max_chars) {
  return text_excerpt(dump_json(j), max_chars);
}

}  // namespace memplan
