// Elementwise ops: unary math, binary arithmetic and comparisons with numpy broadcasting, the variadic
// Max/Min/Sum/Mean, Where, Clip, casts.
#include <cmath>
#include <limits>

#include "eval_support.h"

namespace memplan::onnx_io::eval {
namespace {

using IntFn = std::function<int64_t(int64_t, int64_t)>;
using FloatFn = std::function<double(double, double)>;

// a (op) b with broadcasting; floats when either side is floating (Pow takes mixed types).
Tensor binary(const Tensor& a, const Tensor& b, DType out_type, const IntFn& fi, const FloatFn& ff) {
  Tensor out = make(out_type, broadcast(a.dims, b.dims));
  const bool floats = a.is_float() || b.is_float();
  for (int64_t k = 0; k < out.size(); ++k) {
    int64_t ia = broadcast_source(k, out.dims, a.dims), ib = broadcast_source(k, out.dims, b.dims);
    if (floats)
      set_float(out, k, ff(a.at_f(ia), b.at_f(ib)));
    else
      set_int(out, k, fi(a.ints[ia], b.ints[ib]));
  }
  return out;
}

Result unary(const Call& c, DType out_type, const std::function<int64_t(int64_t)>& fi,
             const std::function<double(double)>& ff) {
  const Tensor& a = *c.input(0);
  Tensor out = make(out_type, a.dims);
  for (int64_t k = 0; k < a.size(); ++k) {
    if (a.is_float())
      set_float(out, k, ff(a.floats[k]));
    else
      set_int(out, k, fi(a.ints[k]));
  }
  return one(out);
}

// Unary ops defined on floats alone (integers are converted when the schema allows them).
Result float_unary(const Call& c, const std::function<double(double)>& ff) {
  if (!c.input(0)->is_float()) return std::nullopt;
  return unary(
      c, c.input(0)->dtype, [](int64_t v) { return v; }, ff);
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

int64_t int_pow(int64_t base, int64_t exp) {
  if (exp < 0) return static_cast<int64_t>(std::pow(static_cast<double>(base), static_cast<double>(exp)));
  int64_t r = 1;
  for (int64_t i = 0; i < exp; ++i) {
    r = mul(r, base);
    if (r == 0 || r == 1) break;  // stays there; base 1 and 0 need no more steps
    if (r == -1 && base == -1) return (exp % 2 == 0) ? 1 : -1;
  }
  return r;
}

// Two inputs, broadcast; the result has the first input's type.
Result arith(const Call& c, const IntFn& fi, const FloatFn& ff) {
  if (!c.input(1)) return std::nullopt;
  const Tensor &a = *c.input(0), &b = *c.input(1);
  if (!fits(broadcast(a.dims, b.dims), c.lim)) return std::nullopt;
  return one(binary(a, b, a.dtype, fi, ff));
}

// Two inputs, broadcast; a bool result.
template <typename Cmp>
Result compare(const Call& c, Cmp cmp) {
  if (!c.input(1)) return std::nullopt;
  const Tensor &a = *c.input(0), &b = *c.input(1);
  if (!fits(broadcast(a.dims, b.dims), c.lim)) return std::nullopt;
  return one(binary(
      a, b, kBool, [cmp](int64_t x, int64_t y) -> int64_t { return cmp(x, y); },
      [cmp](double x, double y) -> double { return cmp(x, y); }));
}

// Max, Min, Sum, Mean over any number of broadcast inputs.
Result variadic(const Call& c, const IntFn& fi, const FloatFn& ff, bool mean) {
  std::optional<Tensor> acc;
  for (const Tensor* t : c.in) {
    if (!t) return std::nullopt;
    if (!acc) {
      acc = *t;
      continue;
    }
    if (!fits(broadcast(acc->dims, t->dims), c.lim)) return std::nullopt;
    acc = binary(*acc, *t, acc->dtype, fi, ff);
  }
  if (mean) {
    if (!acc->is_float()) return std::nullopt;
    for (int64_t k = 0; k < acc->size(); ++k) set_float(*acc, k, acc->floats[k] / static_cast<double>(c.in.size()));
  }
  return one(acc);
}

std::optional<Tensor> cast(const Tensor& in, DType to) {
  if (!dtype_bits(to) || to == kString) return std::nullopt;
  Tensor out = make(to, in.dims);
  for (int64_t k = 0; k < in.size(); ++k) {
    if (in.is_float()) {
      double f = in.floats[k];
      if (!out.is_float() && out.dtype != kBool && !std::isfinite(f))
        throw EvalError("Cast of " + std::to_string(f) + " to an integer type");
      set_float(out, k, f);
    } else if (out.is_float() && in.dtype == kUint64) {
      set_float(out, k, static_cast<double>(static_cast<uint64_t>(in.ints[k])));
    } else {
      set_int(out, k, in.ints[k]);
    }
  }
  return out;
}

Result clip(const Call& c) {
  const Tensor& a = *c.input(0);
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (c.opset < 11) {
    lo = c.attrs.get_float("min", lo);
    hi = c.attrs.get_float("max", hi);
  } else {
    if (c.input(1)) lo = scalar_f(*c.input(1));
    if (c.input(2)) hi = scalar_f(*c.input(2));
  }
  Tensor out = make(a.dtype, a.dims);
  for (int64_t k = 0; k < a.size(); ++k) {
    if (a.is_float()) {
      double v = a.floats[k];
      set_float(out, k, std::isnan(v) ? v : std::min(std::max(v, lo), hi));
    } else {
      int64_t v = a.ints[k];
      if (static_cast<double>(v) < lo) v = static_cast<int64_t>(lo);
      if (static_cast<double>(v) > hi) v = static_cast<int64_t>(hi);
      set_int(out, k, v);
    }
  }
  return one(out);
}

Result where(const Call& c) {
  if (!c.input(1) || !c.input(2)) return std::nullopt;
  const Tensor &cond = *c.input(0), &x = *c.input(1), &y = *c.input(2);
  Dims out_dims = broadcast(broadcast(cond.dims, x.dims), y.dims);
  if (!fits(out_dims, c.lim)) return std::nullopt;
  Tensor out = make(x.dtype, out_dims);
  for (int64_t k = 0; k < out.size(); ++k) {
    const Tensor& pick = cond.at_i(broadcast_source(k, out_dims, cond.dims)) != 0 ? x : y;
    copy_element(out, k, pick, broadcast_source(k, out_dims, pick.dims));
  }
  return one(out);
}

Result bit_shift(const Call& c) {
  const std::string direction = c.attrs.get_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") throw EvalError("BitShift needs direction LEFT or RIGHT");
  const bool left = direction == "LEFT";
  return arith(
      c,
      [left](int64_t x, int64_t y) -> int64_t {
        uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
        if (uy >= 64) return 0;
        return static_cast<int64_t>(left ? ux << uy : ux >> uy);
      },
      [](double, double) -> double { throw EvalError("BitShift of floating-point values"); });
}

}  // namespace

void add_elementwise_ops(Table& t) {
  t["Identity"] = [](const Call& c) { return one(*c.input(0)); };
  t["Size"] = [](const Call& c) { return one(Tensor::int64_scalar(c.input(0)->size())); };
  t["Cast"] = [](const Call& c) { return one(cast(*c.input(0), static_cast<DType>(c.attrs.get("to", 0)))); };
  t["CastLike"] = [](const Call& c) -> Result {
    if (!c.input(1)) return std::nullopt;
    return one(cast(*c.input(0), c.input(1)->dtype));
  };

  auto same = [](int64_t v) { return v; };
  t["Not"] = [](const Call& c) {
    return unary(
        c, kBool, [](int64_t v) -> int64_t { return v == 0; }, [](double v) -> double { return v == 0; });
  };
  t["Neg"] = [](const Call& c) {
    return unary(
        c, c.input(0)->dtype, [](int64_t v) { return sub(0, v); }, [](double v) { return -v; });
  };
  t["Abs"] = [](const Call& c) {
    return unary(
        c, c.input(0)->dtype, [](int64_t v) { return v < 0 ? sub(0, v) : v; }, [](double v) { return std::fabs(v); });
  };
  t["Sign"] = [](const Call& c) {
    return unary(
        c, c.input(0)->dtype, [](int64_t v) -> int64_t { return (v > 0) - (v < 0); },
        [](double v) -> double { return std::isnan(v) ? v : (v > 0) - (v < 0); });
  };
  t["Floor"] = [same](const Call& c) {
    return unary(c, c.input(0)->dtype, same, [](double v) { return std::floor(v); });
  };
  t["Ceil"] = [same](const Call& c) {
    return unary(c, c.input(0)->dtype, same, [](double v) { return std::ceil(v); });
  };
  // Round halves to even, as ONNX specifies (nearbyint in the default rounding mode).
  t["Round"] = [same](const Call& c) {
    return unary(c, c.input(0)->dtype, same, [](double v) { return std::nearbyint(v); });
  };
  t["Sqrt"] = [](const Call& c) { return float_unary(c, [](double v) { return std::sqrt(v); }); };
  t["Reciprocal"] = [](const Call& c) { return float_unary(c, [](double v) { return 1.0 / v; }); };
  t["Exp"] = [](const Call& c) { return float_unary(c, [](double v) { return std::exp(v); }); };
  t["Log"] = [](const Call& c) { return float_unary(c, [](double v) { return std::log(v); }); };
  t["IsNaN"] = [same](const Call& c) -> Result {
    if (!c.input(0)->is_float()) return std::nullopt;
    return unary(c, kBool, same, [](double v) -> double { return std::isnan(v); });
  };
  t["IsInf"] = [same](const Call& c) -> Result {
    if (!c.input(0)->is_float()) return std::nullopt;
    const bool pos = c.attrs.get("detect_positive", 1) != 0, neg = c.attrs.get("detect_negative", 1) != 0;
    return unary(c, kBool, same,
                 [pos, neg](double v) -> double { return std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg)); });
  };

  t["Add"] = [](const Call& c) { return arith(c, add, std::plus<double>()); };
  t["Sub"] = [](const Call& c) { return arith(c, sub, std::minus<double>()); };
  t["Mul"] = [](const Call& c) { return arith(c, mul, std::multiplies<double>()); };
  t["Div"] = [](const Call& c) { return arith(c, int_div, std::divides<double>()); };
  t["Pow"] = [](const Call& c) { return arith(c, int_pow, [](double x, double y) { return std::pow(x, y); }); };
  t["Mod"] = [](const Call& c) {
    const bool fmod = c.attrs.get("fmod", 0) != 0;
    return arith(
        c, [fmod](int64_t x, int64_t y) { return int_mod(x, y, fmod); },
        [](double x, double y) { return std::fmod(x, y); });
  };
  t["BitShift"] = bit_shift;

  t["Equal"] = [](const Call& c) { return compare(c, [](auto x, auto y) { return x == y; }); };
  t["Less"] = [](const Call& c) { return compare(c, [](auto x, auto y) { return x < y; }); };
  t["Greater"] = [](const Call& c) { return compare(c, [](auto x, auto y) { return x > y; }); };
  t["LessOrEqual"] = [](const Call& c) { return compare(c, [](auto x, auto y) { return x <= y; }); };
  t["GreaterOrEqual"] = [](const Call& c) { return compare(c, [](auto x, auto y) { return x >= y; }); };
  t["And"] = [](const Call& c) { return compare(c, [](auto x, auto y) { return x != 0 && y != 0; }); };
  t["Or"] = [](const Call& c) { return compare(c, [](auto x, auto y) { return x != 0 || y != 0; }); };
  t["Xor"] = [](const Call& c) { return compare(c, [](auto x, auto y) { return (x != 0) != (y != 0); }); };

  auto max_i = [](int64_t x, int64_t y) { return std::max(x, y); };
  auto min_i = [](int64_t x, int64_t y) { return std::min(x, y); };
  // NaN propagates through Max and Min, as in ONNX Runtime and numpy.
  auto max_f = [](double x, double y) { return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y); };
  auto min_f = [](double x, double y) { return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y); };
  t["Max"] = [=](const Call& c) { return variadic(c, max_i, max_f, false); };
  t["Min"] = [=](const Call& c) { return variadic(c, min_i, min_f, false); };
  t["Sum"] = [](const Call& c) { return variadic(c, add, std::plus<double>(), false); };
  t["Mean"] = [](const Call& c) { return variadic(c, add, std::plus<double>(), true); };
  t["Where"] = where;
  t["Clip"] = clip;
}

}  // namespace memplan::onnx_io::eval
