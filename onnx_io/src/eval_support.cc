#include "eval_support.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memplan::onnx_io::eval {

int64_t product(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw EvalError("negative dimension " + std::to_string(d));
    if (__builtin_mul_overflow(n, d, &n)) throw EvalError("element count overflows 64 bits");
  }
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

int64_t broadcast_source(int64_t linear, const Dims& out, const Dims& in) {
  int64_t src = 0, stride = 1;
  const size_t offset = out.size() - in.size();
  for (size_t k = out.size(); k-- > 0;) {
    int64_t coord = linear % out[k];
    linear /= out[k];
    if (k >= offset) {
      int64_t d = in[k - offset];
      if (d != 1) src += coord * stride;
      stride *= d;
    }
  }
  return src;
}

Dims strides_of(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (size_t k = dims.size(); k-- > 1;) s[k - 1] = s[k] * dims[k];
  return s;
}

Dims coords_of(int64_t linear, const Dims& dims) {
  Dims c(dims.size(), 0);
  for (size_t k = dims.size(); k-- > 0;) {
    c[k] = linear % dims[k];
    linear /= dims[k];
  }
  return c;
}

int64_t linear_of(const Dims& coords, const Dims& strides) {
  int64_t l = 0;
  for (size_t k = 0; k < coords.size(); ++k) l += coords[k] * strides[k];
  return l;
}

Tensor make(DType dtype, Dims dims) {
  // (callers check their limits first; this bound holds whatever an evaluator forgets)
  if (product(dims) > (int64_t{1} << 24)) throw EvalError("a result of more than 2^24 elements");
  Tensor t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  if (dtype_is_float(dtype))
    t.floats.resize(t.size());
  else
    t.ints.resize(t.size());
  return t;
}

bool fits(const Dims& dims, const EvalLimits& lim) {
  return product(dims) <= lim.max_elements;
}

namespace {
// Rounds to a binary format with `bits` significant bits, the smallest step 2^min_exp, and the largest
// finite value max (round half to even, overflow to infinity), as a conversion to that format does.
double round_binary(double v, int bits, int min_exp, double max) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e;
  std::frexp(v, &e);
  int unit = std::max(e - bits, min_exp);
  double q = std::ldexp(std::nearbyint(std::ldexp(v, -unit)), unit);
  if (std::fabs(q) > max) return std::copysign(std::numeric_limits<double>::infinity(), v);
  return q;
}
}  // namespace

double round_to(DType dtype, double v) {
  switch (dtype) {
    case kFloat:
      return static_cast<double>(static_cast<float>(v));
    case kFloat16:
      return round_binary(v, 11, -24, 65504.0);
    case kBFloat16:
      return round_binary(v, 8, -133, 3.3895313892515355e38);
    default:
      return v;
  }
}

namespace {
void check_index(const Tensor& t, int64_t k) {
  if (!t.holds(k))
    throw EvalError("element " + std::to_string(k) + " written past a tensor of " + std::to_string(t.size()));
}
}  // namespace

void set_float(Tensor& t, int64_t k, double v) {
  check_index(t, k);
  if (t.is_float()) {
    t.floats[k] = round_to(t.dtype, v);
    return;
  }
  if (t.dtype == kBool) {
    t.ints[k] = v != 0;
    return;
  }
  if (std::isnan(v) || v >= 9.2e18 || v <= -9.2e18)
    throw EvalError("the value " + std::to_string(v) + " does not fit an integer type");
  set_int(t, k, static_cast<int64_t>(v));
}

void set_int(Tensor& t, int64_t k, int64_t v) {
  check_index(t, k);
  if (t.is_float()) {
    t.floats[k] = round_to(t.dtype, static_cast<double>(v));
    return;
  }
  switch (t.dtype) {
    case kBool:
      v = v != 0;
      break;
    case kInt8:
      v = static_cast<int8_t>(v);
      break;
    case kUint8:
      v = static_cast<uint8_t>(v);
      break;
    case kInt16:
      v = static_cast<int16_t>(v);
      break;
    case kUint16:
      v = static_cast<uint16_t>(v);
      break;
    case kUint32:
      v = static_cast<uint32_t>(v);
      break;
    case kInt32:
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
        throw EvalError("int32 overflow");
      break;
    default:
      break;
  }
  t.ints[k] = v;
}

void copy_element(Tensor& to, int64_t k, const Tensor& from, int64_t src) {
  // (checked reads: a malformed model can give an op inputs of different types, or too few elements)
  if (from.is_float())
    set_float(to, k, from.at_f(src));
  else
    set_int(to, k, from.at_i(src));
}

std::vector<int64_t> int_list(const Tensor* t) {
  std::vector<int64_t> out;
  if (t)
    for (int64_t k = 0; k < t->size(); ++k) out.push_back(t->at_i(k));
  return out;
}

double scalar_f(const Tensor& t) {
  if (t.size() != 1) throw EvalError("expected a single value, got " + std::to_string(t.size()));
  return t.at_f(0);
}

std::optional<std::vector<int64_t>> Call::axes(size_t index, int since_opset) const {
  if (opset >= since_opset) {
    if (input(index)) return int_list(input(index));
    return std::nullopt;
  }
  auto it = attrs.int_lists.find("axes");
  if (it != attrs.int_lists.end()) return it->second;
  return std::nullopt;
}

}  // namespace memplan::onnx_io::eval
