#include "size_rules.h"

#include "memplan/dtype.h"

namespace memplan::planner {

namespace {

bool same_shape(const SeenValue& a, const SeenValue& b) {
  if (!a.has_shape || !b.has_shape || a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    const Dim &x = a.dims[i], &y = b.dims[i];
    if (x.known() && y.known() && x.value == y.value) continue;
    if (!x.param.empty() && x.param == y.param && !x.known() && !y.known()) continue;
    return false;
  }
  return true;
}

bool is_string(const Value& v) {
  return v.dtype == kDTypeString;
}

}  // namespace

bool ort_same_size(const SeenValue& sa, const SeenValue& sb) {
  const Value &a = sa.value, &b = sb.value;
  if (!a.is_tensor() || !b.is_tensor() || is_string(a) || is_string(b)) return false;
  auto ba = dtype_bits(a.dtype), bb = dtype_bits(b.dtype);
  if (!ba || !bb || *ba != *bb) return false;
  return same_shape(sa, sb);
}

bool memplan_same_size(const SeenValue& sa, const SeenValue& sb) {
  if (ort_same_size(sa, sb)) return true;
  const Value &a = sa.value, &b = sb.value;
  if (!a.is_tensor() || !b.is_tensor() || is_string(a) || is_string(b)) return false;
  return a.bytes && b.bytes && *a.bytes == *b.bytes && *a.bytes > 0;
}

}  // namespace memplan::planner
