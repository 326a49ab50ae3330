// Strings from input (names in a model or a plan, paths) made safe for where they are written: the terminal,
// HTML/SVG, JSON. Input is never trusted to be printable or valid UTF-8.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace memplan {

// Whether `s` is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view s);

// A byte a terminal would act on rather than show: C0 controls other than newline and tab, and DEL.
bool is_control_byte(unsigned char c);

// For a terminal or a log: control characters (C0 other than newline and tab, DEL, C1) and bytes that are not
// valid UTF-8 shown as \xNN, so no input can move the cursor, recolour, or forge a line.
std::string terminal_text(std::string_view s);

// For HTML and XML text and attribute values: & < > " ' as entities; characters XML 1.0 forbids and invalid
// UTF-8 shown as \xNN.
std::string markup_text(std::string_view s);

// A JSON document as text; any string that is not valid UTF-8 has its bad bytes replaced by U+FFFD (writers
// never fail on a name).
std::string dump_json(const nlohmann::json& j, int indent = -1);

// A JSON value for an error message: at most `max_chars` characters of its text, "..." after a cut.
// `text` cut to at most max_chars bytes (never inside a UTF-8 character, "..." marking the cut) for a message.
std::string text_excerpt(std::string_view text, size_t max_chars);
std::string json_excerpt(const nlohmann::json& j, size_t max_chars = 80);

}  // namespace memplan
