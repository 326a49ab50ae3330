// Small, exact evaluators for the ops that compute shapes at run time (Shape -> Gather -> Concat ->
// Reshape and the like). With the input dims fixed these subgraphs are constant; evaluating them lets
// every size be known before the model runs. Plain data in, plain data out: no protobuf here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "memplan/dtype.h"

namespace memplan::onnx_io {

// A small constant tensor. Integer and bool types keep exact int64 values in `ints` (uint64 as its bit
// pattern); floating types keep doubles in `floats`, rounded to the element type. Exactly one of the two
// holds size() elements.
struct Tensor {
  DType dtype = kDTypeInt64;
  std::vector<int64_t> dims;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  bool is_float() const;
  int64_t size() const;           // product of dims (1 for a scalar)
  bool holds(int64_t k) const;    // whether element k is stored (in the storage the dtype uses)
  double at_f(int64_t k) const;   // EvalError when k is not an element
  int64_t at_i(int64_t k) const;  // a float truncated; EvalError when it is NaN or out of int64's range or k is not
                                  // an element

  static Tensor int64s(std::vector<int64_t> values, std::vector<int64_t> dims);
  static Tensor int64_vector(std::vector<int64_t> values);  // rank 1
  static Tensor int64_scalar(int64_t value);
  static Tensor floats_of(DType dtype, std::vector<double> values, std::vector<int64_t> dims);
  bool operator==(const Tensor&) const = default;
};

// The attributes an evaluator may read.
struct EvalAttributes {
  std::map<std::string, int64_t> ints;
  std::map<std::string, std::vector<int64_t>> int_lists;
  std::map<std::string, double> floats;
  std::map<std::string, std::vector<double>> float_lists;
  std::map<std::string, std::string> strings;
  std::map<std::string, Tensor> tensors;  // ConstantOfShape's value
  int outputs = 1;                        // how many outputs the node declares (Split without sizes)
  int64_t get(const std::string& name, int64_t fallback) const;
  double get_float(const std::string& name, double fallback) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;
};

// A fault in the model's shape arithmetic (division by zero, overflow, an index out of range).
// The shape pass reports it as an error on the node.
struct EvalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct EvalLimits {
  int64_t max_elements = 1 << 16;  // shape tensors are tiny; larger results are never materialised
};

// True for ops evaluate() knows.
bool can_evaluate(const std::string& op_type);
// Every op evaluate() knows, sorted (Shape is evaluated from dims alone: evaluate_shape()).
std::vector<std::string> evaluable_ops();

// Evaluates one ai.onnx node on constant inputs (nullptr for a missing optional input). Returns the
// outputs, or std::nullopt when the op is not supported, an input it needs is absent, or a result
// would exceed the limits. Throws EvalError for faults in the arithmetic.
std::optional<std::vector<Tensor>> evaluate(const std::string& op_type, int opset, const EvalAttributes& attrs,
                                            const std::vector<const Tensor*>& inputs, const EvalLimits& limits = {});

// Einsum's output dims for inputs of the given dims (ONNX 1.12's inference gives only the rank).
// Throws EvalError when the equation does not fit the inputs.
std::vector<int64_t> einsum_output_dims(const std::string& equation, const std::vector<std::vector<int64_t>>& inputs);

// Shape(start, end) of a tensor with known dims, as ONNX defines it (negative bounds count from the end).
Tensor evaluate_shape(const std::vector<int64_t>& dims, const EvalAttributes& attrs);

}  // namespace memplan::onnx_io
