// Shape rules for ONNX Runtime's contrib operators, written from ORT's schemas and kernels (contrib_defs.cc,
// bert_defs.cc, nchwc_schema_defs.cc and the CPU kernels) and checked against ORT 1.30 running each op. Where ORT's
// own schema infers less than its kernel produces (Attention's present without a past input, the normalization
// statistics), the rule gives the kernel's shape: memplan sizes what ORT allocates.
#include "contrib_schemas.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "contrib_support.h"
#include "tensor_proto.h"

namespace onnx {
// libonnx's own Conv/Pool and global-pool shape rules (exported by libonnx, not declared in its headers).
void convPoolShapeInference(InferenceContext& ctx, bool use_dilation, bool require_kernel_shape, int input1Idx,
                            int input2Idx);
void globalPoolTypeShapeInference(InferenceContext& ctx);
}  // namespace onnx

namespace memplan::onnx_io {

namespace contrib {

namespace {
std::atomic<int> g_nchwc_block{16};
}  // namespace

bool has_type(InferenceContext& ctx, size_t input) {
  return input < ctx.getNumInputs() && ctx.getInputType(input) != nullptr;
}

// The element type of input `from` on output `to`, when both exist.
void same_type(InferenceContext& ctx, size_t from, size_t to) {
  if (has_type(ctx, from) && to < ctx.getNumOutputs()) onnx::propagateElemTypeFromInputToOutput(ctx, from, to);
}

bool has_shape(InferenceContext& ctx, size_t input) {
  return has_type(ctx, input) && onnx::hasInputShape(ctx, input);
}

void set_shape(InferenceContext& ctx, size_t output, const TensorShapeProto& shape) {
  if (output < ctx.getNumOutputs() && ctx.getOutputType(output) != nullptr) onnx::updateOutputShape(ctx, output, shape);
}

// Output `to` has input `from`'s type and shape (element-wise ops).
void like_input(InferenceContext& ctx, size_t from, size_t to) {
  same_type(ctx, from, to);
  if (has_shape(ctx, from)) set_shape(ctx, to, onnx::getInputShape(ctx, from));
}

int64_t int_attr(InferenceContext& ctx, const char* name, int64_t fallback) {
  return onnx::getAttribute(ctx, name, fallback);
}

// `shape` with every dim from `axis` on replaced by 1 (the per-row statistics of a normalization).
TensorShapeProto reduced_from(const TensorShapeProto& shape, int64_t axis) {
  const int rank = shape.dim_size();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) fail_shape_inference("axis ", axis, " is out of range for rank ", rank);
  TensorShapeProto out;
  for (int i = 0; i < rank; ++i) {
    if (i < axis)
      *out.add_dim() = shape.dim(i);
    else
      out.add_dim()->set_dim_value(1);
  }
  return out;
}

// Normalizations over the trailing dims from `axis`: output 0 like input 0, statistics outputs (from `first_stat`
// to `last_stat`) reduced, output `sum_output` (when >= 0) like input 0 too.
void normalization(InferenceContext& ctx, int64_t axis, size_t first_stat, size_t last_stat, int sum_output) {
  like_input(ctx, 0, 0);
  for (size_t k = first_stat; k <= last_stat && k < ctx.getNumOutputs(); ++k) {
    // ORT computes the statistics in float for float16/bfloat16 inputs (stash_type); float inputs stay float.
    same_type(ctx, 0, k);
    if (has_shape(ctx, 0)) set_shape(ctx, k, reduced_from(onnx::getInputShape(ctx, 0), axis));
  }
  if (sum_output >= 0) like_input(ctx, 0, static_cast<size_t>(sum_output));
}

// Output 0 of a MatMul of inputs `a_input` and `b_input`, with optional transposes of the matrix dims and of the
// batch dims (the first dim moves behind the batch dims), as FusedMatMul defines them.
void matmul_shape(InferenceContext& ctx, size_t a_input, size_t b_input, bool trans_a, bool trans_b, bool trans_batch_a,
                  bool trans_batch_b) {
  if (!has_shape(ctx, a_input) || !has_shape(ctx, b_input)) return;
  const auto& a_raw = onnx::getInputShape(ctx, a_input);
  const auto& b_raw = onnx::getInputShape(ctx, b_input);
  if (a_raw.dim_size() == 0 || b_raw.dim_size() == 0) fail_shape_inference("MatMul inputs must not be scalars");
  auto arrange = [](const TensorShapeProto& raw, bool trans, bool trans_batch) {
    const int rank = raw.dim_size();
    if (rank == 1) return raw;
    TensorShapeProto s;
    for (int i = trans_batch ? 1 : 0; i < (trans_batch ? rank - 1 : rank - 2); ++i) *s.add_dim() = raw.dim(i);
    const int row = trans_batch ? 0 : rank - 2, col = rank - 1;
    *s.add_dim() = raw.dim(trans ? col : row);
    *s.add_dim() = raw.dim(trans ? row : col);
    return s;
  };
  const TensorShapeProto a = arrange(a_raw, trans_a, trans_batch_a);
  const TensorShapeProto b = arrange(b_raw, trans_b, trans_batch_b);
  TensorShapeProto left, right;
  if (a.dim_size() == 1) left.add_dim()->set_dim_value(1);
  for (const auto& d : a.dim()) *left.add_dim() = d;
  for (const auto& d : b.dim()) *right.add_dim() = d;
  if (b.dim_size() == 1) right.add_dim()->set_dim_value(1);
  const auto& inner_l = left.dim(left.dim_size() - 1);
  const auto& inner_r = right.dim(right.dim_size() - 2);
  if (inner_l.has_dim_value() && inner_r.has_dim_value() && inner_l.dim_value() != inner_r.dim_value())
    fail_shape_inference("MatMul: inner dimensions ", inner_l.dim_value(), " and ", inner_r.dim_value(), " differ");
  TensorShapeProto prefix_l, prefix_r, out;
  for (int i = 0; i + 2 < left.dim_size(); ++i) *prefix_l.add_dim() = left.dim(i);
  for (int i = 0; i + 2 < right.dim_size(); ++i) *prefix_r.add_dim() = right.dim(i);
  onnx::bidirectionalBroadcastShapeInference(prefix_l, prefix_r, out);
  if (a.dim_size() != 1) *out.add_dim() = left.dim(left.dim_size() - 2);
  if (b.dim_size() != 1) *out.add_dim() = right.dim(right.dim_size() - 1);
  set_shape(ctx, 0, out);
}

void fused_matmul(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  matmul_shape(ctx, 0, 1, int_attr(ctx, "transA", 0) != 0, int_attr(ctx, "transB", 0) != 0,
               int_attr(ctx, "transBatchA", 0) != 0, int_attr(ctx, "transBatchB", 0) != 0);
}

// Output 0 of a Gemm of inputs `a_input` and `b_input` (transA, transB): [M, N].
void gemm_shape(InferenceContext& ctx, size_t a_input, size_t b_input) {
  if (!has_shape(ctx, a_input) || !has_shape(ctx, b_input)) return;
  const auto& a = onnx::getInputShape(ctx, a_input);
  const auto& b = onnx::getInputShape(ctx, b_input);
  if (a.dim_size() != 2 || b.dim_size() != 2) fail_shape_inference("Gemm inputs must have rank 2");
  TensorShapeProto out;
  *out.add_dim() = a.dim(int_attr(ctx, "transA", 0) != 0 ? 1 : 0);
  *out.add_dim() = b.dim(int_attr(ctx, "transB", 0) != 0 ? 0 : 1);
  set_shape(ctx, 0, out);
}

// FusedGemm: Gemm with an activation.
void fused_gemm(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  gemm_shape(ctx, 0, 1);
}

// Attention (BERT's fused self-attention): input (B, S, hidden), weights (hidden, q + k + v); output (B, S, v);
// present (2, B, heads, past + S, head) - with a past input its dims, the sequence grown by S; without one, the
// head size from the q width (ORT's schema leaves that case unknown; its kernel allocates this).
void attention_rule(InferenceContext& ctx, size_t typed_input, size_t past_input) {
  const size_t typed = has_type(ctx, typed_input) ? typed_input : 0;
  same_type(ctx, typed, 0);
  same_type(ctx, typed, 1);
  if (!has_shape(ctx, 0)) return;
  const auto& input = onnx::getInputShape(ctx, 0);
  if (input.dim_size() != 3) fail_shape_inference("Attention: input 0 must have rank 3");
  std::vector<int64_t> qkv;
  onnx::getRepeatedAttribute(ctx, "qkv_hidden_sizes", qkv);
  if (!qkv.empty() && qkv.size() != 3) fail_shape_inference("Attention: qkv_hidden_sizes must have 3 elements");
  int64_t total = -1;  // q + k + v widths
  if (has_shape(ctx, 2) && onnx::getInputShape(ctx, 2).dim_size() == 1 &&
      onnx::getInputShape(ctx, 2).dim(0).has_dim_value())
    total = onnx::getInputShape(ctx, 2).dim(0).dim_value();
  else if (has_shape(ctx, 1) && onnx::getInputShape(ctx, 1).dim_size() == 2 &&
           onnx::getInputShape(ctx, 1).dim(1).has_dim_value())
    total = onnx::getInputShape(ctx, 1).dim(1).dim_value();
  const int64_t q_width = qkv.empty() ? (total >= 0 ? total / 3 : -1) : qkv[0];
  const int64_t v_width = qkv.empty() ? q_width : qkv[2];
  TensorShapeProto out;
  *out.add_dim() = input.dim(0);
  *out.add_dim() = input.dim(1);
  if (v_width >= 0)
    out.add_dim()->set_dim_value(v_width);
  else
    out.add_dim();
  set_shape(ctx, 0, out);
  if (ctx.getNumOutputs() < 2) return;
  if (has_shape(ctx, past_input)) {
    const auto& past = onnx::getInputShape(ctx, past_input);
    if (past.dim_size() != 5) fail_shape_inference("Attention: the past input must have rank 5");
    TensorShapeProto present = past;
    if (int_attr(ctx, "past_present_share_buffer", 0) == 0) {
      auto* seq = present.mutable_dim(3);
      if (input.dim(1).has_dim_value() && past.dim(3).has_dim_value())
        seq->set_dim_value(input.dim(1).dim_value() + past.dim(3).dim_value());
      else
        seq->Clear();
    }
    set_shape(ctx, 1, present);
    return;
  }
  if (has_type(ctx, past_input)) return;  // a past input of unknown shape
  const int64_t heads = int_attr(ctx, "num_heads", 0);
  if (heads <= 0 || q_width < 0 || q_width % heads != 0) return;
  TensorShapeProto present;
  present.add_dim()->set_dim_value(2);
  *present.add_dim() = input.dim(0);
  present.add_dim()->set_dim_value(heads);
  *present.add_dim() = input.dim(1);
  present.add_dim()->set_dim_value(q_width / heads);
  set_shape(ctx, 1, present);
}

void attention(InferenceContext& ctx) {
  attention_rule(ctx, 2, 4);
}

// A dim's value when known and positive, else -1.
int64_t known(const TensorShapeProto::Dimension& d) {
  return d.has_dim_value() && d.dim_value() > 0 ? d.dim_value() : -1;
}

// The int32/int64 scalar an input holds when inference knows its data (an initializer or a folded constant).
int64_t scalar_input(InferenceContext& ctx, size_t input) {
  if (input >= ctx.getNumInputs()) return -1;
  const onnx::TensorProto* t = ctx.getInputData(input);
  if (t == nullptr || (t->data_type() != onnx::TensorProto::INT32 && t->data_type() != onnx::TensorProto::INT64))
    return -1;
  const auto value = read_tensor(*t, 1);
  return value && value->size() == 1 ? value->at_i(0) : -1;
}

TensorShapeProto dims_of(std::initializer_list<TensorShapeProto::Dimension> dims) {
  TensorShapeProto s;
  for (const auto& d : dims) *s.add_dim() = d;
  return s;
}

TensorShapeProto::Dimension dim_value(int64_t v) {
  TensorShapeProto::Dimension d;
  if (v >= 0) d.set_dim_value(v);
  return d;
}

// GroupQueryAttention (LLM decoders): query (B, S, heads * head) with key and value (B, S, kv_heads * head), or
// packed QKV (B, S, (heads + 2 kv_heads) * head); output (B, S, heads * head); present key and value (B, kv_heads,
// T, head) with T the larger of the past buffer's length and total_sequence_length (input 6) - or, without a past,
// total_sequence_length (the query's length when unknown).
void group_query_attention(InferenceContext& ctx) {
  for (size_t k = 0; k < 3; ++k) same_type(ctx, 0, k);
  if (!has_shape(ctx, 0)) return;
  const auto& q = onnx::getInputShape(ctx, 0);
  if (q.dim_size() != 3) fail_shape_inference("GroupQueryAttention: query must have rank 3");
  const int64_t heads = int_attr(ctx, "num_heads", 0), kv_heads = int_attr(ctx, "kv_num_heads", 0);
  if (heads <= 0 || kv_heads <= 0) fail_shape_inference("GroupQueryAttention: num_heads and kv_num_heads must be set");
  const int64_t width = known(q.dim(2));
  const bool packed = !has_type(ctx, 1);
  const int64_t head = width < 0 ? -1 : width / (packed ? heads + 2 * kv_heads : heads);
  set_shape(ctx, 0, dims_of({q.dim(0), q.dim(1), dim_value(head < 0 ? -1 : head * heads)}));
  if (ctx.getNumOutputs() < 3) return;
  const int64_t total = scalar_input(ctx, 6);
  if (has_shape(ctx, 3)) {
    const auto& past = onnx::getInputShape(ctx, 3);
    if (past.dim_size() != 4) fail_shape_inference("GroupQueryAttention: past_key must have rank 4");
    const int64_t past_len = known(past.dim(2));
    const int64_t t = past_len >= 0 && total >= 0 ? std::max(past_len, total) : -1;
    const TensorShapeProto present = dims_of({past.dim(0), past.dim(1), dim_value(t), past.dim(3)});
    set_shape(ctx, 1, present);
    set_shape(ctx, 2, present);
    return;
  }
  if (has_type(ctx, 3)) return;
  const TensorShapeProto present =
      dims_of({q.dim(0), dim_value(kv_heads), total > 0 ? dim_value(total) : q.dim(1), dim_value(head)});
  set_shape(ctx, 1, present);
  set_shape(ctx, 2, present);
}

// MultiHeadAttention with separate (B, L, width) key and value, or packed QKV in the query (B, S, heads, 3, head):
// output (B, S, v width); present key and value (B, heads, past + L, head).
void multi_head_attention(InferenceContext& ctx) {
  for (size_t k = 0; k < 3; ++k) same_type(ctx, 0, k);
  if (!has_shape(ctx, 0)) return;
  const auto& q = onnx::getInputShape(ctx, 0);
  const int64_t heads = int_attr(ctx, "num_heads", 0);
  if (heads <= 0) fail_shape_inference("MultiHeadAttention: num_heads must be set");
  TensorShapeProto::Dimension kv_len;
  int64_t k_head = -1, v_width = -1;
  if (q.dim_size() == 5) {  // packed QKV
    const int64_t head = known(q.dim(4));
    k_head = head;
    v_width = head < 0 ? -1 : head * heads;
    kv_len = q.dim(1);
  } else if (q.dim_size() == 3) {
    if (!has_shape(ctx, 1)) return;
    const auto& k = onnx::getInputShape(ctx, 1);
    if (k.dim_size() == 3 && has_shape(ctx, 2) && onnx::getInputShape(ctx, 2).dim_size() == 3) {
      kv_len = k.dim(1);
      const int64_t kw = known(k.dim(2)), vw = known(onnx::getInputShape(ctx, 2).dim(2));
      k_head = kw < 0 ? -1 : kw / heads;
      v_width = vw;
    } else if (k.dim_size() == 5) {  // packed KV: (B, L, heads, 2, head)
      kv_len = k.dim(1);
      k_head = known(k.dim(4));
      v_width = k_head < 0 ? -1 : k_head * heads;
    } else {
      return;  // key and value already in (B, heads, L, head): cross attention caches
    }
  } else {
    fail_shape_inference("MultiHeadAttention: query must have rank 3 or 5");
  }
  set_shape(ctx, 0, dims_of({q.dim(0), q.dim(1), dim_value(v_width)}));
  if (ctx.getNumOutputs() < 2) return;
  int64_t past_len = 0;
  if (has_shape(ctx, 6)) {
    const auto& past = onnx::getInputShape(ctx, 6);
    if (past.dim_size() != 4) fail_shape_inference("MultiHeadAttention: past_key must have rank 4");
    past_len = known(past.dim(2));
    if (past.dim(2).has_dim_value() && past.dim(2).dim_value() == 0) past_len = 0;
  } else if (has_type(ctx, 6)) {
    past_len = -1;
  }
  const int64_t l = known(kv_len);
  const int64_t total = past_len >= 0 && l >= 0 ? past_len + l : -1;
  const int64_t v_head = v_width < 0 ? -1 : v_width / heads;
  set_shape(ctx, 1,
            dims_of({q.dim(0), dim_value(heads), total >= 0 ? dim_value(total) : TensorShapeProto::Dimension(),
                     dim_value(k_head)}));
  set_shape(ctx, 2,
            dims_of({q.dim(0), dim_value(heads), total >= 0 ? dim_value(total) : TensorShapeProto::Dimension(),
                     dim_value(v_head)}));
}

// EmbedLayerNormalization (BERT's embeddings): input_ids (B, S); output and embedding_sum (B, S, hidden) with
// hidden from the word embedding (V, hidden); mask_index (B).
void embed_layer_normalization(InferenceContext& ctx) {
  same_type(ctx, 2, 0);
  if (ctx.getNumOutputs() > 1 && ctx.getOutputType(1) != nullptr)
    onnx::updateOutputElemType(ctx, 1, onnx::TensorProto::INT32);
  same_type(ctx, 2, 2);
  if (!has_shape(ctx, 0) || !has_shape(ctx, 2)) return;
  const auto& ids = onnx::getInputShape(ctx, 0);
  const auto& words = onnx::getInputShape(ctx, 2);
  if (ids.dim_size() != 2) fail_shape_inference("EmbedLayerNormalization: input_ids must have rank 2");
  if (words.dim_size() != 2) fail_shape_inference("EmbedLayerNormalization: word_embedding must have rank 2");
  const TensorShapeProto out = dims_of({ids.dim(0), ids.dim(1), words.dim(1)});
  set_shape(ctx, 0, out);
  set_shape(ctx, 1, dims_of({ids.dim(0)}));
  set_shape(ctx, 2, out);
}

// MatMulNBits: A (..., K) times a block-quantized B of N columns: (..., N).
void matmul_nbits(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  if (!has_shape(ctx, 0)) return;
  const auto& a = onnx::getInputShape(ctx, 0);
  if (a.dim_size() < 1) fail_shape_inference("MatMulNBits: input A must have rank 1 or more");
  const int64_t n = int_attr(ctx, "N", 0);
  if (n <= 0) fail_shape_inference("MatMulNBits: attribute N must be positive");
  TensorShapeProto out;
  for (int i = 0; i + 1 < a.dim_size(); ++i) *out.add_dim() = a.dim(i);
  out.add_dim()->set_dim_value(n);
  set_shape(ctx, 0, out);
}

// The quantized ops of ORT's quantization tools. Output 0 is a broadcast of inputs `a` and `b` (QLinearAdd/Mul).
void broadcast_pair(InferenceContext& ctx, size_t a, size_t b) {
  same_type(ctx, a, 0);
  if (!has_shape(ctx, a) || !has_shape(ctx, b)) return;
  TensorShapeProto out;
  onnx::bidirectionalBroadcastShapeInference(onnx::getInputShape(ctx, a), onnx::getInputShape(ctx, b), out);
  set_shape(ctx, 0, out);
}

// QLinearConcat: inputs after (Y_scale, Y_zero_point) come in triples (X, scale, zero point).
void qlinear_concat(InferenceContext& ctx) {
  same_type(ctx, 2, 0);
  const size_t n = ctx.getNumInputs();
  if (n < 5 || (n - 2) % 3 != 0)
    fail_shape_inference("QLinearConcat: inputs must be Y_scale, Y_zero_point, then triples");
  std::vector<const TensorShapeProto*> parts;
  for (size_t i = 2; i < n; i += 3) {
    if (!has_shape(ctx, i)) return;
    parts.push_back(&onnx::getInputShape(ctx, i));
  }
  const int rank = parts[0]->dim_size();
  int64_t axis = int_attr(ctx, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) fail_shape_inference("QLinearConcat: axis out of range");
  TensorShapeProto out = *parts[0];
  int64_t sum = 0;
  for (const auto* p : parts) {
    if (p->dim_size() != rank) fail_shape_inference("QLinearConcat: inputs of different ranks");
    const int64_t d = p->dim(static_cast<int>(axis)).has_dim_value() ? p->dim(static_cast<int>(axis)).dim_value() : -1;
    if (d < 0 || sum < 0 || d > (INT64_C(1) << 40)) {
      sum = -1;
    } else {
      sum += d;
    }
  }
  out.mutable_dim(static_cast<int>(axis))->Clear();
  if (sum >= 0) out.mutable_dim(static_cast<int>(axis))->set_dim_value(sum);
  set_shape(ctx, 0, out);
}

// QLinearGlobalAveragePool and QLinearAveragePool in NCHW or, with channels_last, NHWC.
void qlinear_pool(InferenceContext& ctx, bool global) {
  same_type(ctx, 0, 0);
  if (!has_shape(ctx, 0)) return;
  const bool last = int_attr(ctx, "channels_last", 0) != 0;
  const auto& in = onnx::getInputShape(ctx, 0);
  if (in.dim_size() < 3) fail_shape_inference("QLinear pooling: input rank must be 3 or more");
  if (global) {
    TensorShapeProto out;
    *out.add_dim() = in.dim(0);
    if (!last) *out.add_dim() = in.dim(1);
    for (int i = 2; i < in.dim_size(); ++i) out.add_dim()->set_dim_value(1);
    if (last) *out.add_dim() = in.dim(in.dim_size() - 1);
    set_shape(ctx, 0, out);
    return;
  }
  if (!last) {
    onnx::convPoolShapeInference(ctx, /*use_dilation=*/false, /*require_kernel_shape=*/true, 0, 1);
    return;
  }
  // NHWC: the spatial dims sit between batch and channels; ONNX's pooling arithmetic on each.
  const int spatial = in.dim_size() - 2;
  std::vector<int64_t> kernel, strides, pads;
  onnx::getRepeatedAttribute(ctx, "kernel_shape", kernel);
  onnx::getRepeatedAttribute(ctx, "strides", strides);
  onnx::getRepeatedAttribute(ctx, "pads", pads);
  if (static_cast<int>(kernel.size()) != spatial) fail_shape_inference("QLinearAveragePool: kernel_shape rank");
  if (strides.empty()) strides.assign(spatial, 1);
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (static_cast<int>(strides.size()) != spatial || static_cast<int>(pads.size()) != 2 * spatial)
    fail_shape_inference("QLinearAveragePool: strides or pads of the wrong length");
  const std::string auto_pad = onnx::getAttribute(ctx, "auto_pad", std::string("NOTSET"));
  const bool ceil_mode = int_attr(ctx, "ceil_mode", 0) != 0;
  constexpr int64_t kMaxDim = INT64_C(1) << 40;
  TensorShapeProto out;
  *out.add_dim() = in.dim(0);
  for (int i = 0; i < spatial; ++i) {
    auto* d = out.add_dim();
    const int64_t n = known(in.dim(1 + i)), k = kernel[i], st = strides[i];
    if (k <= 0 || st <= 0 || k > kMaxDim || st > kMaxDim || pads[i] < 0 || pads[i + spatial] < 0 || pads[i] > kMaxDim ||
        pads[i + spatial] > kMaxDim)
      fail_shape_inference("QLinearAveragePool: invalid kernel, stride or pad");
    if (n < 0 || n > kMaxDim) continue;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      d->set_dim_value((n + st - 1) / st);
      continue;
    }
    const int64_t padded = auto_pad == "VALID" ? n : n + pads[i] + pads[i + spatial];
    if (padded < k) fail_shape_inference("QLinearAveragePool: kernel larger than the padded input");
    d->set_dim_value((padded - k + (ceil_mode ? st - 1 : 0)) / st + 1);
  }
  *out.add_dim() = in.dim(in.dim_size() - 1);
  set_shape(ctx, 0, out);
}

// QGemm: [M, N]; float without an output scale, else the output zero point's type.
void qgemm(InferenceContext& ctx) {
  if (has_type(ctx, 8))
    same_type(ctx, 8, 0);
  else if (has_type(ctx, 7))
    same_type(ctx, 0, 0);
  else if (ctx.getOutputType(0) != nullptr)
    onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::FLOAT);
  gemm_shape(ctx, 0, 3);
}

// NCHWc ReorderInput: NCHW (or NHWC with channels_last) to blocked NCHWc, channels padded to the block.
void reorder_input(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  if (!has_shape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  if (rank < 2) fail_shape_inference("ReorderInput: input rank must be 2 or more");
  const bool last = int_attr(ctx, "channels_last", 0) != 0;
  TensorShapeProto out;
  *out.add_dim() = in.dim(0);
  const auto& channels = in.dim(last ? rank - 1 : 1);
  auto* c = out.add_dim();
  const int64_t block = g_nchwc_block.load();
  if (channels.has_dim_value() && channels.dim_value() >= 0 && channels.dim_value() <= (INT64_C(1) << 40))
    c->set_dim_value((channels.dim_value() + block - 1) / block * block);
  for (int i = 0; i < rank - 2; ++i) *out.add_dim() = in.dim(last ? 1 + i : 2 + i);
  set_shape(ctx, 0, out);
}

// NCHWc ReorderOutput: back to NCHW (or NHWC) with the `channels` the model had before padding.
void reorder_output(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  if (!has_shape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  const int rank = in.dim_size();
  if (rank < 2) fail_shape_inference("ReorderOutput: input rank must be 2 or more");
  const int64_t channels = int_attr(ctx, "channels", 0);
  if (channels <= 0) fail_shape_inference("ReorderOutput: attribute channels must be positive");
  const bool last = int_attr(ctx, "channels_last", 0) != 0;
  TensorShapeProto out;
  *out.add_dim() = in.dim(0);
  if (!last) out.add_dim()->set_dim_value(channels);
  for (int i = 0; i < rank - 2; ++i) *out.add_dim() = in.dim(2 + i);
  if (last) out.add_dim()->set_dim_value(channels);
  set_shape(ctx, 0, out);
}

// NCHWc Upsample: every dim times its integer scale.
void nchwc_upsample(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  if (!has_shape(ctx, 0)) return;
  const auto& in = onnx::getInputShape(ctx, 0);
  std::vector<int64_t> scales;
  if (!onnx::getRepeatedAttribute(ctx, "scales", scales)) return;
  if (scales.size() != static_cast<size_t>(in.dim_size()))
    fail_shape_inference("Upsample: scales has ", scales.size(), " values for rank ", in.dim_size());
  TensorShapeProto out;
  for (int i = 0; i < in.dim_size(); ++i) {
    if (scales[i] <= 0 || scales[i] > (INT64_C(1) << 20)) fail_shape_inference("Upsample: invalid scale");
    auto* d = out.add_dim();
    const auto& from = in.dim(i);
    if (from.has_dim_value() && from.dim_value() >= 0 && from.dim_value() <= (INT64_C(1) << 40))
      d->set_dim_value(from.dim_value() * scales[i]);
  }
  set_shape(ctx, 0, out);
}

void conv_like(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  onnx::convPoolShapeInference(ctx, /*use_dilation=*/true, /*require_kernel_shape=*/false, 0, 1);
}

void pool_like(InferenceContext& ctx) {
  same_type(ctx, 0, 0);
  onnx::convPoolShapeInference(ctx, /*use_dilation=*/true, /*require_kernel_shape=*/true, 0, 1);
}

// One schema: inputs (a name ending in '?' is optional), outputs likewise, the attributes the rules read (others
// are accepted unchecked), the rule. Every input and output gets its own type variable: the rules, not the
// schema, decide types.
void add(const char* domain, const char* op, int since, std::vector<std::string> inputs,
         std::vector<std::string> outputs, std::vector<Attr> attrs, std::function<void(InferenceContext&)> rule,
         onnx::ContextDependentFunctionBodyBuilder function) {
  onnx::OpSchema schema;
  schema.SetName(op).SetDomain(domain).SinceVersion(since).SetDoc("ONNX Runtime contrib op (memplan's shape rule)");
  auto declare = [&](bool input, int index, std::string name) {
    const bool optional = !name.empty() && name.back() == '?';
    const bool variadic = !name.empty() && name.back() == '*';
    if (optional || variadic) name.pop_back();
    const std::string var = (input ? "I" : "O") + std::to_string(index);
    const auto option = optional   ? onnx::OpSchema::Optional
                        : variadic ? onnx::OpSchema::Variadic
                                   : onnx::OpSchema::Single;
    if (input)
      schema.Input(index, name, "", var, option);
    else
      schema.Output(index, name, "", var, option);
    schema.TypeConstraint(var, onnx::OpSchema::all_tensor_types_with_bfloat(), "");
  };
  for (size_t i = 0; i < inputs.size(); ++i) declare(true, static_cast<int>(i), inputs[i]);
  for (size_t i = 0; i < outputs.size(); ++i) declare(false, static_cast<int>(i), outputs[i]);
  for (const auto& a : attrs) schema.Attr(a.name, "", a.type, a.required);
  schema.TypeAndShapeInferenceFunction(std::move(rule));
  if (function) schema.SetContextDependentFunctionBodyBuilder(std::move(function));
  onnx::OpSchemaRegistry::OpSchemaRegisterOnce once(schema);
}

void register_all() {
  auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
  for (const char* d : {kMs, kNchwc})
    if (ranges.Map().count(d) == 0) ranges.AddDomainToVersion(d, 1, 1);

  auto elementwise = [](InferenceContext& ctx) { like_input(ctx, 0, 0); };
  add(kMs, "Gelu", 1, {"X"}, {"Y"}, {}, elementwise);
  add(kMs, "QuickGelu", 1, {"X"}, {"Y"}, {{"alpha", FLOAT}}, elementwise);
  add(kMs, "FastGelu", 1, {"X", "bias?"}, {"Y"}, {}, elementwise);
  add(kMs, "BiasGelu", 1, {"A", "B"}, {"C"}, {}, elementwise);
  add(kMs, "RotaryEmbedding", 1, {"input", "position_ids", "cos_cache", "sin_cache"}, {"output"},
      {{"num_heads", INT}, {"interleaved", INT}, {"rotary_embedding_dim", INT}, {"scale", FLOAT}}, elementwise);
  add(kMs, "FusedMatMul", 1, {"A", "B"}, {"Y"},
      {{"alpha", FLOAT}, {"transA", INT}, {"transB", INT}, {"transBatchA", INT}, {"transBatchB", INT}}, fused_matmul);
  add(kMs, "FusedGemm", 1, {"A", "B", "C?"}, {"Y"},
      {{"transA", INT}, {"transB", INT}, {"alpha", FLOAT}, {"beta", FLOAT}, {"activation", STRING}}, fused_gemm);
  const std::vector<Attr> conv_attrs = {{"auto_pad", STRING},  {"kernel_shape", INTS}, {"dilations", INTS},
                                        {"strides", INTS},     {"pads", INTS},         {"group", INT},
                                        {"activation", STRING}};
  const std::vector<Attr> pool_attrs = {{"auto_pad", STRING}, {"kernel_shape", INTS}, {"dilations", INTS},
                                        {"strides", INTS},    {"pads", INTS},         {"ceil_mode", INT}};
  add(kMs, "FusedConv", 1, {"X", "W", "B?", "Z?"}, {"Y"}, conv_attrs, conv_like);
  add(kMs, "SkipLayerNormalization", 1, {"input", "skip", "gamma", "beta?", "bias?"},
      {"output", "mean?", "inv_std_var?", "input_skip_bias_sum?"}, {{"epsilon", FLOAT}},
      [](InferenceContext& ctx) { normalization(ctx, -1, 1, 2, 3); });
  add(kMs, "SkipSimplifiedLayerNormalization", 1, {"input", "skip", "gamma", "bias?"},
      {"output", "mean?", "inv_std_var?", "input_skip_bias_sum?"}, {{"epsilon", FLOAT}},
      [](InferenceContext& ctx) { normalization(ctx, -1, 1, 2, 3); });
  // ORT runs these in the ONNX domain from opset 1 (ONNX's own LayerNormalization arrived in opset 17).
  add("", "LayerNormalization", 1, {"X", "Scale", "B?"}, {"Y", "Mean?", "InvStdDev?"},
      {{"axis", INT}, {"epsilon", FLOAT}, {"stash_type", INT}},
      [](InferenceContext& ctx) { normalization(ctx, int_attr(ctx, "axis", -1), 1, 2, -1); });
  add("", "SimplifiedLayerNormalization", 1, {"X", "scale"}, {"Y", "inv_std_var?"},
      {{"axis", INT}, {"epsilon", FLOAT}, {"stash_type", INT}},
      [](InferenceContext& ctx) { normalization(ctx, int_attr(ctx, "axis", -1), 1, 1, -1); });
  add(kMs, "Attention", 1,
      {"input", "weights", "bias?", "mask_index?", "past?", "attention_bias?", "past_sequence_length?"},
      {"output", "present?"},
      {{"num_heads", INT}, {"qkv_hidden_sizes", INTS}, {"unidirectional", INT}, {"past_present_share_buffer", INT}},
      attention);
  add(kMs, "GroupQueryAttention", 1,
      {"query", "key?", "value?", "past_key?", "past_value?", "seqlens_k", "total_sequence_length", "cos_cache?",
       "sin_cache?", "position_ids?", "attention_bias?", "head_sink?"},
      {"output", "present_key?", "present_value?", "output_qk?"}, {{"num_heads", INT}, {"kv_num_heads", INT}},
      group_query_attention);
  add(kMs, "MultiHeadAttention", 1,
      {"query", "key?", "value?", "bias?", "key_padding_mask?", "attention_bias?", "past_key?", "past_value?",
       "past_sequence_length?", "cache_indirection?"},
      {"output", "present_key?", "present_value?", "qk?"}, {{"num_heads", INT}}, multi_head_attention);
  add(kMs, "EmbedLayerNormalization", 1,
      {"input_ids", "segment_ids?", "word_embedding", "position_embedding", "segment_embedding?", "gamma", "beta",
       "mask?", "position_ids?"},
      {"output", "mask_index?", "embedding_sum?"}, {{"epsilon", FLOAT}, {"mask_index_type", INT}},
      embed_layer_normalization);
  add(kMs, "MatMulNBits", 1, {"A", "B", "scales", "zero_points?", "g_idx?", "bias?"}, {"Y"},
      {{"K", INT}, {"N", INT}, {"bits", INT}, {"block_size", INT}}, matmul_nbits);

  // Quantization (ORT's quantization tools; QLinearConv, QLinearMatMul and DynamicQuantizeLinear are ONNX's own).
  add(kMs, "QLinearAdd", 1,
      {"A", "A_scale", "A_zero_point?", "B", "B_scale", "B_zero_point?", "C_scale", "C_zero_point?"}, {"C"}, {},
      [](InferenceContext& ctx) { broadcast_pair(ctx, 0, 3); });
  add(kMs, "QLinearMul", 1,
      {"A", "A_scale", "A_zero_point?", "B", "B_scale", "B_zero_point?", "C_scale", "C_zero_point?"}, {"C"}, {},
      [](InferenceContext& ctx) { broadcast_pair(ctx, 0, 3); });
  for (const char* op : {"QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax"})
    add(kMs, op, 1, {"X", "X_scale", "X_zero_point?", "Y_scale", "Y_zero_point?"}, {"Y"}, {}, elementwise);
  add(kMs, "QLinearGlobalAveragePool", 1, {"X", "x_scale", "x_zero_point?", "y_scale", "y_zero_point?"}, {"Y"},
      {{"channels_last", INT}}, [](InferenceContext& ctx) { qlinear_pool(ctx, true); });
  std::vector<Attr> qpool_attrs = pool_attrs;
  qpool_attrs.push_back({"channels_last", INT});
  add(kMs, "QLinearAveragePool", 1, {"X", "x_scale", "x_zero_point?", "y_scale", "y_zero_point?"}, {"Y"}, qpool_attrs,
      [](InferenceContext& ctx) { qlinear_pool(ctx, false); });
  {
    std::vector<std::string> inputs = {"Y_scale", "Y_zero_point"};
    for (int i = 0; i < 64; ++i)  // (X, scale, zero point) triples; schemas cannot say "variadic triples"
      for (const char* part : {"X", "X_scale", "X_zero_point"})
        inputs.push_back(std::string(part) + std::to_string(i) + (i == 0 ? "" : "?"));
    add(kMs, "QLinearConcat", 1, inputs, {"Y"}, {{"axis", INT}}, qlinear_concat);
  }
  add(kMs, "QGemm", 1,
      {"A", "a_scale", "a_zero_point", "B", "b_scale", "b_zero_point", "C?", "y_scale?", "y_zero_point?"}, {"Y"},
      {{"transA", INT}, {"transB", INT}, {"alpha", FLOAT}}, qgemm);
  add(kMs, "DynamicQuantizeMatMul", 1, {"A", "B", "b_scale", "b_zero_point?", "bias?"}, {"Y"}, {},
      [](InferenceContext& ctx) {
        same_type(ctx, 0, 0);
        matmul_shape(ctx, 0, 1, false, false, false, false);
      });
  add(kMs, "MatMulIntegerToFloat", 1, {"A", "B", "a_scale", "b_scale", "a_zero_point?", "b_zero_point?", "bias?"},
      {"Y"}, {}, [](InferenceContext& ctx) {
        same_type(ctx, 2, 0);
        matmul_shape(ctx, 0, 1, false, false, false, false);
      });
  add(kMs, "QuantizeLinear", 1, {"x", "y_scale", "y_zero_point?"}, {"y"}, {{"axis", INT}}, [](InferenceContext& ctx) {
    if (has_type(ctx, 2))
      same_type(ctx, 2, 0);
    else if (ctx.getOutputType(0) != nullptr)
      onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::UINT8);
    if (has_shape(ctx, 0)) set_shape(ctx, 0, onnx::getInputShape(ctx, 0));
  });
  add(kMs, "DequantizeLinear", 1, {"x", "x_scale", "x_zero_point?"}, {"y"}, {{"axis", INT}}, [](InferenceContext& ctx) {
    same_type(ctx, 1, 0);
    if (has_shape(ctx, 0)) set_shape(ctx, 0, onnx::getInputShape(ctx, 0));
  });

  add(kNchwc, "ReorderInput", 1, {"X"}, {"Y"}, {{"channels_last", INT}}, reorder_input);
  add(kNchwc, "ReorderOutput", 1, {"X"}, {"Y"}, {{"channels", INT}, {"channels_last", INT}}, reorder_output);
  add(kNchwc, "Conv", 1, {"X", "W", "B?", "Sum?"}, {"Y"}, conv_attrs, conv_like);
  add(kNchwc, "MaxPool", 1, {"X"}, {"Y"}, pool_attrs, pool_like);
  add(kNchwc, "AveragePool", 1, {"X"}, {"Y"}, pool_attrs, pool_like);
  auto global_pool = [](InferenceContext& ctx) { onnx::globalPoolTypeShapeInference(ctx); };
  add(kNchwc, "GlobalMaxPool", 1, {"X"}, {"Y"}, {}, global_pool);
  add(kNchwc, "GlobalAveragePool", 1, {"X"}, {"Y"}, {}, global_pool);
  add(kNchwc, "Upsample", 1, {"X"}, {"Y"}, {{"scales", INTS}, {"mode", STRING}}, nchwc_upsample);
  register_more_ops();
  register_newer_onnx_ops();
}

}  // namespace contrib

void register_ort_contrib_schemas() {
  static std::once_flag once;
  std::call_once(once, contrib::register_all);
}

int nchwc_block_size_for(const onnx::ModelProto& model, int requested) {
  if (requested > 0) return requested;
  // (the filters of the NCHWc convolutions first: most models have none, and then no initializer is looked at)
  std::set<std::string> filters;
  for (const auto& n : model.graph().node())
    if (n.domain() == contrib::kNchwc && n.op_type() == "Conv" && n.input_size() >= 2) filters.insert(n.input(1));
  for (const auto& t : model.graph().initializer())
    if (t.dims_size() >= 1 && filters.count(t.name()) && t.dims(0) % 16 != 0) return 8;
  return 16;
}

void set_nchwc_block_size(int block) {
  contrib::g_nchwc_block.store(block);
}

}  // namespace memplan::onnx_io
