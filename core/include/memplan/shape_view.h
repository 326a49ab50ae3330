// The shapes one view of a model gives its values, by name: ONNX Runtime's view at load time (no --dim, no data
// propagation), from which ORT decides reuse and in-place while the sizes stay the plan's.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "memplan/graph.h"

namespace memplan {

struct KnownShape {
  bool has_shape = false;  // a tensor type with a shape (its dims may still be unknown)
  std::vector<Dim> dims;
};

// Every value of the main graph the view has, initializers left out (their dims come from the tensor itself, the same
// in every view; one whose type the model declares is listed, and not read). A value the view has without a tensor
// shape is here with has_shape false. Listed in the order of the graph's values (graph_builder.cc) where the view
// could, so that a walk over a graph finds most of them by position (planner::ort_shapes_of); each name once.
struct ShapeView {
  std::vector<std::string> names;
  std::vector<KnownShape> shapes;  // shapes[i] is names[i]'s

  void add(std::string name, KnownShape shape) {
    names.push_back(std::move(name));
    shapes.push_back(std::move(shape));
  }
  size_t size() const { return names.size(); }
};

// Each name's position in `view` (its keys view the view's names: keep the view while it is used).
std::unordered_map<std::string_view, size_t> index_by_name(const ShapeView& view);

}  // namespace memplan
