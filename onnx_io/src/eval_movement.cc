// Ops that move, select or build elements without arithmetic on them: Shape-family reshaping, Gather*,
// Scatter*, Slice, Concat, Split, Transpose, Tile, Pad, Expand, Range, ConstantOfShape, Trilu, OneHot.
#include <algorithm>
#include <cmath>
#include <set>

#include "eval_support.h"

namespace memplan::onnx_io::eval {
namespace {

std::vector<int64_t> list_attr(const Call& c, const char* name) {
  auto it = c.attrs.int_lists.find(name);
  return it == c.attrs.int_lists.end() ? std::vector<int64_t>{} : it->second;
}

int64_t wrap_index(int64_t idx, int64_t extent, const char* op) {
  if (idx < -extent || idx >= extent)
    throw EvalError(std::string(op) + " index " + std::to_string(idx) + " is out of range for an axis of size " +
                    std::to_string(extent));
  return idx < 0 ? idx + extent : idx;
}

int64_t rank_of(const Tensor& t) {
  return static_cast<int64_t>(t.dims.size());
}

Result gather(const Call& c) {
  if (!c.input(1)) return std::nullopt;
  const Tensor &data = *c.input(0), &indices = *c.input(1);
  if (data.dims.empty()) throw EvalError("Gather on a scalar");
  const int64_t axis = normalize_axis(c.attrs.get("axis", 0), rank_of(data));
  Dims out_dims(data.dims.begin(), data.dims.begin() + axis);
  out_dims.insert(out_dims.end(), indices.dims.begin(), indices.dims.end());
  out_dims.insert(out_dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  if (!fits(out_dims, c.lim)) return std::nullopt;
  Tensor out = make(data.dtype, out_dims);
  const int64_t outer = product(Dims(data.dims.begin(), data.dims.begin() + axis));
  const int64_t inner = product(Dims(data.dims.begin() + axis + 1, data.dims.end()));
  const int64_t extent = data.dims[axis], n = indices.size();
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j) {
      const int64_t idx = wrap_index(indices.at_i(j), extent, "Gather");
      for (int64_t i = 0; i < inner; ++i, ++k) copy_element(out, k, data, (o * extent + idx) * inner + i);
    }
  return one(out);
}

Result gather_elements(const Call& c) {
  if (!c.input(1)) return std::nullopt;
  const Tensor &data = *c.input(0), &indices = *c.input(1);
  if (indices.dims.size() != data.dims.size()) throw EvalError("GatherElements with inputs of different ranks");
  const int64_t axis = normalize_axis(c.attrs.get("axis", 0), rank_of(data));
  if (!fits(indices.dims, c.lim)) return std::nullopt;
  Tensor out = make(data.dtype, indices.dims);
  const Dims strides = strides_of(data.dims);
  for (int64_t k = 0; k < out.size(); ++k) {
    Dims at = coords_of(k, indices.dims);
    at[axis] = wrap_index(indices.at_i(k), data.dims[axis], "GatherElements");
    for (size_t d = 0; d < at.size(); ++d)
      if (at[d] >= data.dims[d]) throw EvalError("GatherElements indices larger than the data");
    copy_element(out, k, data, linear_of(at, strides));
  }
  return one(out);
}

Result gather_nd(const Call& c) {
  if (!c.input(1)) return std::nullopt;
  const Tensor &data = *c.input(0), &indices = *c.input(1);
  const int64_t b = c.attrs.get("batch_dims", 0), r = rank_of(data), q = rank_of(indices);
  if (q < 1 || b < 0 || b >= std::min(r, q)) throw EvalError("GatherND batch_dims out of range");
  const int64_t m = indices.dims.back();
  if (m < 1 || b + m > r) throw EvalError("GatherND index tuples longer than the data's rank");
  Dims lead(indices.dims.begin(), indices.dims.end() - 1), tail(data.dims.begin() + b + m, data.dims.end());
  Dims out_dims = lead;
  out_dims.insert(out_dims.end(), tail.begin(), tail.end());
  if (!fits(out_dims, c.lim)) return std::nullopt;
  Tensor out = make(data.dtype, out_dims);
  const Dims strides = strides_of(data.dims);
  const int64_t tail_size = product(tail);
  for (int64_t li = 0; li < product(lead); ++li) {
    Dims lc = coords_of(li, lead);
    Dims at(lc.begin(), lc.begin() + b);
    for (int64_t j = 0; j < m; ++j) at.push_back(wrap_index(indices.at_i(li * m + j), data.dims[b + j], "GatherND"));
    for (int64_t ti = 0; ti < tail_size; ++ti) {
      Dims full = at;
      Dims tc = coords_of(ti, tail);
      full.insert(full.end(), tc.begin(), tc.end());
      copy_element(out, li * tail_size + ti, data, linear_of(full, strides));
    }
  }
  return one(out);
}

// Combines an update into an element under Scatter*'s `reduction`.
void scatter_into(Tensor& out, int64_t k, const Tensor& updates, int64_t src, const std::string& reduction) {
  if (reduction == "none") return copy_element(out, k, updates, src);
  if (out.is_float()) {
    double x = out.floats[k], y = updates.floats[src];
    double r = reduction == "add"   ? x + y
               : reduction == "mul" ? x * y
               : reduction == "max" ? std::max(x, y)
                                    : std::min(x, y);
    return set_float(out, k, r);
  }
  int64_t x = out.ints[k], y = updates.ints[src];
  int64_t r = reduction == "add"   ? add(x, y)
              : reduction == "mul" ? mul(x, y)
              : reduction == "max" ? std::max(x, y)
                                   : std::min(x, y);
  set_int(out, k, r);
}

std::string reduction_of(const Call& c) {
  std::string r = c.attrs.get_string("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    throw EvalError("unknown reduction '" + r + "'");
  return r;
}

Result scatter_elements(const Call& c) {
  if (!c.input(1) || !c.input(2)) return std::nullopt;
  const Tensor &data = *c.input(0), &indices = *c.input(1), &updates = *c.input(2);
  if (indices.dims != updates.dims || indices.dims.size() != data.dims.size())
    throw EvalError("ScatterElements indices and updates do not match the data");
  const int64_t axis = normalize_axis(c.attrs.get("axis", 0), rank_of(data));
  const std::string reduction = reduction_of(c);
  Tensor out = data;
  const Dims strides = strides_of(data.dims);
  for (int64_t k = 0; k < indices.size(); ++k) {
    Dims at = coords_of(k, indices.dims);
    at[axis] = wrap_index(indices.at_i(k), data.dims[axis], "ScatterElements");
    for (size_t d = 0; d < at.size(); ++d)
      if (at[d] >= data.dims[d]) throw EvalError("ScatterElements indices larger than the data");
    scatter_into(out, linear_of(at, strides), updates, k, reduction);
  }
  return one(out);
}

Result scatter_nd(const Call& c) {
  if (!c.input(1) || !c.input(2)) return std::nullopt;
  const Tensor &data = *c.input(0), &indices = *c.input(1), &updates = *c.input(2);
  if (indices.dims.empty()) throw EvalError("ScatterND indices must have rank 1 or more");
  const int64_t k_len = indices.dims.back();
  if (k_len > rank_of(data)) throw EvalError("ScatterND index tuples longer than the data's rank");
  Dims lead(indices.dims.begin(), indices.dims.end() - 1), tail(data.dims.begin() + k_len, data.dims.end());
  Dims expected = lead;
  expected.insert(expected.end(), tail.begin(), tail.end());
  if (updates.dims != expected) throw EvalError("ScatterND updates have the wrong shape");
  const std::string reduction = reduction_of(c);
  Tensor out = data;
  const Dims strides = strides_of(data.dims);
  const int64_t tail_size = product(tail);
  for (int64_t li = 0; li < product(lead); ++li) {
    int64_t base = 0;
    for (int64_t j = 0; j < k_len; ++j)
      base += wrap_index(indices.at_i(li * k_len + j), data.dims[j], "ScatterND") * strides[j];
    for (int64_t ti = 0; ti < tail_size; ++ti) scatter_into(out, base + ti, updates, li * tail_size + ti, reduction);
  }
  return one(out);
}

Result slice(const Call& c) {
  const Tensor& data = *c.input(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset < 10) {
    starts = list_attr(c, "starts");
    ends = list_attr(c, "ends");
    axes = list_attr(c, "axes");
  } else {
    if (!c.input(1) || !c.input(2)) return std::nullopt;
    starts = int_list(c.input(1));
    ends = int_list(c.input(2));
    axes = int_list(c.input(3));
    steps = int_list(c.input(4));
  }
  const int64_t rank = rank_of(data);
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw EvalError("Slice starts, ends, axes and steps differ in length");
  Dims first(rank, 0), step(rank, 1), out_dims = data.dims;
  std::set<int64_t> seen;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t ax = normalize_axis(axes[i], rank);
    if (!seen.insert(ax).second) throw EvalError("Slice repeats an axis");
    const int64_t dim = data.dims[ax], st = steps[i];
    int64_t s = starts[i], e = ends[i];
    if (st == 0) throw EvalError("Slice step is 0");
    if (st == INT64_MIN) throw EvalError("Slice step is out of range");
    if (s < 0) s = s < -dim ? -1 : s + dim;  // clamped below, so no overflow
    if (e < 0) e = e < -dim ? -1 : e + dim;
    int64_t count;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > s ? (e - s - 1) / st + 1 : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count = s > e ? (s - e - 1) / (-st) + 1 : 0;
    }
    first[ax] = s;
    step[ax] = st;
    out_dims[ax] = count;
  }
  if (!fits(out_dims, c.lim)) return std::nullopt;
  Tensor out = make(data.dtype, out_dims);
  const Dims in_strides = strides_of(data.dims);
  for (int64_t k = 0; k < out.size(); ++k) {
    Dims at = coords_of(k, out_dims);
    int64_t src = 0;
    for (int64_t ax = 0; ax < rank; ++ax) src += (first[ax] + at[ax] * step[ax]) * in_strides[ax];
    copy_element(out, k, data, src);
  }
  return one(out);
}

Result concat(const Call& c) {
  const Tensor& a = *c.input(0);
  const int64_t rank = rank_of(a);
  const int64_t axis = normalize_axis(c.attrs.get("axis", 0), rank);
  Dims out_dims = a.dims;
  out_dims[axis] = 0;
  for (const Tensor* t : c.in) {
    if (!t) return std::nullopt;
    if (t->dims.size() != a.dims.size()) throw EvalError("Concat of tensors of different ranks");
    for (int64_t k = 0; k < rank; ++k)
      if (k != axis && t->dims[k] != a.dims[k]) throw EvalError("Concat of tensors of different shapes");
    out_dims[axis] = add(out_dims[axis], t->dims[axis]);
  }
  if (!fits(out_dims, c.lim)) return std::nullopt;
  Tensor out = make(a.dtype, out_dims);
  const int64_t outer = product(Dims(a.dims.begin(), a.dims.begin() + axis));
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor* t : c.in) {
      const int64_t chunk = product(Dims(t->dims.begin() + axis, t->dims.end()));
      for (int64_t i = 0; i < chunk; ++i, ++k) copy_element(out, k, *t, o * chunk + i);
    }
  return one(out);
}

Result split(const Call& c) {
  const Tensor& a = *c.input(0);
  const int64_t axis = normalize_axis(c.attrs.get("axis", 0), rank_of(a));
  const int64_t dim = a.dims[axis];
  std::vector<int64_t> sizes = c.opset >= 13 ? int_list(c.input(1)) : list_attr(c, "split");
  const int64_t n = c.attrs.outputs;
  if (sizes.empty()) {
    if (n < 1) return std::nullopt;
    const int64_t chunk = (dim + n - 1) / n;
    if (dim % n != 0 && c.opset < 18) throw EvalError("Split cannot divide the axis evenly");
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw EvalError("Split with a negative size");
    total = add(total, s);
  }
  if (total != dim) throw EvalError("Split sizes do not add up to the axis");
  std::vector<Tensor> outs;
  const int64_t outer = product(Dims(a.dims.begin(), a.dims.begin() + axis));
  const int64_t inner = product(Dims(a.dims.begin() + axis + 1, a.dims.end()));
  int64_t offset = 0;
  for (int64_t s : sizes) {
    Dims d = a.dims;
    d[axis] = s;
    Tensor out = make(a.dtype, d);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < s * inner; ++i) copy_element(out, o * s * inner + i, a, (o * dim + offset) * inner + i);
    offset += s;
    outs.push_back(std::move(out));
  }
  return outs;
}

Result transpose(const Call& c) {
  const Tensor& a = *c.input(0);
  const int64_t rank = rank_of(a);
  std::vector<int64_t> perm = list_attr(c, "perm");
  if (perm.empty())
    for (int64_t k = rank; k-- > 0;) perm.push_back(k);
  if (static_cast<int64_t>(perm.size()) != rank) throw EvalError("Transpose perm has the wrong length");
  std::set<int64_t> seen;
  for (int64_t& p : perm) {
    p = normalize_axis(p, rank);
    if (!seen.insert(p).second) throw EvalError("Transpose perm repeats an axis");
  }
  Dims out_dims(rank);
  for (int64_t k = 0; k < rank; ++k) out_dims[k] = a.dims[perm[k]];
  Tensor out = make(a.dtype, out_dims);
  const Dims in_strides = strides_of(a.dims);
  for (int64_t k = 0; k < out.size(); ++k) {
    Dims at = coords_of(k, out_dims);
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) src += at[d] * in_strides[perm[d]];
    copy_element(out, k, a, src);
  }
  return one(out);
}

Result tile(const Call& c) {
  if (!c.input(1)) return std::nullopt;
  const Tensor& a = *c.input(0);
  const std::vector<int64_t> repeats = int_list(c.input(1));
  if (repeats.size() != a.dims.size()) throw EvalError("Tile repeats do not match the input's rank");
  Dims out_dims(a.dims.size());
  for (size_t k = 0; k < a.dims.size(); ++k) {
    if (repeats[k] < 0) throw EvalError("Tile with a negative repeat");
    out_dims[k] = mul(a.dims[k], repeats[k]);
  }
  if (!fits(out_dims, c.lim)) return std::nullopt;
  Tensor out = make(a.dtype, out_dims);
  const Dims in_strides = strides_of(a.dims);
  for (int64_t k = 0; k < out.size(); ++k) {
    Dims at = coords_of(k, out_dims);
    for (size_t d = 0; d < at.size(); ++d) at[d] %= a.dims[d];
    copy_element(out, k, a, linear_of(at, in_strides));
  }
  return one(out);
}

// Where index i of a padded axis of size n reads from, or -1 for the constant.
int64_t pad_source(int64_t i, int64_t n, const std::string& mode) {
  if (i >= 0 && i < n) return i;
  if (mode == "constant" || n == 0) return -1;
  if (mode == "edge") return i < 0 ? 0 : n - 1;
  if (mode == "wrap") return ((i % n) + n) % n;
  if (n == 1) return 0;  // reflect
  const int64_t period = 2 * (n - 1);
  i = ((i % period) + period) % period;
  return i < n ? i : period - i;
}

Result pad(const Call& c) {
  const Tensor& a = *c.input(0);
  const int64_t rank = rank_of(a);
  std::vector<int64_t> pads, axes;
  double value = 0;
  if (c.opset < 11) {
    pads = list_attr(c, c.opset < 2 ? "paddings" : "pads");
    value = c.attrs.get_float("value", 0.0);
  } else {
    if (!c.input(1)) return std::nullopt;
    pads = int_list(c.input(1));
    if (c.input(2) && c.input(2)->size() > 0) value = c.input(2)->at_f(0);
    axes = int_list(c.input(3));
  }
  if (axes.empty())
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  if (pads.size() != 2 * axes.size()) throw EvalError("Pad pads have the wrong length");
  const std::string mode = c.attrs.get_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    throw EvalError("unknown Pad mode '" + mode + "'");
  Dims begin(rank, 0), out_dims = a.dims;
  for (size_t j = 0; j < axes.size(); ++j) {
    const int64_t ax = normalize_axis(axes[j], rank);
    begin[ax] = pads[j];
    out_dims[ax] = add(add(a.dims[ax], pads[j]), pads[j + axes.size()]);
    if (out_dims[ax] < 0) throw EvalError("Pad removes more than the axis holds");
    if (a.dims[ax] == 0 && out_dims[ax] > 0 && mode != "constant") throw EvalError("Pad of an empty axis");
  }
  if (!fits(out_dims, c.lim)) return std::nullopt;
  Tensor out = make(a.dtype, out_dims);
  const Dims in_strides = strides_of(a.dims);
  for (int64_t k = 0; k < out.size(); ++k) {
    Dims at = coords_of(k, out_dims);
    int64_t src = 0;
    bool constant = false;
    for (int64_t d = 0; d < rank && !constant; ++d) {
      const int64_t s = pad_source(at[d] - begin[d], a.dims[d], mode);
      if (s < 0) constant = true;
      src += s * in_strides[d];
    }
    if (constant)
      set_float(out, k, value);
    else
      copy_element(out, k, a, src);
  }
  return one(out);
}

Result reshape(const Call& c) {
  if (!c.input(1)) return std::nullopt;
  const Tensor& a = *c.input(0);
  const std::vector<int64_t> shape = int_list(c.input(1));
  const bool allowzero = c.attrs.get("allowzero", 0) != 0;
  Dims out_dims;
  int64_t infer_at = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d == 0 && !allowzero) {
      if (i >= a.dims.size()) throw EvalError("Reshape copies a dimension the input does not have");
      d = a.dims[i];
    }
    if (d == -1) {
      if (infer_at >= 0) throw EvalError("Reshape with two -1 dimensions");
      infer_at = static_cast<int64_t>(i);
      out_dims.push_back(1);
      continue;
    }
    if (d < 0) throw EvalError("Reshape to a negative dimension");
    known = mul(known, d);
    out_dims.push_back(d);
  }
  if (infer_at >= 0) {
    if (known == 0 || a.size() % known != 0) throw EvalError("Reshape cannot infer the -1 dimension");
    out_dims[infer_at] = a.size() / known;
  }
  if (product(out_dims) != a.size()) throw EvalError("Reshape changes the element count");
  Tensor out = a;
  out.dims = out_dims;
  return one(out);
}

Result squeeze_unsqueeze(const Call& c) {
  const Tensor& a = *c.input(0);
  auto axes = c.axes(1, 13);
  const int64_t rank = rank_of(a);
  Tensor out = a;
  out.dims.clear();
  if (c.op == "Unsqueeze") {
    if (!axes) throw EvalError("Unsqueeze without axes");
    const int64_t out_rank = rank + static_cast<int64_t>(axes->size());
    std::set<int64_t> at;
    for (int64_t ax : *axes)
      if (!at.insert(normalize_axis(ax, out_rank)).second) throw EvalError("Unsqueeze repeats an axis");
    for (int64_t k = 0, src = 0; k < out_rank; ++k) out.dims.push_back(at.count(k) ? 1 : a.dims[src++]);
    return one(out);
  }
  std::set<int64_t> drop;
  if (axes)
    for (int64_t ax : *axes) {
      const int64_t n = normalize_axis(ax, rank);
      if (a.dims[n] != 1) throw EvalError("Squeeze of an axis whose size is not 1");
      drop.insert(n);
    }
  for (int64_t k = 0; k < rank; ++k)
    if (!(axes ? drop.count(k) > 0 : a.dims[k] == 1)) out.dims.push_back(a.dims[k]);
  return one(out);
}

Result flatten(const Call& c) {
  const Tensor& a = *c.input(0);
  const int64_t rank = rank_of(a);
  int64_t axis = c.attrs.get("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) throw EvalError("Flatten axis out of range");
  Tensor out = a;
  out.dims = {product(Dims(a.dims.begin(), a.dims.begin() + axis)), product(Dims(a.dims.begin() + axis, a.dims.end()))};
  return one(out);
}

Result expand(const Call& c) {
  if (!c.input(1)) return std::nullopt;
  const Tensor& a = *c.input(0);
  const Dims out_dims = broadcast(a.dims, int_list(c.input(1)));
  if (!fits(out_dims, c.lim)) return std::nullopt;
  Tensor out = make(a.dtype, out_dims);
  for (int64_t k = 0; k < out.size(); ++k) copy_element(out, k, a, broadcast_source(k, out_dims, a.dims));
  return one(out);
}

Result range(const Call& c) {
  if (!c.input(1) || !c.input(2)) return std::nullopt;
  const Tensor &start = *c.input(0), &limit = *c.input(1), &delta = *c.input(2);
  if (start.is_float() || limit.is_float() || delta.is_float()) {
    const double s = scalar_f(start), l = scalar_f(limit), d = scalar_f(delta);
    if (d == 0 || !std::isfinite(d) || !std::isfinite(s) || !std::isfinite(l))
      throw EvalError("Range needs finite bounds and a non-zero delta");
    const double n = std::max(0.0, std::ceil((l - s) / d));
    if (n > static_cast<double>(c.lim.max_elements)) return std::nullopt;
    Tensor out = make(start.dtype, {static_cast<int64_t>(n)});
    for (int64_t k = 0; k < out.size(); ++k) set_float(out, k, s + static_cast<double>(k) * d);
    return one(out);
  }
  const int64_t s = start.at_i(0), l = limit.at_i(0), d = delta.at_i(0);
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1) throw EvalError("Range needs scalar inputs");
  if (d == 0) throw EvalError("Range delta is 0");
  // 128-bit so that no start, limit or delta overflows the count.
  const __int128 span = static_cast<__int128>(l) - s, step = d;
  const __int128 n = (span > 0) == (step > 0) && span != 0 ? (span + step - (step > 0 ? 1 : -1)) / step : 0;
  if (n > c.lim.max_elements) return std::nullopt;
  Tensor out = make(start.dtype, {static_cast<int64_t>(n)});
  for (int64_t k = 0; k < out.size(); ++k) set_int(out, k, static_cast<int64_t>(s + static_cast<__int128>(k) * d));
  return one(out);
}

Result constant_of_shape(const Call& c) {
  const Dims out_dims = int_list(c.input(0));
  for (int64_t d : out_dims)
    if (d < 0) throw EvalError("ConstantOfShape with a negative dimension");
  if (!fits(out_dims, c.lim)) return std::nullopt;
  auto it = c.attrs.tensors.find("value");
  const Tensor fill = it != c.attrs.tensors.end() ? it->second : Tensor::floats_of(kFloat, {0.0}, {1});
  if (fill.size() != 1) throw EvalError("ConstantOfShape value must hold exactly one element");
  Tensor out = make(fill.dtype, out_dims);
  for (int64_t k = 0; k < out.size(); ++k) copy_element(out, k, fill, 0);
  return one(out);
}

Result trilu(const Call& c) {
  const Tensor& a = *c.input(0);
  if (a.dims.size() < 2) throw EvalError("Trilu needs rank 2 or more");
  const int64_t k = c.input(1) ? c.input(1)->at_i(0) : 0;
  const bool upper = c.attrs.get("upper", 1) != 0;
  const int64_t rows = a.dims[a.dims.size() - 2], cols = a.dims.back();
  Tensor out = make(a.dtype, a.dims);
  for (int64_t e = 0; e < a.size(); ++e) {
    const int64_t j = e % cols, i = (e / cols) % rows;
    const bool keep = upper ? j - i >= k : j - i <= k;
    if (keep) copy_element(out, e, a, e);
  }
  return one(out);
}

Result one_hot(const Call& c) {
  if (!c.input(1) || !c.input(2)) return std::nullopt;
  const Tensor &indices = *c.input(0), &values = *c.input(2);
  const double depth_f = scalar_f(*c.input(1));
  if (!(depth_f >= 1) || depth_f > 9e18) throw EvalError("OneHot depth must be positive");
  const int64_t depth = static_cast<int64_t>(depth_f);
  if (values.size() != 2) throw EvalError("OneHot values must hold two elements");
  const int64_t out_rank = rank_of(indices) + 1;
  const int64_t axis = normalize_axis(c.attrs.get("axis", -1), out_rank);
  Dims out_dims = indices.dims;
  out_dims.insert(out_dims.begin() + axis, depth);
  if (!fits(out_dims, c.lim)) return std::nullopt;
  Tensor out = make(values.dtype, out_dims);
  for (int64_t k = 0; k < out.size(); ++k) {
    Dims at = coords_of(k, out_dims);
    const int64_t slot = at[axis];
    at.erase(at.begin() + axis);
    int64_t idx = indices.at_i(linear_of(at, strides_of(indices.dims)));
    if (idx < 0) idx += depth;
    copy_element(out, k, values, idx == slot ? 1 : 0);
  }
  return one(out);
}

}  // namespace

void add_movement_ops(Table& t) {
  t["Shape"] = [](const Call& c) { return one(evaluate_shape(c.input(0)->dims, c.attrs)); };
  t["Gather"] = gather;
  t["GatherElements"] = gather_elements;
  t["GatherND"] = gather_nd;
  t["Scatter"] = scatter_elements;  // ScatterElements' name before opset 11
  t["ScatterElements"] = scatter_elements;
  t["ScatterND"] = scatter_nd;
  t["Slice"] = slice;
  t["Concat"] = concat;
  t["Split"] = split;
  t["Transpose"] = transpose;
  t["Tile"] = tile;
  t["Pad"] = pad;
  t["Reshape"] = reshape;
  t["Squeeze"] = squeeze_unsqueeze;
  t["Unsqueeze"] = squeeze_unsqueeze;
  t["Flatten"] = flatten;
  t["Expand"] = expand;
  t["Range"] = range;
  t["ConstantOfShape"] = constant_of_shape;
  t["Trilu"] = trilu;
  t["OneHot"] = one_hot;
}

}  // namespace memplan::onnx_io::eval
