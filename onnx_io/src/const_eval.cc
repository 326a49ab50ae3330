#include "memplan/onnx_io/const_eval.h"

#include <algorithm>
#include <stdexcept>

#include "eval_support.h"

namespace memplan::onnx_io {

bool Tensor::is_float() const {
  return dtype_is_float(dtype);
}
bool Tensor::holds(int64_t k) const {
  return k >= 0 && static_cast<size_t>(k) < (is_float() ? floats.size() : ints.size());
}
double Tensor::at_f(int64_t k) const {
  if (!holds(k))
    throw EvalError("element " + std::to_string(k) + " of a tensor of " + std::to_string(size()) + " elements");
  return is_float() ? floats[k] : static_cast<double>(ints[k]);
}
int64_t Tensor::at_i(int64_t k) const {
  if (!holds(k))
    throw EvalError("element " + std::to_string(k) + " of a tensor of " + std::to_string(size()) + " elements");
  if (!is_float()) return ints[k];
  const double f = floats[k];
  if (!(f > -9.2e18 && f < 9.2e18)) throw EvalError("the value " + std::to_string(f) + " is not a usable integer");
  return static_cast<int64_t>(f);
}
int64_t Tensor::size() const {
  return eval::product(dims);
}

Tensor Tensor::int64s(std::vector<int64_t> values, std::vector<int64_t> dims) {
  Tensor t;
  t.dtype = eval::kInt64;
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
double EvalAttributes::get_float(const std::string& name, double fallback) const {
  auto it = floats.find(name);
  return it == floats.end() ? fallback : it->second;
}
std::string EvalAttributes::get_string(const std::string& name, const std::string& fallback) const {
  auto it = strings.find(name);
  return it == strings.end() ? fallback : it->second;
}

namespace {
const eval::Table& table() {
  static const eval::Table t = [] {
    eval::Table t;
    eval::add_elementwise_ops(t);
    eval::add_movement_ops(t);
    eval::add_reduction_ops(t);
    return t;
  }();
  return t;
}
}  // namespace

bool can_evaluate(const std::string& op) {
  return table().count(op) > 0;
}

std::vector<std::string> evaluable_ops() {
  std::vector<std::string> ops;
  for (const auto& [name, fn] : table()) ops.push_back(name);
  return ops;
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

namespace {

// Every evaluator relies on this: a tensor holds exactly size() elements, in the storage its dtype uses.
void check_storage(const Tensor& t, const std::string& what) {
  const auto n = static_cast<size_t>(t.size());  // (throws EvalError for a negative dim or an overflowing count)
  const size_t held = t.is_float() ? t.floats.size() : t.ints.size();
  if (held != n || !(t.is_float() ? t.ints.empty() : t.floats.empty()))
    throw EvalError(what + " holds " + std::to_string(held) + " values but its dims say " + std::to_string(n));
}

}  // namespace

std::optional<std::vector<Tensor>> evaluate(const std::string& op, int opset, const EvalAttributes& attrs,
                                            const std::vector<const Tensor*>& in, const EvalLimits& lim) {
  auto it = table().find(op);
  if (it == table().end() || in.empty() || !in[0]) return std::nullopt;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i]) continue;
    if (in[i]->dtype == eval::kString || !dtype_bits(in[i]->dtype)) return std::nullopt;
    check_storage(*in[i], "input " + std::to_string(i));
    if (in[i]->size() > lim.max_elements) return std::nullopt;
  }
  std::optional<std::vector<Tensor>> out;
  try {
    out = it->second(eval::Call{op, opset, attrs, in, lim});
  } catch (const std::length_error& e) {
    throw EvalError(std::string("a result too large to evaluate (") + e.what() + ")");
  } catch (const std::out_of_range& e) {
    throw EvalError(std::string("an index out of range (") + e.what() + ")");
  }
  if (out)
    for (size_t i = 0; i < out->size(); ++i) check_storage((*out)[i], "output " + std::to_string(i));
  return out;
}

}  // namespace memplan::onnx_io
