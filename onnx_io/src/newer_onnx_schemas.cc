// Shape rules for ONNX operators newer than the ONNX 1.12 memplan builds with (opsets 18 to 24), written from ONNX's
// operator specification and checked against ONNX Runtime 1.30 running each op (tests/interop/
// make_newer_onnx_models.py). Without them libonnx 1.12 knows none of the ops ONNX added since (Gelu,
// GroupNormalization, RMSNormalization, Attention, ...) and applies its older version's rule to ops whose inputs
// changed: ReduceMean at opset 18 takes its axes as an input (refused as one input too many), AveragePool at 19 has
// dilations (a wrong output size), Split at 18 has num_outputs. Each rule is registered at the opset its semantics
// begin, so models of older opsets keep libonnx's own rules.
#include <onnx/defs/function.h>
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "contrib_support.h"
#include "tensor_proto.h"

namespace memplan::onnx_io::contrib {

namespace {

// The newest ONNX opset these rules cover.
constexpr int kNewestOnnxOpset = 24;

// The int32/int64 list an input holds when inference knows its data (an initializer or a folded constant).
std::optional<std::vector<int64_t>> ints_input(InferenceContext& ctx, size_t input) {
  if (input >= ctx.getNumInputs()) return std::nullopt;
  const onnx::TensorProto* t = ctx.getInputData(input);
  if (t == nullptr || (t->data_type() != onnx::TensorProto::INT32 && t->data_type() != onnx::TensorProto::INT64))
    return std::nullopt;
  const auto value = read_tensor(*t, 1 << 16);
  if (!value) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < static_cast<int64_t>(value->size()); ++i) out.push_back(value->at_i(i));
  return out;
}

// The float list an input holds when inference knows its data.
std::optional<std::vector<double>> floats_input(InferenceContext& ctx, size_t input) {
  if (input >= ctx.getNumInputs()) return std::nullopt;
  const onnx::TensorProto* t = ctx.getInputData(input);
  if (t == nullptr) return std::nullopt;
  const auto value = read_tensor(*t, 1 << 16);
  if (!value) return std::nullopt;
  std::vector<double> out;
  for (int64_t i = 0; i < static_cast<int64_t>(value->size()); ++i) out.push_back(value->at_f(i));
  return out;
}

std::vector<int64_t> ints_attr(InferenceContext& ctx, const char* name) {
  std::vector<int64_t> out;
  if (const auto* a = ctx.getAttribute(name))
    for (auto v : a->ints()) out.push_back(v);
  return out;
}

std::string string_attr(InferenceContext& ctx, const char* name, const std::string& fallback) {
  const auto* a = ctx.getAttribute(name);
  return a && a->has_s() ? a->s() : fallback;
}

// An axis in [0, rank), or -1 when out of range.
int64_t axis_in(int64_t axis, int rank) {
  if (axis < 0) axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

// A shape of `rank` unknown dims (what a rule knows when an input's data is not known).
TensorShapeProto unknown_dims(int rank) {
  TensorShapeProto s;
  for (int i = 0; i < rank; ++i) s.add_dim();
  return s;
}

// A dim computed in floating point (Resize's scales and ratios), refused where it is no size a tensor can have
// (the conversion of a larger double to int64 is undefined).
int64_t dim_from(double v, const char* op) {
  if (!std::isfinite(v) || v < 0 || v > static_cast<double>(kMaxRuleDim))
    fail_shape_inference(op, ": an output dim of ", v, " is out of range");
  return static_cast<int64_t>(v);
}

// Whether no value repeats (axes listed twice are refused, as ORT refuses them).
bool distinct(std::vector<int64_t> values) {
  std::sort(values.begin(), values.end());
  return std::adjacent_find(values.begin(), values.end()) == values.end();
}

// The dims the `axes` attribute lists, made non-negative (every dim without it); an axis out of range or listed
// twice is refused, as ORT refuses it.
std::vector<int64_t> attribute_axes(InferenceContext& ctx, int rank, const char* op) {
  std::vector<int64_t> axes = ints_attr(ctx, "axes");
  if (axes.empty())
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  for (auto& a : axes) {
    const int64_t fixed = axis_in(a, rank);
    if (fixed < 0) fail_shape_inference(op, ": axis ", a, " is out of range for rank ", rank);
    a = fixed;
  }
  if (!distinct(axes)) fail_shape_inference(op, ": an axis is listed twice");
  return axes;
}

// Reduce* from opset 18 (ReduceMax and ReduceMin again at 20): the axes as an optional input, keepdims,
// noop_with_empty_axes: ReduceSum's rule of opset 13, which already took them so.
void reduce_with_axes_input(InferenceContext& ctx) {
  static const auto rule = onnx::OpSchemaRegistry::Schema("ReduceSum", 13, "")->GetTypeAndShapeInferenceFunction();
  rule(ctx);
}

// Pad from opset 18: pads for the dims `axes` (an optional input) lists, all of them without it.
void pad_with_axes(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  if (!has_shape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  const auto pads = ints_input(ctx, 1);
  std::optional<std::vector<int64_t>> axes;
  if (ctx.getNumInputs() > 3 && has_type(ctx, 3)) {
    axes = ints_input(ctx, 3);
  } else {
    axes.emplace();
    for (int i = 0; i < rank; ++i) axes->push_back(i);
  }
  if (pads)
    for (int64_t p : *pads)
      if (p < -kMaxRuleDim || p > kMaxRuleDim) fail_shape_inference("Pad: a pad of ", p, " is out of range");
  if (!pads || !axes || pads->size() != 2 * axes->size()) {
    set_shape(ctx, 0, unknown_dims(rank));
    return;
  }
  TensorShapeProto out = in;
  const size_t n = axes->size();
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = axis_in((*axes)[i], rank);
    if (a < 0) fail_shape_inference("Pad: axis ", (*axes)[i], " is out of range for rank ", rank);
    auto* d = out.mutable_dim(static_cast<int>(a));
    if ((known(*d) >= 0 && known(*d) <= kMaxRuleDim) || (d->has_dim_value() && d->dim_value() == 0)) {
      const int64_t size = d->dim_value() + (*pads)[i] + (*pads)[i + n];
      if (size < 0) fail_shape_inference("Pad: dim ", a, " would be negative");
      d->set_dim_value(size);
    } else {
      d->Clear();
    }
  }
  set_shape(ctx, 0, out);
}

// Split from opset 18: sizes from the `split` input, or num_outputs parts of ceil(dim / n) with a smaller last one,
// or equal parts, one per output.
void split_with_num_outputs(InferenceContext& ctx) {
  const size_t outputs = ctx.getNumOutputs();
  for (size_t o = 0; o < outputs; ++o) same_type(ctx, 0, o);
  if (!has_shape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  const int64_t axis = axis_in(int_attr(ctx, "axis", 0), rank);
  if (axis < 0) fail_shape_inference("Split: axis is out of range for rank ", rank);
  const int64_t dim = known(in.dim(static_cast<int>(axis)));
  std::vector<int64_t> sizes(outputs, -1);
  if (ctx.getNumInputs() > 1 && has_type(ctx, 1)) {
    if (auto split = ints_input(ctx, 1); split && split->size() == outputs) sizes = *split;
  } else if (dim >= 0 && dim <= kMaxRuleDim) {
    const int64_t parts = int_attr(ctx, "num_outputs", static_cast<int64_t>(outputs));
    if (parts <= 0 || parts > kMaxRuleDim) fail_shape_inference("Split: num_outputs must be positive");
    const int64_t chunk = (dim + parts - 1) / parts;
    for (size_t o = 0; o < outputs; ++o) {
      const int64_t start = chunk * static_cast<int64_t>(o);
      sizes[o] = std::max<int64_t>(0, std::min(chunk, dim - start));
    }
  }
  for (size_t o = 0; o < outputs; ++o) {
    TensorShapeProto out = in;
    auto* d = out.mutable_dim(static_cast<int>(axis));
    d->Clear();
    if (sizes[o] >= 0) d->set_dim_value(sizes[o]);
    set_shape(ctx, o, out);
  }
}

// Resize from opset 18: the scales or sizes given for the dims `axes` lists, and with sizes the aspect-ratio policy
// (one scale for all those dims: the smallest or largest sizes/input ratio, each dim rounded).
void resize_with_axes(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  if (!has_shape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  const std::vector<int64_t> axes = attribute_axes(ctx, rank, "Resize");
  TensorShapeProto out = in;
  const bool has_sizes = ctx.getNumInputs() > 3 && has_type(ctx, 3);
  const auto scales = has_sizes ? std::nullopt : floats_input(ctx, 2);
  const auto sizes = has_sizes ? ints_input(ctx, 3) : std::nullopt;
  if ((scales && scales->size() == axes.size()) || (sizes && sizes->size() == axes.size())) {
    double ratio = 0;
    const std::string policy = string_attr(ctx, "keep_aspect_ratio_policy", "stretch");
    bool all_known = true;
    if (sizes && policy != "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t d = known(in.dim(static_cast<int>(axes[i])));
        if (d <= 0) {
          all_known = false;
          continue;
        }
        const double r = static_cast<double>((*sizes)[i]) / static_cast<double>(d);
        ratio = i == 0 ? r : policy == "not_larger" ? std::min(ratio, r) : std::max(ratio, r);
      }
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      auto* d = out.mutable_dim(static_cast<int>(axes[i]));
      const int64_t size = known(*d);
      d->Clear();
      if (sizes && policy == "stretch") {
        d->set_dim_value((*sizes)[i]);
      } else if (sizes) {
        if (all_known && size > 0) d->set_dim_value(dim_from(std::round(ratio * static_cast<double>(size)), "Resize"));
      } else if (size >= 0) {
        d->set_dim_value(dim_from(std::floor(static_cast<double>(size) * (*scales)[i]), "Resize"));
      }
    }
  } else {
    for (int64_t a : axes) out.mutable_dim(static_cast<int>(a))->Clear();
  }
  set_shape(ctx, 0, out);
}

// DFT from opset 20: the length (input 1) and the axis (input 2, by default -2) as inputs; the last dim holds the
// real and imaginary parts; one-sided keeps floor(n / 2) + 1 of the n frequencies.
void dft_with_inputs(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  if (!has_shape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  TensorShapeProto out = in;
  out.mutable_dim(rank - 1)->Clear();
  out.mutable_dim(rank - 1)->set_dim_value(2);
  int64_t axis = -2;
  if (ctx.getNumInputs() > 2 && has_type(ctx, 2)) {
    const auto data = ints_input(ctx, 2);
    if (!data || data->size() != 1) {  // (an axis not known: only the rank is)
      set_shape(ctx, 0, unknown_dims(rank));
      return;
    }
    axis = (*data)[0];
  }
  const int64_t a = axis_in(axis, rank);
  if (a < 0 || a == rank - 1) fail_shape_inference("DFT: axis ", axis, " is out of range for rank ", rank);
  auto* d = out.mutable_dim(static_cast<int>(a));
  int64_t n = known(*d);
  if (ctx.getNumInputs() > 1 && has_type(ctx, 1)) n = scalar_input(ctx, 1);
  d->Clear();
  if (n >= 0) d->set_dim_value(int_attr(ctx, "onesided", 0) ? n / 2 + 1 : n);
  set_shape(ctx, 0, out);
}

// GridSample from opset 20, in any number of spatial dims: (N, C) of the input, the grid's sampling points.
void grid_sample_nd(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  if (!has_shape(ctx, 0) || !has_shape(ctx, 1)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const auto& grid = onnx::getInputShape(ctx, 1);
  if (in.dim_size() < 3 || grid.dim_size() != in.dim_size())
    fail_shape_inference("GridSample: the grid's rank must equal the input's");
  TensorShapeProto out;
  *out.add_dim() = in.dim(0);
  *out.add_dim() = in.dim(1);
  for (int i = 1; i + 1 < grid.dim_size(); ++i) *out.add_dim() = grid.dim(i);
  set_shape(ctx, 0, out);
}

// Col2Im: (N, C * prod(block_shape), L) back to the image (N, C, image_shape...).
void col2im(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto image = ints_input(ctx, 1);
  const auto block = ints_input(ctx, 2);
  if (!has_shape(ctx, 0) || !image || !block) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  if (in.dim_size() != 3) fail_shape_inference("Col2Im: the input must be of rank 3");
  if (block->size() != image->size()) fail_shape_inference("Col2Im: image_shape and block_shape differ in length");
  int64_t block_size = 1;
  for (int64_t b : *block) {
    if (b <= 0 || b > kMaxRuleDim) fail_shape_inference("Col2Im: block dim ", b, " is not positive");
    if (__builtin_mul_overflow(block_size, b, &block_size) || block_size > kMaxRuleDim)
      fail_shape_inference("Col2Im: the block is too large");
  }
  const int64_t columns = known(in.dim(1));
  TensorShapeProto out;
  *out.add_dim() = in.dim(0);
  out.add_dim();
  if (columns >= 0) out.mutable_dim(1)->set_dim_value(columns / block_size);
  for (int64_t d : *image) out.add_dim()->set_dim_value(d);
  set_shape(ctx, 0, out);
}

// CenterCropPad: the dims `axes` lists (all without it) take the sizes of the `shape` input.
void center_crop_pad(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  if (!has_shape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  const std::vector<int64_t> axes = attribute_axes(ctx, rank, "CenterCropPad");
  const auto shape = ints_input(ctx, 1);
  TensorShapeProto out = in;
  for (size_t i = 0; i < axes.size(); ++i) {
    auto* d = out.mutable_dim(static_cast<int>(axes[i]));
    d->Clear();
    if (shape && shape->size() == axes.size()) d->set_dim_value((*shape)[i]);
  }
  set_shape(ctx, 0, out);
}

// DeformConv: (N of the input, output channels of the weight, the spatial dims of the offset input).
void deform_conv(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  if (!has_shape(ctx, 0) || !has_shape(ctx, 1) || !has_shape(ctx, 2)) return;
  const auto& offset = onnx::getInputShape(ctx, 2);
  const int rank = onnx::getInputShape(ctx, 0).dim_size();
  if (rank < 3 || onnx::getInputShape(ctx, 1).dim_size() != rank || offset.dim_size() != rank)
    fail_shape_inference("DeformConv: X, W and offset must have one rank, of at least 3");
  TensorShapeProto out;
  *out.add_dim() = onnx::getInputShape(ctx, 0).dim(0);
  *out.add_dim() = onnx::getInputShape(ctx, 1).dim(0);
  for (int i = 2; i < offset.dim_size(); ++i) *out.add_dim() = offset.dim(i);
  set_shape(ctx, 0, out);
}

// AffineGrid: theta (N, 2, 3) or (N, 3, 4) and size (N, C, H, W) or (N, C, D, H, W): a grid (N, H, W, 2) or
// (N, D, H, W, 3).
void affine_grid(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto size = ints_input(ctx, 1);
  if (!size) return;
  if (size->size() != 4 && size->size() != 5) fail_shape_inference("AffineGrid: size must have 4 or 5 elements");
  TensorShapeProto out;
  out.add_dim()->set_dim_value((*size)[0]);
  for (size_t i = 2; i < size->size(); ++i) out.add_dim()->set_dim_value((*size)[i]);
  out.add_dim()->set_dim_value(static_cast<int64_t>(size->size()) - 2);
  set_shape(ctx, 0, out);
}

// Attention (opset 23): Q, K, V as (B, heads, S, head) or (B, S, heads * head) with q_num_heads and kv_num_heads;
// Y like Q with V's head size; present key and value (B, kv heads, past + S_kv, head) when past inputs 4 and 5 are
// given; the QK product (B, q heads, S_q, past + S_kv).
void attention_23(InferenceContext& ctx) {
  for (size_t o = 0; o < ctx.getNumOutputs(); ++o) same_type(ctx, o == 1 ? 1 : o == 2 ? 2 : 0, o);
  if (!has_shape(ctx, 0) || !has_shape(ctx, 1) || !has_shape(ctx, 2)) return;
  const auto& q = onnx::getInputShape(ctx, 0);
  const auto& k = onnx::getInputShape(ctx, 1);
  const auto& v = onnx::getInputShape(ctx, 2);
  const int rank = q.dim_size();
  if ((rank != 3 && rank != 4) || k.dim_size() != rank || v.dim_size() != rank)
    fail_shape_inference("Attention: Q, K and V must all be of rank 3 or all of rank 4");
  using Dim = TensorShapeProto::Dimension;
  Dim batch = q.dim(0), q_heads, q_len, kv_heads, kv_len, head, v_head;
  auto divided = [](const Dim& d, int64_t by) {
    const int64_t n = known(d);
    return dim_value(n >= 0 && by > 0 && n % by == 0 ? n / by : -1);
  };
  if (rank == 4) {
    q_heads = q.dim(1), q_len = q.dim(2), kv_heads = k.dim(1), kv_len = k.dim(2), head = k.dim(3), v_head = v.dim(3);
  } else {
    const int64_t qh = int_attr(ctx, "q_num_heads", 0), kvh = int_attr(ctx, "kv_num_heads", 0);
    if (qh <= 0 || kvh <= 0) fail_shape_inference("Attention: 3-D inputs need q_num_heads and kv_num_heads");
    q_heads = dim_value(qh), q_len = q.dim(1), kv_heads = dim_value(kvh), kv_len = k.dim(1);
    head = divided(k.dim(2), kvh), v_head = divided(v.dim(2), kvh);
  }
  TensorShapeProto y;
  if (rank == 4) {
    y = dims_of({batch, q_heads, q_len, v_head});
  } else {
    const int64_t qh = known(q_heads), vh = known(v_head);
    int64_t hidden = -1;
    if (qh >= 0 && vh >= 0 && __builtin_mul_overflow(qh, vh, &hidden)) hidden = -1;
    y = dims_of({batch, q_len, dim_value(hidden)});
  }
  set_shape(ctx, 0, y);
  // The total length: the past's plus this step's.
  Dim total = kv_len;
  if (ctx.getNumInputs() > 4 && has_type(ctx, 4)) {
    total = Dim();
    if (has_shape(ctx, 4) && onnx::getInputShape(ctx, 4).dim_size() == 4) {
      const int64_t past = known(onnx::getInputShape(ctx, 4).dim(2)), now = known(kv_len);
      int64_t sum = 0;
      if (past >= 0 && now >= 0 && !__builtin_add_overflow(past, now, &sum)) total = dim_value(sum);
    }
  }
  if (ctx.getNumOutputs() > 1) set_shape(ctx, 1, dims_of({batch, kv_heads, total, head}));
  if (ctx.getNumOutputs() > 2) set_shape(ctx, 2, dims_of({batch, kv_heads, total, v_head}));
  if (ctx.getNumOutputs() > 3) set_shape(ctx, 3, dims_of({batch, q_heads, q_len, total}));
}

// Function bodies: what ONNX Runtime 1.30 runs for the ops its CPU provider has no kernel for (it inlines the ONNX
// function at load, function_inline.h). Written from the graphs ORT saves after inlining (optimizations disabled),
// node for node and name for name, so that memplan plans, and names in partition configs, the graph ORT runs.

onnx::TensorProto int64s(const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

// The element type of input `i` where the context knows it.
std::optional<int64_t> elem_type(const onnx::FunctionBodyBuildContext& ctx, int i) {
  const onnx::TypeProto* t = ctx.getInputType(i);
  if (t == nullptr || !t->has_tensor_type()) return std::nullopt;
  return t->tensor_type().elem_type();
}

bool mish_body(const onnx::FunctionBodyBuildContext&, const onnx::OpSchema& schema, onnx::FunctionProto& f) {
  onnx::FunctionBuilder(f)
      .Add("Softplus_X = Softplus (X)")
      .Add("TanHSoftplusX = Tanh (Softplus_X)")
      .Add("Y = Mul (X, TanHSoftplusX)");
  schema.BuildFunction(f);
  return true;
}

bool swish_body(const onnx::FunctionBodyBuildContext& ctx, const onnx::OpSchema& schema, onnx::FunctionProto& f) {
  const auto type = elem_type(ctx, 0);
  if (!type) return false;
  const auto* alpha = ctx.getAttribute("alpha");
  onnx::FunctionBuilder(f)
      .Const("Alpha", onnx::ToTensor<float>(alpha ? alpha->f() : 1.0f))
      .Add("AlphaCast = Cast (Alpha)", "to", *type)
      .Add("AlphaMulX = Mul (AlphaCast, X)")
      .Add("SigmoidAlphaMulX = Sigmoid (AlphaMulX)")
      .Add("Y = Mul (X, SigmoidAlphaMulX)");
  schema.BuildFunction(f);
  return true;
}

// CenterCropPad: pad each listed dim up to the target, then slice its centre (the extra element to the right).
bool center_crop_pad_body(const onnx::FunctionBodyBuildContext& ctx, const onnx::OpSchema& schema,
                          onnx::FunctionProto& f) {
  std::vector<int64_t> axes;
  if (const auto* a = ctx.getAttribute("axes")) {
    axes.assign(a->ints().begin(), a->ints().end());
  } else {
    const onnx::TypeProto* t = ctx.getInputType(0);
    if (t == nullptr || !t->tensor_type().has_shape()) return false;
    for (int i = 0; i < t->tensor_type().shape().dim_size(); ++i) axes.push_back(i);
  }
  onnx::FunctionBuilder(f)
      .Const("k2", int64s({2}))
      .Const("axes_input", int64s(axes))
      .Add("x_shape_alldims = Shape (input_data)")
      .Add("x_shape = Gather <axis = 0> (x_shape_alldims, axes_input)")
      .Add("padded_sh = Max (x_shape, shape)")
      .Add("pad_amount = Sub (padded_sh, x_shape)")
      .Add("pad_amount_left = Div (pad_amount, k2)")
      .Add("pad_amount_right = Sub (pad_amount, pad_amount_left)")
      .Add("pads = Concat <axis = 0> (pad_amount_left, pad_amount_right)")
      .Add("padded_input = Pad (input_data, pads, , axes_input)")
      .Add("x_shape_alldims2 = Shape (padded_input)")
      .Add("x_shape2 = Gather <axis = 0> (x_shape_alldims2, axes_input)")
      .Add("sh_diff = Sub (x_shape2, shape)")
      .Add("start_dims = Div (sh_diff, k2)")
      .Add("end_dims = Add (start_dims, shape)")
      .Add("output_data = Slice (padded_input, start_dims, end_dims, axes_input)");
  schema.BuildFunction(f);
  return true;
}

// GroupNormalization: X reshaped to (N, groups, -1), normalized over the last dim, scaled and shifted, reshaped
// back. Opset 18 scales per group in X's type; opset 21 per channel, normalizing in stash_type. (ONNX's node order:
// ORT's execution order is a function of it.)
bool group_normalization_body(const onnx::FunctionBodyBuildContext& ctx, const onnx::OpSchema& schema,
                              onnx::FunctionProto& f, int since) {
  const auto type = elem_type(ctx, 0);
  const auto* groups = ctx.getAttribute("num_groups");
  if (!type || groups == nullptr) return false;
  const auto* epsilon = ctx.getAttribute("epsilon");
  const auto* stash = ctx.getAttribute("stash_type");
  const int64_t u = since >= 21 ? (stash ? stash->i() : int64_t{onnx::TensorProto::FLOAT}) : *type;
  onnx::TensorProto eps = onnx::ToTensor<float>(epsilon ? epsilon->f() : 1e-5f);
  eps.add_dims(1);
  const bool v21 = since >= 21;
  onnx::FunctionBuilder b(f);
  b.Const("FloatEpsilon", eps).Add("Epsilon = Cast (FloatEpsilon)", "to", u);
  if (v21) b.Add("XU = Cast (X)", "to", u);
  b.Add(v21 ? "XShape = Shape (XU)" : "XShape = Shape (X)")
      .Add("C = Shape <start = 1, end = 2> (X)")
      .Const("NumGroups", int64s({groups->i()}))
      .Add("GroupSize = Div (C, NumGroups)")
      .Add("N = Shape <start = 0, end = 1> (X)")
      .Add("InstanceShape = Shape <start = 2> (X)")
      .Add("NewShape = Concat <axis = 0> (N, NumGroups, GroupSize, InstanceShape)")
      .Add(v21 ? "XReshaped = Reshape (XU, NewShape)" : "XReshaped = Reshape (X, NewShape)")
      .Const("Shape3D", int64s({0, 0, -1}))
      .Add("X3D = Reshape (XReshaped, Shape3D)")
      .Const("Axes2", int64s({2}))
      .Add("Mean = ReduceMean (X3D, Axes2)")
      .Add("Square = Mul (X3D, X3D)")
      .Add("MeanOfSquare = ReduceMean (Square, Axes2)")
      .Add("SquareOfMean = Mul (Mean, Mean)")
      .Add("Var = Sub (MeanOfSquare, SquareOfMean)")
      .Add("VarPlusEpsilon = Add (Var, Epsilon)")
      .Add("StdDev = Sqrt (VarPlusEpsilon)")
      .Add("Deviation = Sub (X3D, Mean)");
  if (v21)
    b.Add("NormalizedU = Div (Deviation, StdDev)")
        .Add("NormalizedOriginalShape = Reshape (NormalizedU, XShape)")
        .Add("NormalizedNC = Reshape (NormalizedOriginalShape, Shape3D)")
        .Add("NormalizedT = Cast (NormalizedNC)", "to", *type);
  else
    b.Add("Normalized = Div (Deviation, StdDev)");
  b.Const("ScaleShape", int64s({1, -1, 1}))
      .Add("ScaleT = Cast (scale)", "to", *type)
      .Add("BiasT = Cast (bias)", "to", *type)
      .Add("ScaleReshaped = Reshape (ScaleT, ScaleShape)")
      .Add("BiasReshaped = Reshape (BiasT, ScaleShape)")
      .Add(v21 ? "Scaled = Mul (ScaleReshaped, NormalizedT)" : "Scaled = Mul (ScaleReshaped, Normalized)")
      .Add("Biased = Add (Scaled, BiasReshaped)")
      .Add("Y = Reshape (Biased, XShape)");
  schema.BuildFunction(f);
  return true;
}

// libonnx 1.12 knows the ONNX domain up to opset 17; the registry refuses a schema past the domain's range.
void extend_onnx_domain() {
  auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
  // (Map() is the registry's own table, which has no setter for a known domain)
  auto& map = const_cast<std::unordered_map<std::string, std::pair<int, int>>&>(ranges.Map());
  map[""].second = std::max(map[""].second, kNewestOnnxOpset);
}

}  // namespace

void register_newer_onnx_ops() {
  extend_onnx_domain();
  auto elementwise = [](InferenceContext& ctx) { like_input(ctx, 0, 0); };
  const std::vector<Attr> reduce_attrs = {{"keepdims", INT}, {"noop_with_empty_axes", INT}};
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                         "ReduceMin", "ReduceProd", "ReduceSumSquare"})
    add("", op, 18, {"data", "axes?"}, {"reduced"}, reduce_attrs, reduce_with_axes_input);
  for (const char* op : {"ReduceMax", "ReduceMin"})
    add("", op, 20, {"data", "axes?"}, {"reduced"}, reduce_attrs, reduce_with_axes_input);
  add("", "Pad", 18, {"data", "pads", "constant_value?", "axes?"}, {"output"}, {{"mode", STRING}}, pad_with_axes);
  add("", "Split", 18, {"input", "split?"}, {"outputs*"}, {{"axis", INT}, {"num_outputs", INT}},
      split_with_num_outputs);
  const std::vector<Attr> resize_attrs = {{"axes", INTS},
                                          {"keep_aspect_ratio_policy", STRING},
                                          {"mode", STRING},
                                          {"coordinate_transformation_mode", STRING},
                                          {"antialias", INT}};
  for (int since : {18, 19})
    add("", "Resize", since, {"X", "roi?", "scales?", "sizes?"}, {"Y"}, resize_attrs, resize_with_axes);
  const std::vector<Attr> pool_attrs = {{"auto_pad", STRING}, {"kernel_shape", INTS}, {"dilations", INTS},
                                        {"strides", INTS},    {"pads", INTS},         {"ceil_mode", INT}};
  add("", "AveragePool", 19, {"X"}, {"Y"}, pool_attrs, pool_like);
  add("", "LpPool", 18, {"X"}, {"Y"}, pool_attrs, pool_like);
  add("", "DFT", 20, {"input", "dft_length?", "axis?"}, {"output"}, {{"inverse", INT}, {"onesided", INT}},
      dft_with_inputs);
  add("", "GridSample", 20, {"X", "grid"}, {"Y"}, {{"mode", STRING}}, grid_sample_nd);

  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    add("", op, 18, {"A", "B"}, {"C"}, {}, [](InferenceContext& ctx) { broadcast_pair(ctx, 0, 1); });
  add("", "BitwiseNot", 18, {"X"}, {"Y"}, {}, elementwise);
  add("", "Mish", 18, {"X"}, {"Y"}, {}, elementwise, mish_body);
  add("", "Gelu", 20, {"X"}, {"Y"}, {{"approximate", STRING}}, elementwise);
  add("", "Swish", 24, {"X"}, {"Y"}, {{"alpha", FLOAT}}, elementwise, swish_body);
  for (int since : {18, 21})
    add("", "GroupNormalization", since, {"X", "scale", "bias"}, {"Y"},
        {{"num_groups", INT, true}, {"epsilon", FLOAT}, {"stash_type", INT}}, elementwise,
        [since](const onnx::FunctionBodyBuildContext& ctx, const onnx::OpSchema& schema, onnx::FunctionProto& f) {
          return group_normalization_body(ctx, schema, f, since);
        });
  add("", "RMSNormalization", 23, {"X", "scale"}, {"Y"}, {{"axis", INT}, {"epsilon", FLOAT}}, elementwise);
  add("", "RotaryEmbedding", 23, {"X", "cos_cache", "sin_cache", "position_ids?"}, {"Y"},
      {{"num_heads", INT}, {"interleaved", INT}, {"rotary_embedding_dim", INT}}, elementwise);
  add("", "TensorScatter", 24, {"past_cache", "update", "write_indices?"}, {"present_cache"}, {{"axis", INT}},
      elementwise);
  add("", "Col2Im", 18, {"input", "image_shape", "block_shape"}, {"output"},
      {{"dilations", INTS}, {"pads", INTS}, {"strides", INTS}}, col2im);
  add("", "CenterCropPad", 18, {"input_data", "shape"}, {"output_data"}, {{"axes", INTS}}, center_crop_pad,
      center_crop_pad_body);
  add("", "DeformConv", 19, {"X", "W", "offset", "B?", "mask?"}, {"Y"}, {{"kernel_shape", INTS}}, deform_conv);
  add("", "AffineGrid", 20, {"theta", "size"}, {"grid"}, {{"align_corners", INT}}, affine_grid);
  // (opset 24 adds the input nonpad_kv_seqlen)
  std::vector<std::string> attention_inputs = {"Q", "K", "V", "attn_mask?", "past_key?", "past_value?"};
  for (int since : {23, 24}) {
    if (since == 24) attention_inputs.push_back("nonpad_kv_seqlen?");
    add("", "Attention", since, attention_inputs, {"Y", "present_key?", "present_value?", "qk_matmul_output?"},
        {{"q_num_heads", INT}, {"kv_num_heads", INT}, {"qk_matmul_output_mode", INT}, {"is_causal", INT}},
        attention_23);
  }
}

}  // namespace memplan::onnx_io::contrib
