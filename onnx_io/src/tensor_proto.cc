#include "tensor_proto.h"

#include <cmath>
#include <cstring>

#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/onnx_io/node_test.h"
#include "proto_model.h"

namespace memplan::onnx_io {
namespace {

using P = onnx::TensorProto;

double half_to_double(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? NAN : sign * INFINITY;
  return sign * std::ldexp(mant + 1024, exp - 25);
}

// `v` already rounded to float16 (const_eval keeps it so), as its bit pattern.
uint16_t double_to_half(double v) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  v = std::fabs(v);
  if (std::isnan(v)) return 0x7e00;
  if (std::isinf(v) || v > 65504.0) return sign | 0x7c00;
  if (v < std::ldexp(1.0, -14)) return sign | static_cast<uint16_t>(std::ldexp(v, 24));  // subnormal
  int e;
  const double m = std::frexp(v, &e);  // v = m * 2^e, m in [0.5, 1)
  return sign | static_cast<uint16_t>((e + 14) << 10) | static_cast<uint16_t>(std::ldexp(m, 11) - 1024);
}

double bfloat16_to_double(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t double_to_bfloat16(double v) {
  const float f = static_cast<float>(v);  // exact: v is already a bfloat16 value
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}

// Appends a tensor's n elements, stored as T: from raw_data when present, else from the typed
// repeated field that ONNX uses for T. False when the stored count is not n.
template <typename T, typename Field, typename Out, typename Convert>
bool read_elements(const P& t, int64_t n, const Field& field, std::vector<Out>& out, Convert convert) {
  out.reserve(static_cast<size_t>(n));
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != sizeof(T) * static_cast<size_t>(n)) return false;
    for (int64_t k = 0; k < n; ++k) {
      T v;
      std::memcpy(&v, raw.data() + k * sizeof(T), sizeof(T));
      out.push_back(convert(v));
    }
    return true;
  }
  if (field.size() != n) return false;
  for (auto v : field) out.push_back(convert(static_cast<T>(v)));
  return true;
}

template <typename T, typename Field, typename Out>
bool read_elements(const P& t, int64_t n, const Field& field, std::vector<Out>& out) {
  return read_elements<T>(t, n, field, out, [](T v) { return static_cast<Out>(v); });
}

}  // namespace

std::optional<Tensor> read_tensor(const P& t, int64_t max_elements) {
  if (t.data_location() == P::EXTERNAL) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  if (n > max_elements) return std::nullopt;
  Tensor out;
  out.dtype = t.data_type();
  out.dims.assign(t.dims().begin(), t.dims().end());
  bool ok = false;
  switch (t.data_type()) {
    case P::FLOAT:
      ok = read_elements<float>(t, n, t.float_data(), out.floats);
      break;
    case P::DOUBLE:
      ok = read_elements<double>(t, n, t.double_data(), out.floats);
      break;
    case P::FLOAT16:
      ok = read_elements<uint16_t>(t, n, t.int32_data(), out.floats, half_to_double);
      break;
    case P::BFLOAT16:
      ok = read_elements<uint16_t>(t, n, t.int32_data(), out.floats, bfloat16_to_double);
      break;
    case P::INT64:
      ok = read_elements<int64_t>(t, n, t.int64_data(), out.ints);
      break;
    // ONNX keeps UINT32 and UINT64 in uint64_data, and the narrower integers and BOOL in int32_data.
    case P::UINT64:
      ok = read_elements<uint64_t>(t, n, t.uint64_data(), out.ints);
      break;
    case P::UINT32:
      ok = read_elements<uint32_t>(t, n, t.uint64_data(), out.ints);
      break;
    case P::INT32:
      ok = read_elements<int32_t>(t, n, t.int32_data(), out.ints);
      break;
    case P::INT16:
      ok = read_elements<int16_t>(t, n, t.int32_data(), out.ints);
      break;
    case P::UINT16:
      ok = read_elements<uint16_t>(t, n, t.int32_data(), out.ints);
      break;
    case P::INT8:
      ok = read_elements<int8_t>(t, n, t.int32_data(), out.ints);
      break;
    case P::UINT8:
    case P::BOOL:
      ok = read_elements<uint8_t>(t, n, t.int32_data(), out.ints);
      break;
    default:
      return std::nullopt;
  }
  if (!ok) return std::nullopt;
  return out;
}

bool tensor_proto_holds(int32_t dtype) {
  Tensor empty;  // (no elements: nothing is copied, and to_tensor_proto's switch stays the one list of types)
  empty.dtype = dtype;
  return to_tensor_proto(std::string(), empty).has_value();
}

std::optional<P> to_tensor_proto(const std::string& name, const Tensor& t) {
  P p;
  p.set_name(name);
  p.set_data_type(t.dtype);
  for (int64_t d : t.dims) p.add_dims(d);
  switch (t.dtype) {
    case P::INT64:
      for (int64_t v : t.ints) p.add_int64_data(v);
      break;
    case P::INT32:
    case P::INT16:
    case P::INT8:
    case P::UINT16:
    case P::UINT8:
    case P::BOOL:
      for (int64_t v : t.ints) p.add_int32_data(static_cast<int32_t>(v));
      break;
    case P::UINT32:
    case P::UINT64:
      for (int64_t v : t.ints) p.add_uint64_data(static_cast<uint64_t>(v));
      break;
    case P::FLOAT:
      for (double v : t.floats) p.add_float_data(static_cast<float>(v));
      break;
    case P::DOUBLE:
      for (double v : t.floats) p.add_double_data(v);
      break;
    case P::FLOAT16:
      for (double v : t.floats) p.add_int32_data(double_to_half(v));
      break;
    case P::BFLOAT16:
      for (double v : t.floats) p.add_int32_data(double_to_bfloat16(v));
      break;
    default:
      return std::nullopt;
  }
  return p;
}

EvalAttributes eval_attributes(const onnx::NodeProto& node, int64_t max_elements) {
  EvalAttributes a;
  a.outputs = node.output_size();
  for (const auto& attr : node.attribute()) {
    switch (attr.type()) {
      case onnx::AttributeProto::INT:
        a.ints[attr.name()] = attr.i();
        break;
      case onnx::AttributeProto::INTS:
        a.int_lists[attr.name()].assign(attr.ints().begin(), attr.ints().end());
        break;
      case onnx::AttributeProto::FLOAT:
        a.floats[attr.name()] = attr.f();
        break;
      case onnx::AttributeProto::FLOATS:
        a.float_lists[attr.name()].assign(attr.floats().begin(), attr.floats().end());
        break;
      case onnx::AttributeProto::STRING:
        a.strings[attr.name()] = attr.s();
        break;
      case onnx::AttributeProto::TENSOR:
        if (auto t = read_tensor(attr.t(), max_elements)) a.tensors[attr.name()] = *t;
        break;
      default:
        break;
    }
  }
  return a;
}

std::optional<Tensor> constant_value(const onnx::NodeProto& node, int64_t max_elements) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == "value" && attr.has_t()) return read_tensor(attr.t(), max_elements);
    if (attr.name() == "value_int") return Tensor::int64_scalar(attr.i());
    if (attr.name() == "value_ints") return Tensor::int64_vector({attr.ints().begin(), attr.ints().end()});
    if (attr.name() == "value_float") return Tensor::floats_of(P::FLOAT, {attr.f()}, {});
    if (attr.name() == "value_floats")
      return Tensor::floats_of(P::FLOAT, {attr.floats().begin(), attr.floats().end()}, {attr.floats_size()});
  }
  return std::nullopt;
}

std::optional<SingleNode> read_single_node(const std::string& model_path) {
  const onnx::ModelProto model = parse_model(model_path, read_file(model_path));
  if (model.graph().node_size() != 1) return std::nullopt;
  const onnx::NodeProto& n = model.graph().node(0);
  SingleNode s;
  s.op_type = n.op_type();
  s.domain = domain_key(n.domain());
  for (const auto& op : model.opset_import())
    if (domain_key(op.domain()) == s.domain) s.opset = static_cast<int>(op.version());
  s.attrs = eval_attributes(n, int64_t{1} << 24);
  auto elem_type = [](const onnx::ValueInfoProto& v) -> DType {
    return v.type().has_tensor_type() ? v.type().tensor_type().elem_type() : 0;
  };
  for (const auto& v : model.graph().input()) s.input_types.push_back(elem_type(v));
  for (const auto& v : model.graph().output()) s.output_types.push_back(elem_type(v));
  s.inputs.assign(n.input().begin(), n.input().end());
  s.outputs.assign(n.output().begin(), n.output().end());
  return s;
}

std::optional<Tensor> read_tensor_file(const std::string& path, int64_t max_elements, DType declared) {
  P t;
  const std::string bytes = read_file(path);
  if (!t.ParseFromString(bytes)) fail_input(path, "is not a serialized TensorProto");
  if (t.data_type() == P::UINT16 && (declared == P::BFLOAT16 || declared == P::FLOAT16)) t.set_data_type(declared);
  return read_tensor(t, max_elements);
}

}  // namespace memplan::onnx_io
