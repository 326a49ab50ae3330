// Internal to onnx_io/: what the constant evaluators share — checked integer arithmetic, element
// storage with ONNX's per-type rounding and wrapping, broadcasting, index arithmetic, and the table
// each group of ops registers its evaluators in (eval_*.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "memplan/onnx_io/const_eval.h"

namespace memplan::onnx_io::eval {

using Dims = std::vector<int64_t>;
inline constexpr DType kFloat = kDTypeFloat, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6,
                       kInt64 = kDTypeInt64, kString = kDTypeString, kBool = kDTypeBool, kFloat16 = 10, kDouble = 11,
                       kUint32 = 12, kUint64 = 13, kBFloat16 = 16;

int64_t product(const Dims& dims);  // throws EvalError on overflow or a negative dim
int64_t add(int64_t a, int64_t b);
int64_t sub(int64_t a, int64_t b);
int64_t mul(int64_t a, int64_t b);
int64_t normalize_axis(int64_t axis, int64_t rank);  // throws EvalError when out of range

Dims broadcast(const Dims& a, const Dims& b);  // numpy-style; throws EvalError when incompatible
// The linear index into a tensor of `in` dims that broadcasts to position `linear` of `out` dims.
int64_t broadcast_source(int64_t linear, const Dims& out, const Dims& in);
Dims strides_of(const Dims& dims);                 // row-major
Dims coords_of(int64_t linear, const Dims& dims);  // the inverse of a row-major linear index
int64_t linear_of(const Dims& coords, const Dims& strides);

// A zero-filled tensor; std::nullopt-free: callers check the element limit first (fits()).
Tensor make(DType dtype, Dims dims);
bool fits(const Dims& dims, const EvalLimits& lim);

// Element storage. Floats are rounded to their type (float32, float16, bfloat16); integers of fewer
// than 32 bits and unsigned ones wrap as numpy does; int32 and int64 results that do not fit are a fault
// in shape arithmetic (EvalError).
void set_float(Tensor& t, int64_t k, double v);
void set_int(Tensor& t, int64_t k, int64_t v);
// Copies element `src` of `from` into element `k` of `to` (same dtype family).
void copy_element(Tensor& to, int64_t k, const Tensor& from, int64_t src);
double round_to(DType dtype, double v);

std::vector<int64_t> int_list(const Tensor* t);
double scalar_f(const Tensor& t);  // the single element of a scalar or 1-element tensor

using Result = std::optional<std::vector<Tensor>>;
inline Result one(std::optional<Tensor> t) {
  if (!t) return std::nullopt;
  return std::vector<Tensor>{std::move(*t)};
}

// One node's evaluation: its attributes, inputs (nullptr for an absent optional one), and limits.
struct Call {
  const std::string& op;
  int opset;
  const EvalAttributes& attrs;
  const std::vector<const Tensor*>& in;
  const EvalLimits& lim;

  const Tensor* input(size_t i) const { return i < in.size() ? in[i] : nullptr; }
  // Axes from input `index` at opset >= since_opset, from the `axes` attribute before.
  std::optional<std::vector<int64_t>> axes(size_t index, int since_opset) const;
};

using Evaluator = std::function<Result(const Call&)>;
using Table = std::map<std::string, Evaluator>;

// Each group adds its ops to the table.
void add_elementwise_ops(Table& table);
void add_movement_ops(Table& table);
void add_reduction_ops(Table& table);

}  // namespace memplan::onnx_io::eval
