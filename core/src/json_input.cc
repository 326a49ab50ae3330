#include "memplan/json_input.h"

namespace memplan {

void check_json_depth(const std::string& text, const std::string& source) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        fail_input(source, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels (at byte " +
                               std::to_string(i) + "); no memplan input nests like this");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

}  // namespace memplan
