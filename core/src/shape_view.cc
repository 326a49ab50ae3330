#include "memplan/shape_view.h"

namespace memplan {

std::unordered_map<std::string_view, size_t> index_by_name(const ShapeView& view) {
  std::unordered_map<std::string_view, size_t> index;
  index.reserve(view.size());
  for (size_t i = 0; i < view.size(); ++i) index.emplace(view.names[i], i);
  return index;
}

}  // namespace memplan
