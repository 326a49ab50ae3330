#include "shape_pass.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <cstring>
#include <queue>
#include <set>
#include <unordered_map>

#include "memplan/error.h"

namespace memplan::onnx_io {
namespace {

bool default_domain(const std::string& d) {
  return d.empty() || d == "ai.onnx";
}

// Ops whose output size depends on the data flowing through them, not only on shapes.
const std::set<std::string> kDataDependentOps = {
    "NonZero", "NonMaxSuppression", "Unique",           "Compress",   "TopK",
    "Loop",    "StringSplit",       "RandomNormalLike", "Multinomial"};

// Appends a tensor's n elements, stored as T: from raw_data when present, else from the typed
// repeated field that ONNX uses for T. False when the stored count is not n.
template <typename T, typename Field, typename Out>
bool read_elements(const onnx::TensorProto& t, int64_t n, const Field& field, std::vector<Out>& out) {
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != sizeof(T) * static_cast<size_t>(n)) return false;
    std::vector<T> values(n);
    std::memcpy(values.data(), raw.data(), raw.size());
    for (T v : values) out.push_back(static_cast<Out>(v));
    return true;
  }
  if (field.size() != n) return false;
  for (auto v : field) out.push_back(static_cast<Out>(v));
  return true;
}

// The attributes const_eval reads, taken from a NodeProto.
EvalAttributes eval_attributes(const onnx::NodeProto& node, int64_t max_elements) {
  EvalAttributes a;
  for (const auto& attr : node.attribute()) {
    if (attr.type() == onnx::AttributeProto::INT) a.ints[attr.name()] = attr.i();
    if (attr.type() == onnx::AttributeProto::INTS)
      a.int_lists[attr.name()].assign(attr.ints().begin(), attr.ints().end());
    if (attr.type() == onnx::AttributeProto::TENSOR)
      if (auto t = read_tensor(attr.t(), max_elements)) a.tensors[attr.name()] = *t;
  }
  return a;
}

// A Constant node's value, when inline and small.
std::optional<Tensor> constant_value(const onnx::NodeProto& node, int64_t max_elements) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == "value" && attr.has_t()) return read_tensor(attr.t(), max_elements);
    if (attr.name() == "value_int") return Tensor::int64_scalar(attr.i());
    if (attr.name() == "value_ints") return Tensor::int64_vector({attr.ints().begin(), attr.ints().end()});
    if (attr.name() == "value_float") return Tensor::floats_of(1, {attr.f()}, {});
    if (attr.name() == "value_floats")
      return Tensor::floats_of(1, {attr.floats().begin(), attr.floats().end()}, {attr.floats_size()});
  }
  return std::nullopt;
}

std::optional<onnx::TensorProto> to_tensor_proto(const std::string& name, const Tensor& t) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(t.dtype);
  for (int64_t d : t.dims) p.add_dims(d);
  switch (t.dtype) {
    case onnx::TensorProto::INT64:
      for (int64_t v : t.ints) p.add_int64_data(v);
      break;
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      for (int64_t v : t.ints) p.add_int32_data(static_cast<int32_t>(v));
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      for (int64_t v : t.ints) p.add_uint64_data(static_cast<uint64_t>(v));
      break;
    case onnx::TensorProto::FLOAT:
      for (double v : t.floats) p.add_float_data(static_cast<float>(v));
      break;
    case onnx::TensorProto::DOUBLE:
      for (double v : t.floats) p.add_double_data(v);
      break;
    default:
      return std::nullopt;
  }
  return p;
}

std::string describe(const onnx::NodeProto& n) {
  return "node " + (n.name().empty() ? std::string("(unnamed)") : "'" + n.name() + "'") + " (" + n.op_type() + ")";
}

bool static_dims(const onnx::TypeProto* type, std::vector<int64_t>& dims) {
  if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape()) return false;
  dims.clear();
  for (const auto& d : type->tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return false;
    dims.push_back(d.dim_value());
  }
  return true;
}

// Node indices of the graph in a topological order (nodes on a cycle are left out; the graph
// builder reports the cycle).
std::vector<int> topological(const onnx::GraphProto& g) {
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& o : g.node(i).output())
      if (!o.empty()) producer[o] = i;
  std::vector<std::vector<int>> successors(g.node_size());
  std::vector<int> pending(g.node_size(), 0);
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& in : g.node(i).input()) {
      auto it = producer.find(in);
      if (it != producer.end()) {
        successors[it->second].push_back(i);
        ++pending[i];
      }
    }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < g.node_size(); ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int s : successors[i])
      if (--pending[s] == 0) ready.push(s);
  }
  return order;
}

}  // namespace

std::optional<Tensor> read_tensor(const onnx::TensorProto& t, int64_t max_elements) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  if (n > max_elements) return std::nullopt;
  Tensor out;
  out.dtype = t.data_type();
  out.dims.assign(t.dims().begin(), t.dims().end());
  bool ok = false;
  using P = onnx::TensorProto;
  switch (t.data_type()) {
    case P::FLOAT:
      ok = read_elements<float>(t, n, t.float_data(), out.floats);
      break;
    case P::DOUBLE:
      ok = read_elements<double>(t, n, t.double_data(), out.floats);
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

ShapePassReport complete_shapes(onnx::ModelProto& model, const std::string& path, const EvalLimits& limits) {
  ShapePassReport report;
  int opset = 1;
  for (const auto& op : model.opset_import())
    if (default_domain(op.domain())) opset = static_cast<int>(op.version());

  const onnx::GraphProto& graph = model.graph();
  std::unordered_map<std::string, Tensor> constants;
  for (const auto& init : graph.initializer())
    if (auto t = read_tensor(init, limits.max_elements)) constants.emplace(init.name(), std::move(*t));

  std::vector<bool> folded(graph.node_size(), false);
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& n = graph.node(i);
    if (n.op_type() == "Constant" && default_domain(n.domain()) && n.output_size() == 1)
      if (auto t = constant_value(n, limits.max_elements); t && to_tensor_proto(n.output(0), *t)) {
        constants.emplace(n.output(0), std::move(*t));
        folded[i] = true;
      }
  }
  const std::vector<int> order = topological(graph);
  onnx::ShapeInferenceOptions inference(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);

  onnx::ModelProto scratch;
  std::vector<int> scratch_origin;  // scratch node -> original node index
  constexpr int kMaxRounds = 64;
  for (int round = 0; round < kMaxRounds; ++round) {
    // The scratch model: evaluated nodes replaced by initializers holding their values.
    scratch = model;
    auto* sg = scratch.mutable_graph();
    sg->clear_node();
    scratch_origin.clear();
    for (int i = 0; i < graph.node_size(); ++i) {
      if (folded[i]) {
        for (const auto& out : graph.node(i).output())
          if (auto p = to_tensor_proto(out, constants.at(out))) *sg->add_initializer() = std::move(*p);
        continue;
      }
      *sg->add_node() = graph.node(i);
      scratch_origin.push_back(i);
    }
    try {
      onnx::shape_inference::InferShapes(scratch, onnx::OpSchemaRegistry::Instance(), inference);
    } catch (const std::exception& e) {
      report.warnings.push_back(std::string("ONNX shape inference stopped early: ") + e.what());
    }
    ++report.rounds;

    std::unordered_map<std::string, const onnx::TypeProto*> types;
    for (const auto& vi : sg->value_info()) types[vi.name()] = &vi.type();
    for (const auto& vi : sg->output()) types[vi.name()] = &vi.type();
    for (const auto& vi : sg->input()) types[vi.name()] = &vi.type();

    bool progress = false;
    for (int i : order) {
      if (folded[i]) continue;
      const onnx::NodeProto& n = graph.node(i);
      if (!default_domain(n.domain()) || n.output_size() == 0 || n.output(0).empty()) continue;
      const std::string& op = n.op_type();
      std::optional<std::vector<Tensor>> result;
      try {
        if (op == "Shape" || op == "Size") {
          std::vector<int64_t> dims;
          auto it = n.input_size() > 0 ? types.find(n.input(0)) : types.end();
          auto c = n.input_size() > 0 ? constants.find(n.input(0)) : constants.end();
          if (c != constants.end())
            dims = c->second.dims;
          else if (it == types.end() || !static_dims(it->second, dims))
            continue;
          EvalAttributes attrs = eval_attributes(n, limits.max_elements);
          if (op == "Shape") {
            result = std::vector<Tensor>{evaluate_shape(dims, attrs)};
          } else {
            int64_t count = 1;
            for (int64_t d : dims)
              if (__builtin_mul_overflow(count, d, &count)) throw EvalError("element count overflows 64 bits");
            result = std::vector<Tensor>{Tensor::int64_scalar(count)};
          }
        } else if (can_evaluate(op)) {
          std::vector<const Tensor*> inputs;
          bool all_known = true;
          for (const auto& in : n.input()) {
            if (in.empty()) {
              inputs.push_back(nullptr);
              continue;
            }
            auto c = constants.find(in);
            if (c == constants.end()) {
              all_known = false;
              break;
            }
            inputs.push_back(&c->second);
          }
          if (!all_known) continue;
          result = evaluate(op, opset, eval_attributes(n, limits.max_elements), inputs, limits);
        }
      } catch (const EvalError& e) {
        fail_input(
            path, describe(n) + ": " + e.what() + " while computing shapes (check the --dim and --input-shape values)");
      }
      if (!result || result->size() < static_cast<size_t>(n.output_size())) continue;
      bool representable = true;
      for (int k = 0; k < n.output_size(); ++k)
        if (!n.output(k).empty() && !to_tensor_proto(n.output(k), (*result)[k])) representable = false;
      if (!representable) continue;
      for (int k = 0; k < n.output_size(); ++k)
        if (!n.output(k).empty()) constants[n.output(k)] = std::move((*result)[k]);
      folded[i] = true;
      ++report.evaluated_nodes;
      progress = true;
    }
    if (!progress) break;
  }

  // Write back: every type the last inference found, and the evaluated constants' types.
  auto* g = model.mutable_graph();
  std::unordered_map<std::string, onnx::TypeProto> final_types;
  for (const auto& vi : scratch.graph().value_info()) final_types[vi.name()] = vi.type();
  for (const auto& vi : scratch.graph().output()) final_types[vi.name()] = vi.type();
  for (int i = 0; i < graph.node_size(); ++i)
    if (folded[i])
      for (const auto& out : graph.node(i).output()) {
        auto c = constants.find(out);
        if (c == constants.end()) continue;
        onnx::TypeProto t;
        t.mutable_tensor_type()->set_elem_type(c->second.dtype);
        auto* shape = t.mutable_tensor_type()->mutable_shape();
        for (int64_t d : c->second.dims) shape->add_dim()->set_dim_value(d);
        final_types[out] = t;
      }
  std::set<std::string> declared;
  for (const auto& vi : g->input()) declared.insert(vi.name());
  for (auto& vi : *g->mutable_output()) {
    declared.insert(vi.name());
    auto it = final_types.find(vi.name());
    if (it != final_types.end()) *vi.mutable_type() = it->second;
  }
  for (const auto& t : g->initializer()) declared.insert(t.name());
  g->clear_value_info();
  for (const auto& n : g->node())
    for (const auto& out : n.output()) {
      if (out.empty() || declared.count(out)) continue;
      auto it = final_types.find(out);
      if (it == final_types.end()) continue;
      auto* vi = g->add_value_info();
      vi->set_name(out);
      *vi->mutable_type() = it->second;
      declared.insert(out);
    }
  // Subgraphs: take the inferred bodies (the nodes owning them are never evaluated away).
  for (size_t j = 0; j < scratch_origin.size(); ++j) {
    const auto& inferred = scratch.graph().node(static_cast<int>(j));
    auto* original = g->mutable_node(scratch_origin[j]);
    for (int a = 0; a < original->attribute_size(); ++a)
      if (original->attribute(a).type() == onnx::AttributeProto::GRAPH ||
          original->attribute(a).type() == onnx::AttributeProto::GRAPHS)
        *original->mutable_attribute(a) = inferred.attribute(a);
  }

  // Values that cannot be static, and why.
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& n = graph.node(i);
    if (!default_domain(n.domain()) || !kDataDependentOps.count(n.op_type())) continue;
    for (const auto& out : n.output()) {
      std::vector<int64_t> dims;
      auto it = final_types.find(out);
      if (out.empty() || (it != final_types.end() && static_dims(&it->second, dims))) continue;
      report.dynamic[out] = "data-dependent: its size depends on the values computed by " + describe(n);
    }
  }
  return report;
}

}  // namespace memplan::onnx_io
