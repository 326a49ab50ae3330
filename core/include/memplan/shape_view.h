// The shapes one view of a model gives its values, by name: ONNX Runtime's view at load time (no --dim, no data
// propagation), from which ORT decides reuse and in-place while the sizes stay the plan's.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "memplan/graph.h"

namespace memplan {

struct KnownShape {
  bool has_shape = false;  // a tensor type with a shape (its dims may still be unknown)
  std::vector<Dim> dims;
};

// Every value of the main graph the view has, initializers and Constant outputs left out (their dims come from the
// tensor itself, the same in every view). A value the view has without a tensor shape is here with has_shape false.
using ShapeView = std::unordered_map<std::string, KnownShape>;

}  // namespace memplan
