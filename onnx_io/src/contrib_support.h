// Internal to onnx_io/: what the shape rules of ORT's contrib ops share (contrib_schemas.cc, the ops of the
// transformer optimizer, the LLM formats and the NCHWc layout; contrib_more.cc, the rest of ORT's registered ops).
// A rule reads its node's inputs through an InferenceContext and sets what it knows of its outputs; it fails
// (fail_shape_inference) only on a node ORT would refuse, and leaves a dim unknown where it cannot know it.
#pragma once

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace memplan::onnx_io::contrib {

using onnx::InferenceContext;
using onnx::TensorShapeProto;

inline const char* const kMs = "com.microsoft";
inline const char* const kNchwc = "com.microsoft.nchwc";

// Dims above this are refused or left unknown by the rules' arithmetic: no real tensor has them, and products of
// a few stay far from overflow.
constexpr int64_t kMaxRuleDim = INT64_C(1) << 40;

bool has_type(InferenceContext& ctx, size_t input);
// The element type of input `from` on output `to`, when both exist.
void same_type(InferenceContext& ctx, size_t from, size_t to);
bool has_shape(InferenceContext& ctx, size_t input);
void set_shape(InferenceContext& ctx, size_t output, const TensorShapeProto& shape);
// Output `to` has input `from`'s type and shape (element-wise ops).
void like_input(InferenceContext& ctx, size_t from, size_t to);
int64_t int_attr(InferenceContext& ctx, const char* name, int64_t fallback);
// A dim's value when known and positive, else -1.
int64_t known(const TensorShapeProto::Dimension& d);
// The int32/int64 scalar an input holds when inference knows its data (an initializer or a folded constant), else -1.
int64_t scalar_input(InferenceContext& ctx, size_t input);
TensorShapeProto dims_of(std::initializer_list<TensorShapeProto::Dimension> dims);
// A known dim of value `v`, or an unknown one for v < 0.
TensorShapeProto::Dimension dim_value(int64_t v);

// Output 0 of a MatMul of two inputs, with FusedMatMul's optional transposes of the matrix and the batch dims.
void matmul_shape(InferenceContext& ctx, size_t a_input, size_t b_input, bool trans_a, bool trans_b, bool trans_batch_a,
                  bool trans_batch_b);
void fused_matmul(InferenceContext& ctx);
// Output 0 is a broadcast of inputs `a` and `b`, with `a`'s element type.
void broadcast_pair(InferenceContext& ctx, size_t a, size_t b);
// A MatMul of A (..., K) with a packed B of attribute N columns: (..., N), A's type.
void matmul_nbits(InferenceContext& ctx);
// Attention's rule with its past input at `past_input` and the input typing output 0 at `typed_input`.
void attention_rule(InferenceContext& ctx, size_t typed_input, size_t past_input);
void conv_like(InferenceContext& ctx);
// A pool with its kernel_shape attribute and dilations: Conv's output dims, the input's type.
void pool_like(InferenceContext& ctx);

struct Attr {
  const char* name;
  onnx::AttributeProto::AttributeType type;
  bool required = false;  // (a node without it is refused as malformed, as ORT refuses it)
};
constexpr auto INT = onnx::AttributeProto::INT;
constexpr auto INTS = onnx::AttributeProto::INTS;
constexpr auto FLOAT = onnx::AttributeProto::FLOAT;
constexpr auto STRING = onnx::AttributeProto::STRING;

// Registers one schema: inputs (a name ending in '?' is optional, one ending in '*' variadic), outputs likewise, the
// attributes the rule reads (others are accepted unchecked), the rule. Every input and output gets its own type
// variable: the rules, not the schema, decide types. `function`: the body ONNX Runtime inlines for the op where no
// provider has a kernel for it (function_inline.h).
void add(const char* domain, const char* op, int since, std::vector<std::string> inputs,
         std::vector<std::string> outputs, std::vector<Attr> attrs, std::function<void(InferenceContext&)> rule,
         onnx::ContextDependentFunctionBodyBuilder function = nullptr);

// The ops of contrib_more.cc.
void register_more_ops();
// ONNX's own ops of opsets 18 to 24, newer than libonnx 1.12 (newer_onnx_schemas.cc).
void register_newer_onnx_ops();

}  // namespace memplan::onnx_io::contrib
