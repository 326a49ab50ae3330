// Shape rules for the rest of the contrib ops ONNX Runtime registers kernels for: the CPU provider's (checked
// against ORT 1.30 running each op, tests/interop/make_contrib_models.py), the CUDA provider's ops of the
// transformer optimizer and the diffusion models (BiasSplitGelu, GroupNorm, NhwcConv, ..., written from ORT's
// schemas; test_contrib.cc), and the ONNX-domain ops ORT keeps at opset 1 after ONNX removed them (ImageScaler, Crop,
// ...), which old converters wrote.
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "contrib_support.h"
#include "tensor_proto.h"

namespace onnx {
void convPoolShapeInference(InferenceContext& ctx, bool use_dilation, bool require_kernel_shape, int input1Idx,
                            int input2Idx);
}  // namespace onnx

namespace memplan::onnx_io::contrib {

namespace {

const TensorShapeProto* shape_of(InferenceContext& ctx, size_t input) {
  return has_shape(ctx, input) ? &onnx::getInputShape(ctx, input) : nullptr;
}

void set_elem_type(InferenceContext& ctx, size_t output, int32_t type) {
  if (output < ctx.getNumOutputs() && ctx.getOutputType(output) != nullptr)
    onnx::updateOutputElemType(ctx, output, type);
}

// The values of a small constant input (an initializer or a folded constant), or nothing.
std::optional<Tensor> input_values(InferenceContext& ctx, size_t input, int64_t max_elements = 64) {
  if (input >= ctx.getNumInputs()) return std::nullopt;
  const onnx::TensorProto* t = ctx.getInputData(input);
  if (t == nullptr) return std::nullopt;
  auto v = read_tensor(*t, max_elements);
  if (!v) return std::nullopt;
  for (int64_t k = 0; k < v->size(); ++k)
    if (!v->holds(k)) return std::nullopt;
  return v;
}

// Integer values of a constant input; nothing unless every element is an integer in (-2^40, 2^40).
std::optional<std::vector<int64_t>> int_values(InferenceContext& ctx, size_t input) {
  auto v = input_values(ctx, input);
  if (!v) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t k = 0; k < v->size(); ++k) {
    const double f = v->is_float() ? v->at_f(k) : static_cast<double>(v->ints[static_cast<size_t>(k)]);
    if (!std::isfinite(f) || std::fabs(f) >= static_cast<double>(kMaxRuleDim) || f != std::floor(f))
      return std::nullopt;
    out.push_back(static_cast<int64_t>(f));
  }
  return out;
}

// heads * head as a dim, unknown when either is unknown or the product is no real width.
TensorShapeProto::Dimension width_of(int64_t heads, int64_t head) {
  if (heads < 0 || head < 0 || heads > kMaxRuleDim || head > kMaxRuleDim) return {};
  if (heads != 0 && head > kMaxRuleDim / heads) return {};
  return dim_value(heads * head);
}

TensorShapeProto::Dimension sum_dims(const TensorShapeProto::Dimension& d, int64_t add) {
  const int64_t v = known(d);
  if (d.has_dim_value() && d.dim_value() == 0 && add >= 0) return dim_value(add);
  if (v < 0 || v > kMaxRuleDim) return {};
  if (v + add < 0) fail_shape_inference("a dimension of ", v, " shrinks by ", -add, " below zero");
  return dim_value(v + add);
}

// One spatial dim of a convolution or pooling window: input `n`, kernel `k`, stride, dilation, pads at both ends.
TensorShapeProto::Dimension window_dim(const TensorShapeProto::Dimension& in, int64_t k, int64_t stride,
                                       int64_t dilation, int64_t pad_begin, int64_t pad_end,
                                       const std::string& auto_pad, bool ceil_mode) {
  if (k <= 0 || stride <= 0 || dilation <= 0 || k > kMaxRuleDim || stride > kMaxRuleDim || dilation > kMaxRuleDim ||
      pad_begin < 0 || pad_end < 0 || pad_begin > kMaxRuleDim || pad_end > kMaxRuleDim ||
      k - 1 > kMaxRuleDim / dilation)
    fail_shape_inference("invalid kernel, stride, dilation or pad");
  const int64_t n = in.has_dim_value() ? in.dim_value() : -1;
  if (n < 0 || n > kMaxRuleDim) return {};
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return dim_value((n + stride - 1) / stride);
  const int64_t extent = (k - 1) * dilation + 1;
  const int64_t padded = auto_pad == "VALID" ? n : n + pad_begin + pad_end;
  if (padded < extent) fail_shape_inference("the kernel is larger than the padded input");
  return dim_value((padded - extent + (ceil_mode ? stride - 1 : 0)) / stride + 1);
}

// A convolution or pooling over an NHWC input (channels last): the spatial dims between batch and channels, the
// output channels `channels` (unknown when empty).
void nhwc_window(InferenceContext& ctx, const TensorShapeProto& in, const std::vector<int64_t>& kernel,
                 const TensorShapeProto::Dimension& channels, size_t output) {
  const int spatial = in.dim_size() - 2;
  if (spatial < 1) fail_shape_inference("a channels-last input needs rank 3 or more");
  if (static_cast<int>(kernel.size()) != spatial) fail_shape_inference("kernel_shape does not match the input's rank");
  std::vector<int64_t> strides, dilations, pads;
  onnx::getRepeatedAttribute(ctx, "strides", strides);
  onnx::getRepeatedAttribute(ctx, "dilations", dilations);
  onnx::getRepeatedAttribute(ctx, "pads", pads);
  if (strides.empty()) strides.assign(spatial, 1);
  if (dilations.empty()) dilations.assign(spatial, 1);
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (static_cast<int>(strides.size()) != spatial || static_cast<int>(dilations.size()) != spatial ||
      static_cast<int>(pads.size()) != 2 * spatial)
    fail_shape_inference("strides, dilations or pads of the wrong length");
  const std::string auto_pad = onnx::getAttribute(ctx, "auto_pad", std::string("NOTSET"));
  const bool ceil_mode = int_attr(ctx, "ceil_mode", 0) != 0;
  TensorShapeProto out;
  *out.add_dim() = in.dim(0);
  for (int i = 0; i < spatial; ++i)
    *out.add_dim() =
        window_dim(in.dim(1 + i), kernel[i], strides[i], dilations[i], pads[i], pads[i + spatial], auto_pad, ceil_mode);
  *out.add_dim() = channels;
  set_shape(ctx, output, out);
}

// The kernel's spatial dims: the kernel_shape attribute, else the weight's dims from `first_spatial` on.
std::vector<int64_t> kernel_dims(InferenceContext& ctx, const TensorShapeProto* weight, int first_spatial, int count) {
  std::vector<int64_t> kernel;
  if (onnx::getRepeatedAttribute(ctx, "kernel_shape", kernel)) return kernel;
  if (weight == nullptr || weight->dim_size() < first_spatial + count) return {};
  for (int i = 0; i < count; ++i) {
    const int64_t k = known(weight->dim(first_spatial + i));
    if (k < 0) return {};
    kernel.push_back(k);
  }
  return kernel;
}

// A convolution of an NHWC input `x_input` by the weight `w_input` (M, ...) whose kernel dims start at
// `first_spatial`: output 0 (N, spatial..., M).
void channels_last_conv(InferenceContext& ctx, size_t x_input, size_t w_input, int first_spatial) {
  const auto* x = shape_of(ctx, x_input);
  const auto* w = shape_of(ctx, w_input);
  if (!x || !w) return;
  if (w->dim_size() != x->dim_size()) fail_shape_inference("the weight's rank differs from the input's");
  const auto kernel = kernel_dims(ctx, w, first_spatial, x->dim_size() - 2);
  if (kernel.empty()) return;
  nhwc_window(ctx, *x, kernel, w->dim(0), 0);
}

// ExpandDims: a dim of 1 inserted at the constant `axis` input.
void expand_dims(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* in = shape_of(ctx, 0);
  const auto axis_values = int_values(ctx, 1);
  if (!in || !axis_values || axis_values->size() != 1) return;
  const int rank = in->dim_size();
  int64_t axis = (*axis_values)[0];
  if (axis < -rank - 1 || axis > rank) fail_shape_inference("ExpandDims: axis ", axis, " out of range for rank ", rank);
  if (axis < 0) axis += rank + 1;
  TensorShapeProto out;
  for (int i = 0; i <= rank; ++i) {
    if (i == axis) out.add_dim()->set_dim_value(1);
    if (i < rank) *out.add_dim() = in->dim(i);
  }
  set_shape(ctx, 0, out);
}

// GatherND (com.microsoft, no batch dims): indices (..., k) pick slices data[k:]: indices[:-1] + data[k:].
void gather_nd(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* data = shape_of(ctx, 0);
  const auto* indices = shape_of(ctx, 1);
  if (!data || !indices) return;
  if (indices->dim_size() < 1) fail_shape_inference("GatherND: indices must have rank 1 or more");
  const auto& last = indices->dim(indices->dim_size() - 1);
  if (!last.has_dim_value()) return;
  const int64_t k = last.dim_value();
  if (k < 0 || k > data->dim_size()) fail_shape_inference("GatherND: indices' last dim exceeds the data's rank");
  TensorShapeProto out;
  for (int i = 0; i + 1 < indices->dim_size(); ++i) *out.add_dim() = indices->dim(i);
  for (int i = static_cast<int>(k); i < data->dim_size(); ++i) *out.add_dim() = data->dim(i);
  set_shape(ctx, 0, out);
}

// Range (com.microsoft): start, limit and an optional delta (1): max(ceil((limit - start) / delta), 0) elements.
void range(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  TensorShapeProto out;
  auto* n = out.add_dim();
  const auto start = input_values(ctx, 0, 1), limit = input_values(ctx, 1, 1);
  const auto delta = has_type(ctx, 2) ? input_values(ctx, 2, 1) : std::optional<Tensor>(Tensor::int64_scalar(1));
  if (start && limit && delta && start->size() == 1 && limit->size() == 1 && delta->size() == 1) {
    const double s = start->at_f(0), l = limit->at_f(0), d = delta->at_f(0);
    if (d == 0) fail_shape_inference("Range: delta is 0");
    const double count = std::ceil((l - s) / d);
    if (std::isfinite(count) && count <= static_cast<double>(kMaxRuleDim))
      n->set_dim_value(count < 0 ? 0 : static_cast<int64_t>(count));
  }
  set_shape(ctx, 0, out);
}

// Pad (com.microsoft): pads an input of its own ([2 * rank] or [1, 2 * rank]): begins, then ends.
void pad(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* in = shape_of(ctx, 0);
  if (!in) return;
  const int rank = in->dim_size();
  TensorShapeProto out;
  const auto pads = int_values(ctx, 1);
  if (pads && static_cast<int>(pads->size()) != 2 * rank)
    fail_shape_inference("Pad: pads has ", pads->size(), " values for rank ", rank);
  for (int i = 0; i < rank; ++i)
    *out.add_dim() = pads ? sum_dims(in->dim(i), (*pads)[i] + (*pads)[i + rank]) : TensorShapeProto::Dimension();
  set_shape(ctx, 0, out);
}

// MurmurHash3: one hash per element, uint32 with `positive` (the default), else int32.
void murmur_hash3(InferenceContext& ctx) {
  set_elem_type(ctx, 0, int_attr(ctx, "positive", 1) != 0 ? onnx::TensorProto::UINT32 : onnx::TensorProto::INT32);
  if (const auto* in = shape_of(ctx, 0)) set_shape(ctx, 0, *in);
}

// CDist: distances between the rows of A (N, K) and B (M, K): (N, M).
void cdist(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* a = shape_of(ctx, 0);
  const auto* b = shape_of(ctx, 1);
  if (!a || !b) return;
  if (a->dim_size() != 2 || b->dim_size() != 2) fail_shape_inference("CDist: A and B must have rank 2");
  set_shape(ctx, 0, dims_of({a->dim(0), b->dim(0)}));
}

// GridSample (com.microsoft): X (N, C, H, W) sampled at grid (N, Ho, Wo, 2): (N, C, Ho, Wo).
void grid_sample(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* x = shape_of(ctx, 0);
  const auto* grid = shape_of(ctx, 1);
  if (!x || !grid) return;
  if (x->dim_size() != 4 || grid->dim_size() != 4) fail_shape_inference("GridSample: X and grid must have rank 4");
  set_shape(ctx, 0, dims_of({x->dim(0), x->dim(1), grid->dim(1), grid->dim(2)}));
}

// QLinearWhere: condition, X (with scale and zero point), Y (likewise), then the output's scale and zero point:
// the broadcast of the three, the output zero point's type.
void qlinear_where(InferenceContext& ctx) {
  same_type(ctx, 8, 0);
  const auto* c = shape_of(ctx, 0);
  const auto* x = shape_of(ctx, 1);
  const auto* y = shape_of(ctx, 4);
  if (!c || !x || !y) return;
  TensorShapeProto xy, out;
  onnx::bidirectionalBroadcastShapeInference(*x, *y, xy);
  onnx::bidirectionalBroadcastShapeInference(*c, xy, out);
  set_shape(ctx, 0, out);
}

// QLinearConv (com.microsoft): ONNX's QLinearConv, or with channels_last an NHWC input and output (the weight
// stays (M, C / group, k...)). The output zero point's type.
void qlinear_conv(InferenceContext& ctx) {
  same_type(ctx, 7, 0);
  if (int_attr(ctx, "channels_last", 0) == 0) {
    onnx::convPoolShapeInference(ctx, /*use_dilation=*/true, /*require_kernel_shape=*/false, 0, 3);
    return;
  }
  channels_last_conv(ctx, 0, 3, 2);
}

// NhwcMaxPool: MaxPool over an NHWC input.
void nhwc_max_pool(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* x = shape_of(ctx, 0);
  if (!x) return;
  std::vector<int64_t> kernel;
  if (!onnx::getRepeatedAttribute(ctx, "kernel_shape", kernel)) fail_shape_inference("NhwcMaxPool: kernel_shape");
  nhwc_window(ctx, *x, kernel, x->dim(x->dim_size() - 1), 0);
}

// MatMulInteger16: int16 x int16 -> int32.
void matmul_integer16(InferenceContext& ctx) {
  set_elem_type(ctx, 0, onnx::TensorProto::INT32);
  matmul_shape(ctx, 0, 1, false, false, false, false);
}

// QEmbedLayerNormalization: EmbedLayerNormalization over quantized tables: (B, S, hidden) float, mask index (B).
void qembed_layer_normalization(InferenceContext& ctx) {
  same_type(ctx, 8, 0);  // the word embedding's scale
  set_elem_type(ctx, 1, onnx::TensorProto::INT32);
  const auto* ids = shape_of(ctx, 0);
  const auto* words = shape_of(ctx, 2);
  if (!ids || !words) return;
  if (ids->dim_size() != 2 || words->dim_size() != 2)
    fail_shape_inference("QEmbedLayerNormalization: input_ids and word_embedding must have rank 2");
  set_shape(ctx, 0, dims_of({ids->dim(0), ids->dim(1), words->dim(1)}));
  set_shape(ctx, 1, dims_of({ids->dim(0)}));
}

// DynamicQuantizeLSTM: ONNX's LSTM with quantized weights W (directions, input, 4 hidden) and R: Y (seq, directions,
// batch, hidden), Y_h and Y_c (directions, batch, hidden).
void dynamic_quantize_lstm(InferenceContext& ctx) {
  for (size_t k = 0; k < 3; ++k) same_type(ctx, 0, k);
  const auto* x = shape_of(ctx, 0);
  if (!x) return;
  if (x->dim_size() != 3) fail_shape_inference("DynamicQuantizeLSTM: X must have rank 3");
  const int64_t hidden = int_attr(ctx, "hidden_size", -1);
  if (hidden <= 0 || hidden > kMaxRuleDim) fail_shape_inference("DynamicQuantizeLSTM: hidden_size must be positive");
  const std::string direction = onnx::getAttribute(ctx, "direction", std::string("forward"));
  const int64_t directions = direction == "bidirectional" ? 2 : 1;
  set_shape(ctx, 0, dims_of({x->dim(0), dim_value(directions), x->dim(1), dim_value(hidden)}));
  const auto state = dims_of({dim_value(directions), x->dim(1), dim_value(hidden)});
  set_shape(ctx, 1, state);
  set_shape(ctx, 2, state);
}

// GatherBlockQuantized: rows of a block-quantized table, dequantized to the scales' type. The gathered axis takes the
// indices' dims; a uint8 table packs 8 / bits values per byte along its last axis.
void gather_block_quantized(InferenceContext& ctx) {
  same_type(ctx, 2, 0);
  const auto* data = shape_of(ctx, 0);
  const auto* indices = shape_of(ctx, 1);
  if (!data || !indices) return;
  const int rank = data->dim_size();
  int64_t axis = int_attr(ctx, "gather_axis", 0);
  if (axis < -rank || axis >= rank) fail_shape_inference("GatherBlockQuantized: gather_axis out of range");
  if (axis < 0) axis += rank;
  const int64_t bits = int_attr(ctx, "bits", 4);
  if (bits != 4 && bits != 8) fail_shape_inference("GatherBlockQuantized: bits must be 4 or 8");
  const bool packed = ctx.getInputType(0)->tensor_type().elem_type() == onnx::TensorProto::UINT8;
  if (packed && (axis != 0 || int_attr(ctx, "quantize_axis", 1) != rank - 1))
    fail_shape_inference("GatherBlockQuantized: a uint8 table is gathered on axis 0 and quantized on its last axis");
  const int64_t components = packed ? 8 / bits : 1;
  TensorShapeProto out;
  for (int i = 0; i < rank; ++i) {
    if (i == axis) {
      for (const auto& d : indices->dim()) *out.add_dim() = d;
      continue;
    }
    if (i == rank - 1 && components > 1) {
      const int64_t v = known(data->dim(i));
      *out.add_dim() = v >= 0 && v <= kMaxRuleDim ? dim_value(v * components) : TensorShapeProto::Dimension();
    } else {
      *out.add_dim() = data->dim(i);
    }
  }
  set_shape(ctx, 0, out);
}

// A rank-4 key/value cache input's shape on a present output (buffers shared between past and present).
void present_like_past(InferenceContext& ctx, size_t past, size_t present) {
  if (const auto* p = shape_of(ctx, past)) {
    if (p->dim_size() != 4) fail_shape_inference("the past key and value must have rank 4");
    set_shape(ctx, present, *p);
  }
}

// DecoderMaskedMultiHeadAttention (one decoding step): query (B, 1, width) with key and value, or packed QKV;
// output (B, 1, v width); present key and value share the past buffers (B, heads, max length, head).
void decoder_masked_mha(InferenceContext& ctx) {
  for (size_t k = 0; k < 3; ++k) same_type(ctx, 0, k);
  const auto* q = shape_of(ctx, 0);
  if (!q) return;
  if (q->dim_size() != 3) fail_shape_inference("DecoderMaskedMultiHeadAttention: query must have rank 3");
  const auto* v = shape_of(ctx, 2);
  TensorShapeProto::Dimension width;
  if (v && v->dim_size() == 3) {
    width = v->dim(2);
  } else if (!has_type(ctx, 1)) {
    const int64_t packed = known(q->dim(2));
    if (packed >= 0 && packed % 3 == 0) width = dim_value(packed / 3);
  } else if (v && v->dim_size() == 4) {  // cross attention: value (B, heads, L, head)
    width = width_of(known(v->dim(1)), known(v->dim(3)));
  }
  set_shape(ctx, 0, dims_of({q->dim(0), q->dim(1), width}));
  present_like_past(ctx, 5, 1);
  present_like_past(ctx, 6, 2);
}

// SparseAttention: query (B, S, heads * head) or packed QKV; output (B, S, heads * head); present key and value
// share the past buffers (B, kv heads, max length, head).
void sparse_attention(InferenceContext& ctx) {
  for (size_t k = 0; k < 3; ++k) same_type(ctx, 0, k);
  const auto* q = shape_of(ctx, 0);
  if (!q) return;
  if (q->dim_size() != 3) fail_shape_inference("SparseAttention: query must have rank 3");
  const int64_t heads = int_attr(ctx, "num_heads", 0), kv_heads = int_attr(ctx, "kv_num_heads", 0);
  if (heads <= 0 || kv_heads <= 0 || heads > kMaxRuleDim || kv_heads > kMaxRuleDim)
    fail_shape_inference("SparseAttention: num_heads and kv_num_heads must be positive");
  const int64_t width = known(q->dim(2));
  const bool packed = !has_type(ctx, 1);
  const int64_t head = width < 0 ? -1 : width / (packed ? heads + 2 * kv_heads : heads);
  set_shape(ctx, 0, dims_of({q->dim(0), q->dim(1), width_of(heads, head)}));
  present_like_past(ctx, 3, 1);
  present_like_past(ctx, 4, 2);
}

// CropAndResize: one (C, crop height, crop width) crop per region of interest: (rois, C, h, w).
void crop_and_resize(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* x = shape_of(ctx, 0);
  const auto* rois = shape_of(ctx, 1);
  if (!x || !rois) return;
  if (x->dim_size() != 4 || rois->dim_size() != 2) fail_shape_inference("CropAndResize: X rank 4, rois rank 2");
  const auto crop = int_values(ctx, 3);
  TensorShapeProto::Dimension h, w;
  if (crop && crop->size() == 2) {
    if ((*crop)[0] <= 0 || (*crop)[1] <= 0) fail_shape_inference("CropAndResize: crop_size must be positive");
    h = dim_value((*crop)[0]);
    w = dim_value((*crop)[1]);
  }
  set_shape(ctx, 0, dims_of({rois->dim(0), x->dim(1), h, w}));
}

// UnfoldTensor: windows of `size` every `step` along `dim`: that dim becomes the window count, `size` appended.
void unfold_tensor(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* in = shape_of(ctx, 0);
  if (!in) return;
  const int rank = in->dim_size();
  int64_t dim = int_attr(ctx, "dim", -1);
  const int64_t size = int_attr(ctx, "size", 0), step = int_attr(ctx, "step", 1);
  if (dim < -rank || dim >= rank) fail_shape_inference("UnfoldTensor: dim out of range");
  if (dim < 0) dim += rank;
  if (size <= 0 || step <= 0 || size > kMaxRuleDim || step > kMaxRuleDim)
    fail_shape_inference("UnfoldTensor: size and step must be positive");
  TensorShapeProto out = *in;
  const int64_t n = known(in->dim(static_cast<int>(dim)));
  out.mutable_dim(static_cast<int>(dim))->Clear();
  if (n >= 0 && n <= kMaxRuleDim) {
    if (n < size) fail_shape_inference("UnfoldTensor: size exceeds the dim");
    out.mutable_dim(static_cast<int>(dim))->set_dim_value((n - size) / step + 1);
  }
  out.add_dim()->set_dim_value(size);
  set_shape(ctx, 0, out);
}

// Crop (ONNX, opset 1): border (left, top, right, bottom) cut off, or a scale (height, width) crop from (top, left).
void crop(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* x = shape_of(ctx, 0);
  if (!x) return;
  if (x->dim_size() != 4) fail_shape_inference("Crop: input must have rank 4");
  std::vector<int64_t> border, scale;
  onnx::getRepeatedAttribute(ctx, "border", border);
  onnx::getRepeatedAttribute(ctx, "scale", scale);
  if (border.size() != 4) fail_shape_inference("Crop: border must have 4 values");
  for (int64_t b : border)
    if (b < 0 || b > kMaxRuleDim) fail_shape_inference("Crop: invalid border");
  TensorShapeProto out = dims_of({x->dim(0), x->dim(1)});
  if (!scale.empty()) {
    if (scale.size() != 2 || scale[0] <= 0 || scale[1] <= 0 || scale[0] > kMaxRuleDim || scale[1] > kMaxRuleDim)
      fail_shape_inference("Crop: scale must have 2 positive values");
    *out.add_dim() = dim_value(scale[0]);
    *out.add_dim() = dim_value(scale[1]);
  } else {
    *out.add_dim() = sum_dims(x->dim(2), -border[1] - border[3]);
    *out.add_dim() = sum_dims(x->dim(3), -border[0] - border[2]);
  }
  set_shape(ctx, 0, out);
}

// BiasSplitGelu (diffusion models): X (N, S, 2 D) plus bias, split in halves, one gating the other: (N, S, D).
void bias_split_gelu(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* x = shape_of(ctx, 0);
  if (!x) return;
  if (x->dim_size() != 3) fail_shape_inference("BiasSplitGelu: X must have rank 3");
  const int64_t d = known(x->dim(2));
  if (d >= 0 && d % 2 != 0) fail_shape_inference("BiasSplitGelu: the last dim must be even");
  set_shape(ctx, 0, dims_of({x->dim(0), x->dim(1), dim_value(d < 0 ? -1 : d / 2)}));
}

// NhwcConv (CUDA, diffusion models): X (N, H, W, C) and weight (M, kH, kW, C / group): (N, Ho, Wo, M).
void nhwc_conv(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  channels_last_conv(ctx, 0, 1, 1);
}

// RelativePositionBias (T5): a table (buckets, heads) and constant query and key lengths: (1, heads, q, k).
void relative_position_bias(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* table = shape_of(ctx, 0);
  if (!table) return;
  if (table->dim_size() != 2) fail_shape_inference("RelativePositionBias: bias_table must have rank 2");
  const int64_t q = scalar_input(ctx, 1), k = scalar_input(ctx, 2);
  set_shape(ctx, 0, dims_of({dim_value(1), table->dim(1), dim_value(q), dim_value(k)}));
}

// GatedRelativePositionBias: query (B, S, heads * head) and rel_pos (1, heads, S, S): (B, heads, S, S).
void gated_relative_position_bias(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* q = shape_of(ctx, 0);
  const auto* rel = shape_of(ctx, 2);
  if (!q || !rel) return;
  if (rel->dim_size() != 4) fail_shape_inference("GatedRelativePositionBias: rel_pos must have rank 4");
  const auto* offsets = shape_of(ctx, 6);
  const auto& batch = offsets && offsets->dim_size() == 2 ? offsets->dim(0) : q->dim(0);
  set_shape(ctx, 0, dims_of({batch, rel->dim(1), rel->dim(2), rel->dim(3)}));
}

// RestorePadding: packed tokens (T, hidden) back to (B, S, hidden) by token_offset (B, S).
void restore_padding(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* in = shape_of(ctx, 0);
  const auto* offsets = shape_of(ctx, 1);
  if (!in || !offsets) return;
  if (in->dim_size() != 2 || offsets->dim_size() != 2)
    fail_shape_inference("RestorePadding: input and token_offset must have rank 2");
  set_shape(ctx, 0, dims_of({offsets->dim(0), offsets->dim(1), in->dim(1)}));
}

// RemovePadding: (B, S, hidden) to its real tokens (T, hidden), T known only at run time; token_offset (B, S),
// cumulated_seq_len (B + 1), max_seq_len (1), all int32.
void remove_padding(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  for (size_t k = 1; k < 4; ++k) set_elem_type(ctx, k, onnx::TensorProto::INT32);
  const auto* in = shape_of(ctx, 0);
  if (!in) return;
  if (in->dim_size() != 3) fail_shape_inference("RemovePadding: input must have rank 3");
  set_shape(ctx, 0, dims_of({TensorShapeProto::Dimension(), in->dim(2)}));
  set_shape(ctx, 1, dims_of({in->dim(0), in->dim(1)}));
  set_shape(ctx, 2, dims_of({sum_dims(in->dim(0), 1)}));
  set_shape(ctx, 3, dims_of({dim_value(1)}));
}

// PackedAttention: packed tokens (T, input hidden) with weights (input hidden, q + k + v): (T, v).
void packed_attention(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* in = shape_of(ctx, 0);
  if (!in) return;
  if (in->dim_size() != 2) fail_shape_inference("PackedAttention: input must have rank 2");
  std::vector<int64_t> qkv;
  onnx::getRepeatedAttribute(ctx, "qkv_hidden_sizes", qkv);
  if (!qkv.empty() && qkv.size() != 3) fail_shape_inference("PackedAttention: qkv_hidden_sizes needs 3 values");
  int64_t v = qkv.empty() ? -1 : qkv[2];
  if (qkv.empty())
    if (const auto* bias = shape_of(ctx, 2); bias && bias->dim_size() == 1 && known(bias->dim(0)) >= 0)
      v = known(bias->dim(0)) / 3;
  set_shape(ctx, 0, dims_of({in->dim(0), dim_value(v)}));
}

// PackedMultiHeadAttention: query (T, width) with key and value, or packed QKV (T, heads, 3, head): (T, v width).
void packed_multi_head_attention(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  const auto* q = shape_of(ctx, 0);
  if (!q) return;
  TensorShapeProto::Dimension width;
  if (q->dim_size() == 4) {
    width = width_of(known(q->dim(1)), known(q->dim(3)));
  } else if (q->dim_size() == 2) {
    const auto* v = shape_of(ctx, 2);
    width = v && v->dim_size() == 2 ? v->dim(1) : q->dim(1);
  } else {
    fail_shape_inference("PackedMultiHeadAttention: query must have rank 2 or 4");
  }
  set_shape(ctx, 0, dims_of({q->dim(0), width}));
}

// DecoderMaskedSelfAttention: input (B, 1, hidden) with weights (hidden, 3 hidden): output (B, 1, hidden); present
// shares the past buffer (2, B, heads, max length, head).
void decoder_masked_self_attention(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  same_type(ctx, 0, 1);
  const auto* in = shape_of(ctx, 0);
  if (!in) return;
  if (in->dim_size() != 3) fail_shape_inference("DecoderMaskedSelfAttention: input must have rank 3");
  int64_t v = -1;
  if (const auto* w = shape_of(ctx, 1); w && w->dim_size() == 2 && known(w->dim(1)) >= 0) v = known(w->dim(1)) / 3;
  set_shape(ctx, 0, dims_of({in->dim(0), in->dim(1), dim_value(v)}));
  if (const auto* past = shape_of(ctx, 4)) {
    if (past->dim_size() != 5) fail_shape_inference("DecoderMaskedSelfAttention: past must have rank 5");
    set_shape(ctx, 1, *past);
  }
}

// SkipGroupNorm: Y and the optional sum S like X.
void skip_group_norm(InferenceContext& ctx) {
  like_input(ctx, 0, 0);
  like_input(ctx, 0, 1);
}

void elementwise(InferenceContext& ctx) {
  like_input(ctx, 0, 0);
}

}  // namespace

void register_more_ops() {
  // The CPU provider's kernels.
  const std::vector<Attr> matmul_attrs = {
      {"alpha", FLOAT}, {"transA", INT}, {"transB", INT}, {"transBatchA", INT}, {"transBatchB", INT}};
  add(kMs, "TransposeMatMul", 1, {"A", "B"}, {"Y"}, matmul_attrs, fused_matmul);
  add(kMs, "GatherND", 1, {"data", "indices"}, {"output"}, {}, gather_nd);
  add(kMs, "Range", 1, {"start", "limit", "delta?"}, {"Y"}, {}, range);
  add(kMs, "Pad", 1, {"data", "pads", "value?"}, {"output"}, {{"mode", STRING}}, pad);
  add(kMs, "ExpandDims", 1, {"X", "axis"}, {"Y"}, {}, expand_dims);
  add(kMs, "Trilu", 1, {"X", "k?"}, {"Y"}, {{"upper", INT}}, elementwise);
  add(kMs, "Inverse", 1, {"X"}, {"Y"}, {}, elementwise);
  add(kMs, "SampleOp", 1, {"X"}, {"Y"}, {}, elementwise);
  add(kMs, "MurmurHash3", 1, {"X"}, {"Y"}, {{"seed", INT}, {"positive", INT}}, murmur_hash3);
  add(kMs, "CDist", 1, {"A", "B"}, {"C"}, {{"metric", STRING}}, cdist);
  add(kMs, "GridSample", 1, {"X", "Grid"}, {"Y"}, {{"align_corners", INT}, {"mode", STRING}, {"padding_mode", STRING}},
      grid_sample);
  add(kMs, "NGramRepeatBlock", 1, {"input_ids", "scores"}, {"scores_out"}, {{"ngram_size", INT}},
      [](InferenceContext& ctx) { like_input(ctx, 1, 0); });
  add(kMs, "CropAndResize", 1, {"X", "rois", "batch_indices", "crop_size"}, {"Y"},
      {{"mode", STRING}, {"extrapolation_value", FLOAT}}, crop_and_resize);
  add(kMs, "UnfoldTensor", 1, {"input"}, {"output"}, {{"dim", INT}, {"size", INT}, {"step", INT}}, unfold_tensor);
  add(kMs, "MatMulBnb4", 1, {"A", "B", "absmax"}, {"Y"},
      {{"K", INT}, {"N", INT}, {"block_size", INT}, {"quant_type", INT}}, matmul_nbits);
  add(kMs, "GatherBlockQuantized", 1, {"data", "indices", "scales", "zero_points?"}, {"output"},
      {{"gather_axis", INT}, {"quantize_axis", INT}, {"block_size", INT}, {"bits", INT}}, gather_block_quantized);
  add(kMs, "DecoderMaskedMultiHeadAttention", 1,
      {"query", "key?", "value?", "mask_index?", "attention_bias?", "past_key?", "past_value?", "past_sequence_length?",
       "beam_width?", "cache_indirection?", "bias?"},
      {"output", "present_key?", "present_value?", "qk?"},
      {{"num_heads", INT}, {"past_present_share_buffer", INT}, {"output_qk", INT}}, decoder_masked_mha);
  add(kMs, "SparseAttention", 1,
      {"query", "key?", "value?", "past_key", "past_value", "block_row_indices", "block_col_indices",
       "total_sequence_length", "key_total_sequence_lengths", "cos_cache?", "sin_cache?"},
      {"output", "present_key", "present_value"},
      {{"num_heads", INT}, {"kv_num_heads", INT}, {"sparse_block_size", INT}, {"do_rotary", INT}}, sparse_attention);

  // Quantization (CPU).
  add(kMs, "QLinearWhere", 1,
      {"condition", "X", "x_scale", "x_zero_point", "Y", "y_scale", "y_zero_point", "z_scale", "z_zero_point"}, {"Z"},
      {}, qlinear_where);
  add(kMs, "QLinearConv", 1,
      {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point", "B?"}, {"y"},
      {{"auto_pad", STRING},
       {"kernel_shape", INTS},
       {"dilations", INTS},
       {"strides", INTS},
       {"pads", INTS},
       {"group", INT},
       {"channels_last", INT}},
      qlinear_conv);
  add(kMs, "NhwcMaxPool", 1, {"x"}, {"y"},
      {{"auto_pad", STRING},
       {"kernel_shape", INTS},
       {"dilations", INTS},
       {"strides", INTS},
       {"pads", INTS},
       {"ceil_mode", INT}},
      nhwc_max_pool);
  add(kMs, "MatMulInteger16", 1, {"A", "B"}, {"Y"}, {}, matmul_integer16);
  add(kMs, "QAttention", 1,
      {"input", "weight", "bias", "input_scale", "weight_scale", "mask_index?", "input_zero_point?",
       "weight_zero_point?", "past?"},
      {"output", "present?"}, {{"num_heads", INT}, {"unidirectional", INT}},
      [](InferenceContext& ctx) { attention_rule(ctx, 2, 8); });
  add(kMs, "QEmbedLayerNormalization", 1,
      {"input_ids", "segment_ids?", "word_embedding_quant", "position_embedding_quant", "segment_embedding?",
       "gamma_quant", "beta_quant", "mask?", "word_embedding_scale", "position_embedding_scale",
       "segment_embedding_scale?", "gamma_scale", "beta_scale", "word_embedding_zero_point",
       "position_embedding_zero_point", "segment_embedding_zero_point?", "gamma_zero_point", "beta_zero_point"},
      {"layernorm_out", "mask_index_out"}, {{"epsilon", FLOAT}}, qembed_layer_normalization);
  add(kMs, "DynamicQuantizeLSTM", 1,
      {"X", "W", "R", "B?", "sequence_lens?", "initial_h?", "initial_c?", "P?", "W_scale", "W_zero_point", "R_scale",
       "R_zero_point"},
      {"Y?", "Y_h?", "Y_c?"}, {{"hidden_size", INT}, {"direction", STRING}}, dynamic_quantize_lstm);

  // The CUDA provider's ops of the transformer optimizer and the diffusion models.
  add(kMs, "BiasSoftmax", 1, {"data", "bias"}, {"output"}, {{"axis", INT}, {"is_inner_broadcast", INT}}, elementwise);
  add(kMs, "BiasAdd", 1, {"X", "bias", "skip"}, {"Y"}, {}, elementwise);
  add(kMs, "BiasSplitGelu", 1, {"X", "bias"}, {"Y"}, {}, bias_split_gelu);
  add(kMs, "GroupNorm", 1, {"X", "gamma", "beta"}, {"Y"},
      {{"epsilon", FLOAT}, {"groups", INT}, {"activation", INT}, {"channels_last", INT}}, elementwise);
  add(kMs, "SkipGroupNorm", 1, {"X", "gamma", "beta", "skip", "bias?"}, {"Y", "S?"},
      {{"epsilon", FLOAT}, {"groups", INT}, {"activation", INT}, {"channels_last", INT}}, skip_group_norm);
  add(kMs, "NhwcConv", 1, {"X", "W", "B?"}, {"Y"},
      {{"auto_pad", STRING},
       {"kernel_shape", INTS},
       {"dilations", INTS},
       {"strides", INTS},
       {"pads", INTS},
       {"group", INT}},
      nhwc_conv);
  add(kMs, "GemmFastGelu", 1, {"X", "W", "bias?"}, {"Y"}, {}, [](InferenceContext& ctx) {
    same_type(ctx, 0, 0);
    matmul_shape(ctx, 0, 1, false, false, false, false);
  });
  add(kMs, "RelativePositionBias", 1, {"bias_table", "query_length", "key_length"}, {"output"},
      {{"max_distance", INT}, {"is_bidirectional", INT}}, relative_position_bias);
  add(kMs, "GatedRelativePositionBias", 1,
      {"query_layer", "query_bias", "rel_pos", "weight", "bias", "eco_a", "token_offset?"}, {"output"},
      {{"num_heads", INT}}, gated_relative_position_bias);
  add(kMs, "RemovePadding", 1, {"input", "sequence_token_count"},
      {"output", "token_offset", "cumulated_seq_len", "max_seq_len"}, {}, remove_padding);
  add(kMs, "RestorePadding", 1, {"input", "token_offset"}, {"output"}, {}, restore_padding);
  add(kMs, "PackedAttention", 1,
      {"input", "weights", "bias", "token_offset", "cumulative_sequence_length", "attention_bias?"}, {"output"},
      {{"num_heads", INT}, {"qkv_hidden_sizes", INTS}}, packed_attention);
  add(kMs, "PackedMultiHeadAttention", 1,
      {"query", "key?", "value?", "bias?", "token_offset", "cumulative_sequence_length", "attention_bias?"}, {"output"},
      {{"num_heads", INT}}, packed_multi_head_attention);
  add(kMs, "DecoderMaskedSelfAttention", 1,
      {"input", "weights", "bias", "mask_index?", "past", "attention_bias?", "past_sequence_length", "beam_width?",
       "cache_indirection?"},
      {"output", "present"}, {{"num_heads", INT}, {"past_present_share_buffer", INT}}, decoder_masked_self_attention);
  add(kMs, "LongformerAttention", 1, {"input", "weight", "bias", "mask", "global_weight", "global_bias", "global"},
      {"output"}, {{"num_heads", INT}, {"window", INT}}, elementwise);
  add(kMs, "ComplexMul", 1, {"A", "B"}, {"C"}, {}, [](InferenceContext& ctx) { broadcast_pair(ctx, 0, 1); });
  add(kMs, "ComplexMulConj", 1, {"A", "B"}, {"C"}, {}, [](InferenceContext& ctx) { broadcast_pair(ctx, 0, 1); });
  add(kMs, "MoE", 1,
      {"input", "router_probs", "fc1_experts_weights", "fc1_experts_bias?", "fc2_experts_weights", "fc2_experts_bias?",
       "fc3_experts_weights?", "fc3_experts_bias?"},
      {"output"}, {{"k", INT}, {"activation_type", STRING}}, elementwise);

  // ONNX-domain ops that ONNX removed and ORT keeps at opset 1 (models of old converters): element-wise ones, Crop.
  for (const char* op : {"Affine", "ImageScaler", "ParametricSoftplus", "ScaledTanh", "Scale"})
    add("", op, 1, {"X"}, {"Y"}, {}, elementwise);
  add("", "MeanVarianceNormalization", 1, {"X"}, {"Y"}, {{"across_channels", INT}, {"normalize_variance", INT}},
      elementwise);
  add("", "ThresholdedRelu", 1, {"X"}, {"Y"}, {{"alpha", FLOAT}}, elementwise);
  add("", "Crop", 1, {"X"}, {"Y"}, {{"border", INTS}, {"scale", INTS}}, crop);
}

}  // namespace memplan::onnx_io::contrib
