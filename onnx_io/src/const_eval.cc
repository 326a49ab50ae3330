#include "memplan/onnx_io/const_eval.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

namespace memplan::onnx_io {
namespace {

using Dims = std::vector<int64_t>;
constexpr DType kBool = 9, kInt64 = 7, kInt32 = 6, kFloat = 1;

int64_t product(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n)) throw EvalError("element count overflows 64 bits");
  return n;
}

int64_t add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw EvalError("integer overflow in addition");
  return r;
}
int64_t sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) throw EvalError("integer overflow in subtraction");
  return r;
}
int64_t mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw EvalError("integer overflow in multiplication");
  return r;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    throw EvalError("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

Dims broadcast(const Dims& a, const Dims& b) {
  Dims out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (da != db && da != 1 && db != 1)
      throw EvalError("shapes cannot broadcast (" + std::to_string(da) + " vs " + std::to_string(db) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// The linear index into a tensor of `in` dims that broadcasts to position `linear` of `out` dims.
int64_t broadcast_source(int64_t linear, const Dims& out, const Dims& in) {
  int64_t src = 0, stride = 1;
  for (size_t k = out.size(); k-- > 0;) {
    int64_t coord = linear % out[k];
    linear /= out[k];
    size_t offset = out.size() - in.size();
    if (k >= offset) {
      int64_t d = in[k - offset];
      if (d != 1) src += coord * stride;
      stride *= d;
    }
  }
  return src;
}

// Strides of a row-major tensor.
Dims strides_of(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (size_t k = dims.size(); k-- > 1;) s[k - 1] = s[k] * dims[k];
  return s;
}

Tensor make(DType dtype, Dims dims) {
  Tensor t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  if (dtype_is_float(dtype))
    t.floats.resize(t.size());
  else
    t.ints.resize(t.size());
  return t;
}

void set(Tensor& t, int64_t k, double f, int64_t i) {
  if (t.is_float())
    t.floats[k] = f;
  else
    t.ints[k] = t.dtype == kBool ? (i != 0) : i;
}

// Integers narrower than 64 bits must stay in range; a value that does not fit is a fault.
void check_range(const Tensor& t) {
  if (t.dtype != kInt32) return;
  for (int64_t v : t.ints)
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      throw EvalError("int32 overflow");
}

std::vector<int64_t> int_list(const Tensor* t) {
  std::vector<int64_t> out;
  if (t)
    for (int64_t k = 0; k < t->size(); ++k) out.push_back(t->at_i(k));
  return out;
}

// Axes from an attribute (older opsets) or from input `index` (newer ones).
std::optional<std::vector<int64_t>> axes_from(const EvalAttributes& attrs, const std::vector<const Tensor*>& in,
                                              size_t index) {
  if (in.size() > index && in[index]) return int_list(in[index]);
  auto it = attrs.int_lists.find("axes");
  if (it != attrs.int_lists.end()) return it->second;
  return std::nullopt;
}

using BinaryInt = std::function<int64_t(int64_t, int64_t)>;
using BinaryFloat = std::function<double(double, double)>;

Tensor binary(const Tensor& a, const Tensor& b, DType out_type, const BinaryInt& fi, const BinaryFloat& ff) {
  Tensor out = make(out_type, broadcast(a.dims, b.dims));
  bool floats = a.is_float() || b.is_float();
  for (int64_t k = 0; k < out.size(); ++k) {
    int64_t ia = broadcast_source(k, out.dims, a.dims), ib = broadcast_source(k, out.dims, b.dims);
    if (floats) {
      double r = ff(a.at_f(ia), b.at_f(ib));
      set(out, k, r, static_cast<int64_t>(r));
    } else {
      int64_t r = fi(a.ints[ia], b.ints[ib]);
      set(out, k, static_cast<double>(r), r);
    }
  }
  check_range(out);
  return out;
}

Tensor unary(const Tensor& a, const std::function<int64_t(int64_t)>& fi, const std::function<double(double)>& ff) {
  Tensor out = make(a.dtype, a.dims);
  for (int64_t k = 0; k < a.size(); ++k) {
    if (a.is_float())
      out.floats[k] = ff(a.floats[k]);
    else
      set(out, k, 0, fi(a.ints[k]));
  }
  check_range(out);
  return out;
}

int64_t int_div(int64_t a, int64_t b) {
  if (b == 0) throw EvalError("integer division by zero");
  if (a == std::numeric_limits<int64_t>::min() && b == -1) throw EvalError("integer overflow in division");
  return a / b;  // truncates toward zero, as ONNX Runtime's kernels do
}

int64_t int_mod(int64_t a, int64_t b, bool fmod) {
  if (b == 0) throw EvalError("integer modulo by zero");
  if (b == -1) return 0;
  int64_t r = a % b;
  if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;  // Python-style: the sign follows the divisor
  return r;
}

std::optional<Tensor> gather(const Tensor& data, const Tensor& indices, int64_t axis_attr, const EvalLimits& lim) {
  int64_t rank = static_cast<int64_t>(data.dims.size());
  if (rank == 0) throw EvalError("Gather on a scalar");
  int64_t axis = normalize_axis(axis_attr, rank);
  Dims out_dims(data.dims.begin(), data.dims.begin() + axis);
  out_dims.insert(out_dims.end(), indices.dims.begin(), indices.dims.end());
  out_dims.insert(out_dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  if (product(out_dims) > lim.max_elements) return std::nullopt;
  Tensor out = make(data.dtype, out_dims);
  int64_t outer = product(Dims(data.dims.begin(), data.dims.begin() + axis));
  int64_t inner = product(Dims(data.dims.begin() + axis + 1, data.dims.end()));
  int64_t extent = data.dims[axis], n = indices.size(), k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j) {
      int64_t idx = indices.at_i(j);
      if (idx < -extent || idx >= extent)
        throw EvalError("Gather index " + std::to_string(idx) + " is out of range for axis of size " +
                        std::to_string(extent));
      if (idx < 0) idx += extent;
      for (int64_t i = 0; i < inner; ++i, ++k) {
        int64_t src = (o * extent + idx) * inner + i;
        set(out, k, data.at_f(src), data.is_float() ? 0 : data.ints[src]);
      }
    }
  return out;
}

std::optional<Tensor> slice(const Tensor& data, std::vector<int64_t> starts, std::vector<int64_t> ends,
                            std::vector<int64_t> axes, std::vector<int64_t> steps, const EvalLimits& lim) {
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw EvalError("Slice starts, ends, axes and steps differ in length");
  Dims first(rank, 0), step(rank, 1), out_dims = data.dims;
  std::set<int64_t> seen;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t ax = normalize_axis(axes[i], rank);
    if (!seen.insert(ax).second) throw EvalError("Slice repeats an axis");
    int64_t dim = data.dims[ax], s = starts[i], e = ends[i], st = steps[i];
    if (st == 0) throw EvalError("Slice step is 0");
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t count;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count = s > e ? (s - e + (-st) - 1) / (-st) : 0;
    }
    first[ax] = s;
    step[ax] = st;
    out_dims[ax] = count;
  }
  if (product(out_dims) > lim.max_elements) return std::nullopt;
  Tensor out = make(data.dtype, out_dims);
  Dims in_strides = strides_of(data.dims);
  for (int64_t k = 0; k < out.size(); ++k) {
    int64_t rest = k, src = 0;
    for (int64_t ax = rank; ax-- > 0;) {
      int64_t coord = rest % out_dims[ax];
      rest /= out_dims[ax];
      src += (first[ax] + coord * step[ax]) * in_strides[ax];
    }
    set(out, k, data.at_f(src), data.is_float() ? 0 : data.ints[src]);
  }
  return out;
}

std::optional<Tensor> reduce(const Tensor& data, std::optional<std::vector<int64_t>> axes, bool keepdims,
                             bool noop_with_empty_axes, bool is_product) {
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  std::vector<bool> reduced(rank, false);
  if (!axes || axes->empty()) {
    if (noop_with_empty_axes) return data;
    reduced.assign(rank, true);
  } else {
    for (int64_t a : *axes) reduced[normalize_axis(a, rank)] = true;
  }
  Dims kept_dims;
  for (int64_t ax = 0; ax < rank; ++ax) kept_dims.push_back(reduced[ax] ? 1 : data.dims[ax]);
  Tensor acc = make(data.dtype, kept_dims);
  if (acc.is_float())
    std::fill(acc.floats.begin(), acc.floats.end(), is_product ? 1.0 : 0.0);
  else
    std::fill(acc.ints.begin(), acc.ints.end(), is_product ? 1 : 0);
  Dims acc_strides = strides_of(kept_dims);
  for (int64_t k = 0; k < data.size(); ++k) {
    int64_t rest = k, dst = 0;
    for (int64_t ax = rank; ax-- > 0;) {
      int64_t coord = rest % data.dims[ax];
      rest /= data.dims[ax];
      if (!reduced[ax]) dst += coord * acc_strides[ax];
    }
    if (acc.is_float())
      acc.floats[dst] = is_product ? acc.floats[dst] * data.floats[k] : acc.floats[dst] + data.floats[k];
    else
      acc.ints[dst] = is_product ? mul(acc.ints[dst], data.ints[k]) : add(acc.ints[dst], data.ints[k]);
  }
  if (!keepdims) {
    Dims out_dims;
    for (int64_t ax = 0; ax < rank; ++ax)
      if (!reduced[ax]) out_dims.push_back(data.dims[ax]);
    acc.dims = out_dims;
  }
  check_range(acc);
  return acc;
}

std::optional<Tensor> cast(const Tensor& in, DType to) {
  if (!dtype_bits(to)) return std::nullopt;  // strings and unknown types
  Tensor out = make(to, in.dims);
  for (int64_t k = 0; k < in.size(); ++k) {
    if (out.is_float()) {
      out.floats[k] = in.at_f(k);
    } else if (in.is_float()) {
      double f = in.floats[k];
      if (to == kBool) {
        out.ints[k] = f != 0;
      } else {
        if (!std::isfinite(f) || f >= 9.2e18 || f <= -9.2e18)
          throw EvalError("Cast of " + std::to_string(f) + " to an integer type");
        out.ints[k] = static_cast<int64_t>(f);
      }
    } else {
      set(out, k, 0, in.ints[k]);
    }
  }
  check_range(out);
  return out;
}

}  // namespace

bool dtype_is_float(DType t) {
  return t == 1 || t == 10 || t == 11 || t == 16 || (t >= 17 && t <= 20) || t == 23;
}
bool Tensor::is_float() const {
  return dtype_is_float(dtype);
}
int64_t Tensor::size() const {
  return product(dims);
}

Tensor Tensor::int64s(std::vector<int64_t> values, std::vector<int64_t> dims) {
  Tensor t;
  t.dtype = kInt64;
  t.dims = std::move(dims);
  t.ints = std::move(values);
  return t;
}
Tensor Tensor::int64_vector(std::vector<int64_t> values) {
  int64_t n = static_cast<int64_t>(values.size());
  return int64s(std::move(values), {n});
}
Tensor Tensor::int64_scalar(int64_t value) {
  return int64s({value}, {});
}
Tensor Tensor::floats_of(DType dtype, std::vector<double> values, std::vector<int64_t> dims) {
  Tensor t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.floats = std::move(values);
  return t;
}

int64_t EvalAttributes::get(const std::string& name, int64_t fallback) const {
  auto it = ints.find(name);
  return it == ints.end() ? fallback : it->second;
}

bool can_evaluate(const std::string& op) {
  static const std::set<std::string> kOps = {"Identity",
                                             "Gather",
                                             "Unsqueeze",
                                             "Squeeze",
                                             "Concat",
                                             "Slice",
                                             "Cast",
                                             "Reshape",
                                             "Expand",
                                             "Range",
                                             "ConstantOfShape",
                                             "Equal",
                                             "Less",
                                             "Greater",
                                             "LessOrEqual",
                                             "GreaterOrEqual",
                                             "And",
                                             "Or",
                                             "Not",
                                             "Where",
                                             "Add",
                                             "Sub",
                                             "Mul",
                                             "Div",
                                             "Mod",
                                             "Neg",
                                             "Abs",
                                             "Min",
                                             "Max",
                                             "ReduceProd",
                                             "ReduceSum",
                                             "Floor",
                                             "Ceil",
                                             "Sqrt",
                                             "Flatten",
                                             "Size"};
  return kOps.count(op) > 0;
}

Tensor evaluate_shape(const std::vector<int64_t>& dims, const EvalAttributes& attrs) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t start = attrs.get("start", 0), end = attrs.get("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<int64_t> out;
  for (int64_t i = start; i < end; ++i) out.push_back(dims[i]);
  return Tensor::int64_vector(out);
}

std::optional<std::vector<Tensor>> evaluate(const std::string& op, int opset, const EvalAttributes& attrs,
                                            const std::vector<const Tensor*>& in, const EvalLimits& lim) {
  auto input = [&](size_t i) -> const Tensor* { return i < in.size() ? in[i] : nullptr; };
  auto one = [](std::optional<Tensor> t) -> std::optional<std::vector<Tensor>> {
    if (!t) return std::nullopt;
    return std::vector<Tensor>{std::move(*t)};
  };
  if (!input(0)) return std::nullopt;
  const Tensor& a = *input(0);

  if (op == "Identity") return one(a);
  if (op == "Size") return one(Tensor::int64_scalar(a.size()));
  if (op == "Gather") {
    if (!input(1)) return std::nullopt;
    return one(gather(a, *input(1), attrs.get("axis", 0), lim));
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    auto axes = axes_from(attrs, in, 1);
    const int64_t rank = static_cast<int64_t>(a.dims.size());
    Tensor out = a;
    if (op == "Unsqueeze") {
      if (!axes) throw EvalError("Unsqueeze without axes");
      const int64_t out_rank = rank + static_cast<int64_t>(axes->size());
      std::set<int64_t> at;
      for (int64_t ax : *axes)
        if (!at.insert(normalize_axis(ax, out_rank)).second) throw EvalError("Unsqueeze repeats an axis");
      out.dims.clear();
      for (int64_t k = 0, src = 0; k < out_rank; ++k) out.dims.push_back(at.count(k) ? 1 : a.dims[src++]);
    } else {
      std::set<int64_t> drop;
      if (axes)
        for (int64_t ax : *axes) {
          int64_t n = normalize_axis(ax, rank);
          if (a.dims[n] != 1) throw EvalError("Squeeze of an axis whose size is not 1");
          drop.insert(n);
        }
      out.dims.clear();
      for (int64_t k = 0; k < rank; ++k)
        if (!(axes ? drop.count(k) > 0 : a.dims[k] == 1)) out.dims.push_back(a.dims[k]);
    }
    return one(out);
  }
  if (op == "Flatten") {
    const int64_t rank = static_cast<int64_t>(a.dims.size());
    int64_t axis = attrs.get("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) throw EvalError("Flatten axis out of range");
    Tensor out = a;
    out.dims = {product(Dims(a.dims.begin(), a.dims.begin() + axis)),
                product(Dims(a.dims.begin() + axis, a.dims.end()))};
    return one(out);
  }
  if (op == "Concat") {
    const int64_t rank = static_cast<int64_t>(a.dims.size());
    int64_t axis = normalize_axis(attrs.get("axis", 0), rank);
    Dims out_dims = a.dims;
    out_dims[axis] = 0;
    for (const Tensor* t : in) {
      if (!t) return std::nullopt;
      if (t->dims.size() != a.dims.size()) throw EvalError("Concat of tensors of different ranks");
      for (int64_t k = 0; k < rank; ++k)
        if (k != axis && t->dims[k] != a.dims[k]) throw EvalError("Concat of tensors of different shapes");
      out_dims[axis] += t->dims[axis];
    }
    if (product(out_dims) > lim.max_elements) return std::nullopt;
    Tensor out = make(a.dtype, out_dims);
    int64_t outer = product(Dims(a.dims.begin(), a.dims.begin() + axis));
    int64_t k = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (const Tensor* t : in) {
        int64_t chunk = product(Dims(t->dims.begin() + axis, t->dims.end()));
        for (int64_t i = 0; i < chunk; ++i, ++k)
          set(out, k, t->at_f(o * chunk + i), t->is_float() ? 0 : t->ints[o * chunk + i]);
      }
    return one(out);
  }
  if (op == "Slice") {
    if (opset < 10) {
      auto list = [&](const char* n) {
        auto it = attrs.int_lists.find(n);
        return it == attrs.int_lists.end() ? std::vector<int64_t>{} : it->second;
      };
      return one(slice(a, list("starts"), list("ends"), list("axes"), {}, lim));
    }
    if (!input(1) || !input(2)) return std::nullopt;
    return one(slice(a, int_list(input(1)), int_list(input(2)), int_list(input(3)), int_list(input(4)), lim));
  }
  if (op == "Cast") return one(cast(a, static_cast<DType>(attrs.get("to", 0))));
  if (op == "Reshape") {
    if (!input(1)) return std::nullopt;
    auto shape = int_list(input(1));
    bool allowzero = attrs.get("allowzero", 0) != 0;
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
  if (op == "Expand") {
    if (!input(1)) return std::nullopt;
    Dims out_dims = broadcast(a.dims, int_list(input(1)));
    if (product(out_dims) > lim.max_elements) return std::nullopt;
    Tensor out = make(a.dtype, out_dims);
    for (int64_t k = 0; k < out.size(); ++k) {
      int64_t src = broadcast_source(k, out_dims, a.dims);
      set(out, k, a.at_f(src), a.is_float() ? 0 : a.ints[src]);
    }
    return one(out);
  }
  if (op == "Range") {
    if (!input(1) || !input(2)) return std::nullopt;
    const Tensor &limit = *input(1), &delta = *input(2);
    if (a.is_float()) {
      double d = delta.at_f(0);
      if (d == 0) throw EvalError("Range delta is 0");
      double n = std::max(0.0, std::ceil((limit.at_f(0) - a.at_f(0)) / d));
      if (n > static_cast<double>(lim.max_elements)) return std::nullopt;
      Tensor out = make(a.dtype, {static_cast<int64_t>(n)});
      for (int64_t k = 0; k < out.size(); ++k) out.floats[k] = a.at_f(0) + static_cast<double>(k) * d;
      return one(out);
    }
    int64_t s = a.ints[0], l = limit.ints[0], d = delta.ints[0];
    if (d == 0) throw EvalError("Range delta is 0");
    int64_t span = sub(l, s);
    int64_t n = (d > 0) ? (span > 0 ? (span + d - 1) / d : 0) : (span < 0 ? (-span + (-d) - 1) / (-d) : 0);
    if (n > lim.max_elements) return std::nullopt;
    Tensor out = make(a.dtype, {n});
    for (int64_t k = 0; k < n; ++k) out.ints[k] = add(s, mul(k, d));
    check_range(out);
    return one(out);
  }
  if (op == "ConstantOfShape") {
    Dims out_dims = int_list(&a);
    for (int64_t d : out_dims)
      if (d < 0) throw EvalError("ConstantOfShape with a negative dimension");
    if (product(out_dims) > lim.max_elements) return std::nullopt;
    auto it = attrs.tensors.find("value");
    Tensor fill = it != attrs.tensors.end() ? it->second : Tensor::floats_of(kFloat, {0.0}, {1});
    Tensor out = make(fill.dtype, out_dims);
    for (int64_t k = 0; k < out.size(); ++k) set(out, k, fill.at_f(0), fill.is_float() ? 0 : fill.ints[0]);
    return one(out);
  }
  if (op == "Not")
    return one(unary(
        a, [](int64_t v) { return v == 0 ? 1 : 0; }, [](double v) { return v == 0; }));
  if (op == "Neg")
    return one(unary(
        a, [](int64_t v) { return sub(0, v); }, [](double v) { return -v; }));
  if (op == "Abs")
    return one(unary(
        a, [](int64_t v) { return v < 0 ? sub(0, v) : v; }, [](double v) { return std::fabs(v); }));
  if (op == "Floor")
    return one(unary(
        a, [](int64_t v) { return v; }, [](double v) { return std::floor(v); }));
  if (op == "Ceil")
    return one(unary(
        a, [](int64_t v) { return v; }, [](double v) { return std::ceil(v); }));
  if (op == "Sqrt") {
    if (!a.is_float()) return std::nullopt;
    return one(unary(
        a, [](int64_t v) { return v; }, [](double v) { return std::sqrt(v); }));
  }
  if (op == "Where") {
    if (!input(1) || !input(2)) return std::nullopt;
    const Tensor &x = *input(1), &y = *input(2);
    Dims out_dims = broadcast(broadcast(a.dims, x.dims), y.dims);
    if (product(out_dims) > lim.max_elements) return std::nullopt;
    Tensor out = make(x.dtype, out_dims);
    for (int64_t k = 0; k < out.size(); ++k) {
      bool c = a.at_i(broadcast_source(k, out_dims, a.dims)) != 0;
      const Tensor& pick = c ? x : y;
      int64_t src = broadcast_source(k, out_dims, pick.dims);
      set(out, k, pick.at_f(src), pick.is_float() ? 0 : pick.ints[src]);
    }
    return one(out);
  }
  if (op == "ReduceProd" || op == "ReduceSum") {
    // Axes moved from an attribute to an input: ReduceSum at opset 13, the others at 18.
    int axes_input_since = op == "ReduceSum" ? 13 : 18;
    auto axes = opset >= axes_input_since ? (input(1) ? std::optional(int_list(input(1))) : std::nullopt)
                                          : axes_from(attrs, {}, 1);
    return one(
        reduce(a, axes, attrs.get("keepdims", 1) != 0, attrs.get("noop_with_empty_axes", 0) != 0, op == "ReduceProd"));
  }
  if (op == "Min" || op == "Max") {
    std::optional<Tensor> acc;
    bool is_max = op == "Max";
    for (const Tensor* t : in) {
      if (!t) return std::nullopt;
      if (!acc) {
        acc = *t;
        continue;
      }
      acc = binary(
          *acc, *t, acc->dtype, [is_max](int64_t x, int64_t y) { return is_max ? std::max(x, y) : std::min(x, y); },
          [is_max](double x, double y) { return is_max ? std::max(x, y) : std::min(x, y); });
      if (acc->size() > lim.max_elements) return std::nullopt;
    }
    return one(acc);
  }

  // Binary elementwise ops.
  if (!input(1)) return std::nullopt;
  const Tensor& b = *input(1);
  if (product(broadcast(a.dims, b.dims)) > lim.max_elements) return std::nullopt;
  if (op == "Add") return one(binary(a, b, a.dtype, add, std::plus<double>()));
  if (op == "Sub") return one(binary(a, b, a.dtype, sub, std::minus<double>()));
  if (op == "Mul") return one(binary(a, b, a.dtype, mul, std::multiplies<double>()));
  if (op == "Div") return one(binary(a, b, a.dtype, int_div, std::divides<double>()));
  if (op == "Mod") {
    bool fmod = attrs.get("fmod", 0) != 0;
    return one(binary(
        a, b, a.dtype, [fmod](int64_t x, int64_t y) { return int_mod(x, y, fmod); },
        [](double x, double y) { return std::fmod(x, y); }));
  }
  auto compare = [&](auto cmp) {
    return one(binary(
        a, b, kBool, [cmp](int64_t x, int64_t y) -> int64_t { return cmp(x, y); },
        [cmp](double x, double y) -> double { return cmp(x, y); }));
  };
  if (op == "Equal") return compare([](auto x, auto y) { return x == y; });
  if (op == "Less") return compare([](auto x, auto y) { return x < y; });
  if (op == "Greater") return compare([](auto x, auto y) { return x > y; });
  if (op == "LessOrEqual") return compare([](auto x, auto y) { return x <= y; });
  if (op == "GreaterOrEqual") return compare([](auto x, auto y) { return x >= y; });
  if (op == "And") return compare([](auto x, auto y) { return x != 0 && y != 0; });
  if (op == "Or") return compare([](auto x, auto y) { return x != 0 || y != 0; });
  return std::nullopt;
}

}  // namespace memplan::onnx_io
