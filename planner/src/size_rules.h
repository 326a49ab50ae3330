// When two values may share one buffer (the reuse decisions of every walk): ORT's SameSize, memplan's wider rule,
// and the shape each decision compares. Internal to planner/.
#pragma once

#include "freelist.h"
#include "memplan/planner/allocation_planner.h"

namespace memplan::planner {

// Value v with the shape the decisions compare (PlanInput::decision_shapes, where given).
inline SeenValue seen_value(const PlanInput& in, ValueId v) {
  const Value& value = in.graph.values[v];
  const KnownShape* other = in.decision_shapes ? (*in.decision_shapes)[v] : nullptr;
  return other ? SeenValue{value, other->has_shape, other->dims} : SeenValue{value, value.has_shape, value.dims};
}

// ORT's SameSize: no strings, the same element size (sub-element packing included), SameShape.
bool ort_same_size(const SeenValue& a, const SeenValue& b);

// memplan's rule: ORT's, or two tensors of exactly the same known byte size.
bool memplan_same_size(const SeenValue& a, const SeenValue& b);

// A value of known size never shares memory with one of unknown size: its bytes would live in a buffer
// the layout cannot place (and an unsized value would get memory sized for another).
inline bool sizes_alike(const Graph& g, ValueId a, ValueId b) {
  return g.values[a].bytes.has_value() == g.values[b].bytes.has_value();
}

}  // namespace memplan::planner
