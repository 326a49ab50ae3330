#include "shape_pass.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/container/node_hash_map.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "memplan/error.h"
#include "memplan/isolated.h"
#include "proto_model.h"
#include "segmented_inference.h"
#include "tensor_proto.h"

namespace memplan::onnx_io {
namespace {

// A one-element constant as an integer (a trip count, a position), or nullopt when it holds none: a NaN or a float
// beyond int64 from hostile input leaves what depends on it unknown instead of failing the load.
std::optional<int64_t> integer_scalar(const Tensor& t) {
  try {
    return t.at_i(0);
  } catch (const EvalError&) {
    return std::nullopt;
  }
}

// Ops whose output size depends on the data flowing through them, not only on shapes.
const std::set<std::string> kDataDependentOps = {
    "NonZero", "NonMaxSuppression", "Unique",           "Compress",   "TopK",
    "Loop",    "StringSplit",       "RandomNormalLike", "Multinomial"};
// ONNX Runtime's: Unique; RemovePadding's packed tokens (output 0), as many as the mask lets through.
const std::set<std::string> kDataDependentMsOps = {"Unique", "RemovePadding", "DynamicTimeWarping"};

// A tensor type whose every dim has a value.
bool all_dims_known(const onnx::TypeProto* type) {
  if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape()) return false;
  for (const auto& d : type->tensor_type().shape().dim())
    if (!d.has_dim_value()) return false;
  return true;
}

bool static_dims(const onnx::TypeProto* type, std::vector<int64_t>& dims) {
  if (!all_dims_known(type)) return false;
  dims.clear();
  for (const auto& d : type->tensor_type().shape().dim()) dims.push_back(d.dim_value());
  return true;
}

}  // namespace

bool data_dependent_op(const std::string& domain, const std::string& op_type) {
  if (is_default_domain(domain)) return kDataDependentOps.count(op_type) > 0;
  return domain == "com.microsoft" && kDataDependentMsOps.count(op_type) > 0;
}

namespace {

// Calls fn on every name a subgraph of `n` reads (at any depth): the outer values among them are inputs of `n` too.
template <typename Fn>
void for_each_name_read_inside(const onnx::NodeProto& n, Fn&& fn) {
  for_each_subgraph(n, [&](const onnx::GraphProto& sub) {
    for (const auto& inner : sub.node()) {
      for (const auto& in : inner.input()) fn(in);
      for_each_name_read_inside(inner, fn);
    }
  });
}

}  // namespace

// (A table of every node's outputs, a million names, is a cache miss per lookup: only the names read far from where
// they are written go in one.)
bool listed_in_order(const onnx::GraphProto& g) {
  constexpr int kNear = 16;  // nodes looked back at (written_near); a name not found near goes to the table
  absl::flat_hash_set<std::string_view> outside;
  outside.reserve(static_cast<size_t>(g.input_size() + g.initializer_size() + g.sparse_initializer_size()));
  for (const auto& vi : g.input()) outside.insert(vi.name());
  for (const auto& t : g.initializer()) outside.insert(t.name());
  for (const auto& t : g.sparse_initializer()) outside.insert(t.values().name());
  absl::flat_hash_map<std::string_view, int> first_far_reader;  // a name read far from its writer, if written
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    if (holds_subgraph(n)) return false;
    for (const auto& in : n.input())
      if (!in.empty() && !written_near(g, i, in, kNear) && !outside.contains(in)) first_far_reader.try_emplace(in, i);
  }
  if (first_far_reader.empty()) return true;
  for (int j = 0; j < g.node_size(); ++j)
    for (const auto& out : g.node(j).output())
      if (auto it = first_far_reader.find(out); it != first_far_reader.end() && j >= it->second) return false;
  return true;
}

std::vector<int> topological_order(const onnx::GraphProto& g, bool* listed) {
  const bool in_order = listed_in_order(g);
  if (listed) *listed = in_order;
  if (in_order) {
    std::vector<int> order(static_cast<size_t>(g.node_size()));
    for (int i = 0; i < g.node_size(); ++i) order[static_cast<size_t>(i)] = i;
    return order;
  }
  absl::flat_hash_map<std::string_view, int> producer;
  producer.reserve(static_cast<size_t>(g.node_size()));
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& o : g.node(i).output())
      if (!o.empty()) producer[o] = i;
  // Most files list their nodes in a topological order already, which is then the order below (the smallest ready
  // index first takes them as listed): checked in one pass, without the queue. A node with a body depends on the
  // values its body reads too (an If listed before the producer of a value its branch reads: ORT's inlining appends
  // the bodies it inlines after such an If).
  // Producer of what node i reads, -1 for none; a node is never its own body's producer (a name its body defines).
  auto producer_of = [&](int i, const std::string& name, bool inside) {
    auto it = producer.find(name);
    return it == producer.end() || (inside && it->second == i) ? -1 : it->second;
  };
  bool listed_in_order = true;
  for (int i = 0; i < g.node_size() && listed_in_order; ++i) {
    const onnx::NodeProto& n = g.node(i);
    for (const auto& in : n.input())
      if (producer_of(i, in, false) >= i) listed_in_order = false;
    if (holds_subgraph(n))
      for_each_name_read_inside(n, [&](const std::string& in) {
        if (producer_of(i, in, true) > i) listed_in_order = false;
      });
  }
  if (listed_in_order) {
    std::vector<int> order(static_cast<size_t>(g.node_size()));
    for (int i = 0; i < g.node_size(); ++i) order[static_cast<size_t>(i)] = i;
    return order;
  }
  std::vector<std::vector<int>> successors(g.node_size());
  std::vector<int> pending(g.node_size(), 0);
  auto edge = [&](int from, int to) {
    if (from < 0) return;
    successors[from].push_back(to);
    ++pending[to];
  };
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    for (const auto& in : n.input()) edge(producer_of(i, in, false), i);
    if (holds_subgraph(n))
      for_each_name_read_inside(n, [&](const std::string& in) { edge(producer_of(i, in, true), i); });
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

// Keys view names in the scratch model, which outlives each map. The load's tables of names are abseil's (open
// addressing: fewer cache misses than std::unordered_map's nodes, the 100k-node shape graph's `plan` 9-17% faster);
// none is iterated, as their order changes from one run to the next. Constants keep their place (node_hash_map):
// pointers to them are held while others are added.
using TypeMap = absl::flat_hash_map<std::string_view, const onnx::TypeProto*>;
using ConstantMap = absl::node_hash_map<std::string, Tensor>;

// (asked once per value a round: no vector of the dims made each time)
bool has_static_dims(const TypeMap& types, const std::string& name) {
  auto it = types.find(name);
  return it != types.end() && all_dims_known(it->second);
}

// Whether some node not folded has an output whose shape `types` does not fully know: when none has, no node
// downstream of new constants can learn anything from another round (unknown_downstream need not look).
bool unknown_anywhere(const onnx::GraphProto& graph, const std::vector<bool>& folded, const TypeMap& types) {
  for (int i = 0; i < graph.node_size(); ++i) {
    if (folded[i]) continue;
    for (const auto& out : graph.node(i).output())
      if (!out.empty() && !has_static_dims(types, out)) return true;
  }
  return false;
}

// A value's dims, from a constant or from an inferred static type.
std::optional<std::vector<int64_t>> dims_of(const TypeMap& types, const ConstantMap& constants,
                                            const std::string& name) {
  if (auto c = constants.find(name); c != constants.end()) return c->second.dims;
  std::vector<int64_t> dims;
  auto it = types.find(name);
  if (it == types.end() || !static_dims(it->second, dims)) return std::nullopt;
  return dims;
}

int32_t element_type(const TypeMap& types, const ConstantMap& constants, const std::string& name) {
  if (auto c = constants.find(name); c != constants.end()) return c->second.dtype;
  auto it = types.find(name);
  return it != types.end() && it->second->has_tensor_type() ? it->second->tensor_type().elem_type() : 0;
}

// Whether `type` is a tensor type of `t`'s element type and dims, every dim a value.
bool same_static_type(const onnx::TypeProto& type, const Tensor& t) {
  std::vector<int64_t> dims;
  return static_dims(&type, dims) && type.tensor_type().elem_type() == t.dtype && dims == t.dims;
}

onnx::TypeProto tensor_type(int32_t elem_type, const std::vector<int64_t>& dims) {
  onnx::TypeProto t;
  t.mutable_tensor_type()->set_elem_type(elem_type);
  auto* shape = t.mutable_tensor_type()->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  return t;
}

// A Loop node's body, or nullptr for any other node.
onnx::GraphProto* loop_body(onnx::NodeProto& n) {
  if (!is_onnx_op(n, "Loop")) return nullptr;
  for (auto& a : *n.mutable_attribute())
    if (a.name() == "body" && a.has_g()) return a.mutable_g();
  return nullptr;
}

// The node's inputs as constants (nullptr for an absent optional one); std::nullopt when one is not.
std::optional<std::vector<const Tensor*>> constant_inputs(
    const onnx::NodeProto& n, const std::function<const Tensor*(const std::string&)>& lookup) {
  std::vector<const Tensor*> inputs;
  for (const auto& in : n.input()) {
    if (in.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    const Tensor* t = lookup(in);
    if (!t) return std::nullopt;
    inputs.push_back(t);
  }
  return inputs;
}

// Loop outputs ONNX 1.12 leaves unknown. A loop-carried value keeps its shape when the body, given the
// initial value's shape, returns the same shape: then the body's input gets that shape (assumed in the
// scratch model, kept only while the body confirms it) and so does the Loop's final value. A scan output
// of a loop that runs a constant trip count (no condition input) is that count times the body's shape; so is one
// of a loop the user gave a count for (--trip-count).
class LoopShapes {
 public:
  explicit LoopShapes(const std::map<std::string, int64_t>& given) : given_(given) {}

  // Before an inference round: give each loop-carried body input its initial value's shape, unless the
  // body was seen to change it.
  void assume(onnx::GraphProto& g, const std::vector<int>& origin) {
    for (int j = 0; j < static_cast<int>(origin.size()); ++j) {
      auto it = initial_.find(origin[j]);
      if (it == initial_.end()) continue;
      onnx::GraphProto* body = loop_body(*g.mutable_node(j));
      if (!body) continue;
      for (const auto& [k, type] : it->second)
        if (!varies_.count({origin[j], k}) && 2 + k < body->input_size())
          *body->mutable_input(2 + k)->mutable_type() = type;
    }
  }

  // After it: record the initial shapes found, confirm or drop assumptions, and add the Loop outputs that
  // follow to `ruled`. True when anything changed (another round is needed).
  bool conclude(onnx::GraphProto& g, const std::vector<int>& origin, const TypeMap& types, const ConstantMap& constants,
                std::map<std::string, onnx::TypeProto>& ruled) {
    bool changed = false;
    for (int j = 0; j < static_cast<int>(origin.size()); ++j) {
      onnx::NodeProto& n = *g.mutable_node(j);
      const onnx::GraphProto* body = loop_body(n);
      if (!body || n.input_size() < 2) continue;
      const int carried = n.input_size() - 2, i = origin[j];
      for (int k = 0; k < carried; ++k) {
        const auto dims = dims_of(types, constants, n.input(2 + k));
        if (!dims || initial_[i].count(k) || varies_.count({i, k})) continue;
        initial_[i][k] = tensor_type(element_type(types, constants, n.input(2 + k)), *dims);
        changed = true;  // the next round assumes it
      }
      for (const auto& [k, assumed] : initial_[i]) {
        if (varies_.count({i, k}) || 1 + k >= body->output_size() || k >= n.output_size()) continue;
        std::vector<int64_t> out;
        if (!static_dims(&body->output(1 + k).type(), out)) continue;
        std::vector<int64_t> in;
        static_dims(&assumed, in);
        if (out != in) {
          varies_.insert({i, k});
          changed = true;
        } else if (!n.output(k).empty() && !ruled.count(n.output(k)) && !has_static_dims(types, n.output(k))) {
          ruled[n.output(k)] = assumed;
          changed = true;
        }
      }
      // Scan outputs: a constant trip count and no condition input, or a count the user gave.
      int64_t count = -1;
      if (auto given = given_.find(n.name()); given != given_.end()) {
        count = given->second;
      } else {
        auto trip = constants.find(n.input(0));
        if (n.input(0).empty() || !n.input(1).empty() || trip == constants.end() || trip->second.size() != 1) continue;
        const auto trips = integer_scalar(trip->second);
        if (!trips) continue;
        count = *trips;
      }
      for (int s = carried; s < n.output_size(); ++s) {
        std::vector<int64_t> per_iteration;
        if (count < 0 || 1 + s >= body->output_size() || !static_dims(&body->output(1 + s).type(), per_iteration) ||
            n.output(s).empty() || ruled.count(n.output(s)) || has_static_dims(types, n.output(s)))
          continue;
        per_iteration.insert(per_iteration.begin(), count);
        ruled[n.output(s)] = tensor_type(body->output(1 + s).type().tensor_type().elem_type(), per_iteration);
        changed = true;
      }
    }
    return changed;
  }

 private:
  std::map<int, std::map<int, onnx::TypeProto>> initial_;  // Loop node -> carried index -> initial type
  std::set<std::pair<int, int>> varies_;                   // (Loop node, carried index) whose shape changes
  const std::map<std::string, int64_t>& given_;            // --trip-count, by Loop node name
};

// Sequences: ONNX's types keep one merged element shape per sequence, so SequenceAt loses the shape of
// the element it picks. memplan follows the chain of SequenceEmpty / SequenceConstruct / SequenceInsert /
// Identity to the element and takes its shape. A Loop with a constant trip count whose body builds a
// sequence (PyTorch's export of a scripted list, e.g. torch.split in MViT's pooling) gets an unrolled copy
// in the scratch model, under fresh names after every original node, so its elements are explicit too.
class SequenceElements {
 public:
  void unroll(onnx::GraphProto& g, int original_nodes, const ConstantMap& constants, int opset,
              const EvalLimits& limits) {
    alias_.clear();
    local_.clear();
    for (int j = 0; j < original_nodes; ++j) {
      if (g.node(j).op_type() != "Loop") continue;  // (before the copy: a round would copy every node)
      onnx::NodeProto n = g.node(j);                // a copy: g grows below
      const onnx::GraphProto* body = loop_body(n);
      if (!body || n.input_size() < 2) continue;
      auto trip = constants.find(n.input(0));
      if (trip == constants.end() || trip->second.size() != 1 || !body || !builds_sequence(*body) ||
          !always_continues(n, *body, constants))
        continue;
      const auto trips = integer_scalar(trip->second);
      if (!trips) continue;
      const int64_t count = *trips;
      const int carried = n.input_size() - 2;
      if (count < 0 || count > kMaxTrips || count * body->node_size() > kMaxUnrolledNodes ||
          n.output_size() != carried || body->input_size() != 2 + carried)
        continue;
      std::vector<std::string> state(n.input().begin() + 2, n.input().end());
      for (int64_t it = 0; it < count; ++it) {
        const std::string prefix = "__memplan_unrolled_" + std::to_string(j) + "_" + std::to_string(it) + "_";
        std::map<std::string, std::string> rename;
        auto* iter = g.add_initializer();
        iter->set_name(prefix + "iteration");
        iter->set_data_type(onnx::TensorProto::INT64);
        iter->add_int64_data(it);
        rename[body->input(0).name()] = iter->name();
        local_[iter->name()] = Tensor::int64_scalar(it);
        auto* cond = g.add_initializer();
        cond->set_name(prefix + "condition");
        cond->set_data_type(onnx::TensorProto::BOOL);
        cond->add_int32_data(1);
        rename[body->input(1).name()] = cond->name();
        local_[cond->name()] = Tensor::int64s({1}, {});
        local_[cond->name()].dtype = onnx::TensorProto::BOOL;
        for (int k = 0; k < carried; ++k) rename[body->input(2 + k).name()] = state[k];
        for (const auto& t : body->initializer()) {
          auto* copy = g.add_initializer();
          *copy = t;
          copy->set_name(prefix + t.name());
          rename[t.name()] = copy->name();
          if (auto value = read_tensor(t, limits.max_elements)) local_[copy->name()] = std::move(*value);
        }
        for (const auto& bn : body->node())
          for (const auto& out : bn.output())
            if (!out.empty()) rename[out] = prefix + out;
        for (const auto& bn : body->node()) {
          onnx::NodeProto copy = bn;
          copy.set_name(prefix + bn.name());
          for (auto& x : *copy.mutable_input())
            if (auto r = rename.find(x); r != rename.end()) x = r->second;  // else an outer-scope value
          for (auto& y : *copy.mutable_output())
            if (!y.empty()) y = rename[y];
          // Constant arithmetic of the iteration (indices, bounds) is evaluated here, so that ONNX's
          // inference of what follows sees initializers.
          if (fold(copy, g, constants, opset, limits)) continue;
          *g.add_node() = std::move(copy);
        }
        for (int k = 0; k < carried; ++k) {
          const std::string& out = body->output(1 + k).name();
          state[k] = rename.count(out) ? rename[out] : out;
        }
      }
      for (int k = 0; k < carried; ++k) alias_[n.output(k)] = state[k];
    }
  }

  // SequenceAt outputs whose element resolves to a value of static shape: added to `ruled`.
  // `origin`: the original node of each of the scratch model's first nodes (those may have moved back to `graph`).
  bool conclude(const onnx::GraphProto& scratch, const std::vector<int>& origin, const onnx::GraphProto& graph,
                const std::vector<bool>& folded, const TypeMap& types, const ConstantMap& constants,
                std::map<std::string, onnx::TypeProto>& ruled) {
    std::unordered_map<std::string, const onnx::NodeProto*> producer;  // made at the first SequenceAt
    bool changed = false;
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto& n = graph.node(i);
      if (folded[i] || n.op_type() != "SequenceAt" || n.input_size() < 2 || n.output_size() < 1) continue;
      if (ruled.count(n.output(0)) || has_static_dims(types, n.output(0))) continue;
      if (producer.empty())
        for (int j = 0; j < scratch.node_size(); ++j) {
          const bool original = static_cast<size_t>(j) < origin.size();
          const onnx::NodeProto& p = original ? graph.node(origin[static_cast<size_t>(j)]) : scratch.node(j);
          for (const auto& out : p.output()) producer[out] = &p;
        }
      auto pos = constants.find(n.input(1));
      std::vector<std::string> elements;
      if (pos == constants.end() || pos->second.size() != 1 ||
          !elements_of(n.input(0), producer, constants, elements, 0))
        continue;
      const auto position = integer_scalar(pos->second);
      if (!position) continue;
      int64_t k = *position;
      const int64_t size = static_cast<int64_t>(elements.size());
      if (k < -size || k >= size) continue;
      if (k < 0) k += size;
      const auto dims = dims_of(types, constants, elements[k]);
      if (!dims) continue;
      ruled[n.output(0)] = tensor_type(element_type(types, constants, elements[k]), *dims);
      changed = true;
    }
    return changed;
  }

 private:
  static constexpr int64_t kMaxTrips = 256, kMaxUnrolledNodes = 20000;

  // Evaluates an unrolled node whose inputs are all constants into initializers of `g`.
  bool fold(const onnx::NodeProto& n, onnx::GraphProto& g, const ConstantMap& constants, int opset,
            const EvalLimits& limits) {
    if (!is_default_domain(n.domain()) || n.output_size() == 0) return false;
    std::optional<std::vector<Tensor>> result;
    if (n.op_type() == "Constant") {
      if (auto t = constant_value(n, limits.max_elements)) result = std::vector<Tensor>{*t};
    } else if (can_evaluate(n.op_type())) {
      const auto inputs = constant_inputs(n, [&](const std::string& name) -> const Tensor* {
        if (auto l = local_.find(name); l != local_.end()) return &l->second;
        auto c = constants.find(name);
        return c == constants.end() ? nullptr : &c->second;
      });
      if (!inputs) return false;
      try {
        result = evaluate(n.op_type(), opset, eval_attributes(n, limits.max_elements), *inputs, limits);
      } catch (const EvalError&) {
        return false;  // the real Loop will meet it; the shape pass reports faults on main-graph nodes
      }
    }
    if (!result || result->size() < static_cast<size_t>(n.output_size())) return false;
    std::vector<onnx::TensorProto> protos;
    for (int k = 0; k < n.output_size(); ++k) {
      auto p = to_tensor_proto(n.output(k), (*result)[k]);
      if (!p) return false;
      protos.push_back(std::move(*p));
    }
    for (int k = 0; k < n.output_size(); ++k) {
      local_[n.output(k)] = (*result)[k];
      *g.add_initializer() = std::move(protos[k]);
    }
    return true;
  }

  ConstantMap local_;  // values of unrolled nodes folded into initializers

  // The loop runs its full trip count: no condition, or a constant true one the body passes on unchanged.
  static bool always_continues(const onnx::NodeProto& loop, const onnx::GraphProto& body,
                               const ConstantMap& constants) {
    auto is_true = [&](const std::string& name) {
      auto c = constants.find(name);
      return c != constants.end() && c->second.size() == 1 && c->second.at_f(0) != 0;
    };
    if (!loop.input(1).empty() && !is_true(loop.input(1))) return false;
    if (body.output_size() < 1 || body.input_size() < 2) return false;
    std::string cond = body.output(0).name();
    for (const auto& bn : body.node())
      if (bn.op_type() == "Identity" && bn.output_size() == 1 && bn.output(0) == cond && bn.input_size() == 1)
        cond = bn.input(0);
    // (ONNX Runtime's constant folding turns that Identity of an outer constant into an initializer of the body)
    for (const auto& t : body.initializer())
      if (t.name() == cond) {
        auto value = read_tensor(t, 1);
        return value && value->size() == 1 && value->at_f(0) != 0;
      }
    return cond == body.input(1).name() || is_true(cond);
  }

  static bool builds_sequence(const onnx::GraphProto& body) {
    for (const auto& n : body.node())
      if (n.op_type().rfind("Sequence", 0) == 0) return true;
    return false;
  }

  // The sequence's elements in order, by value name; false where the chain leaves what memplan follows.
  bool elements_of(const std::string& seq, const std::unordered_map<std::string, const onnx::NodeProto*>& producer,
                   const ConstantMap& constants, std::vector<std::string>& out, int depth) const {
    if (depth > 100000) return false;
    if (auto a = alias_.find(seq); a != alias_.end())
      return elements_of(a->second, producer, constants, out, depth + 1);
    auto p = producer.find(seq);
    if (p == producer.end()) return false;
    const onnx::NodeProto& n = *p->second;
    if (n.op_type() == "SequenceEmpty") {
      out.clear();
      return true;
    }
    if (n.op_type() == "SequenceConstruct") {
      out.assign(n.input().begin(), n.input().end());
      return true;
    }
    if (n.op_type() == "Identity" && n.input_size() == 1)
      return elements_of(n.input(0), producer, constants, out, depth + 1);
    if (n.op_type() != "SequenceInsert" || n.input_size() < 2 ||
        !elements_of(n.input(0), producer, constants, out, depth + 1))
      return false;
    int64_t at = static_cast<int64_t>(out.size());
    if (n.input_size() > 2 && !n.input(2).empty()) {
      auto c = constants.find(n.input(2));
      if (c == constants.end() || c->second.size() != 1) return false;
      const auto position = integer_scalar(c->second);
      if (!position) return false;
      at = *position;
      if (at < 0) at += static_cast<int64_t>(out.size());
      if (at < 0 || at > static_cast<int64_t>(out.size())) return false;
    }
    out.insert(out.begin() + at, n.input(1));
    return true;
  }

  std::map<std::string, std::string> alias_;  // Loop output -> its unrolled final value
};

// An If whose condition is a constant runs one branch: its outputs take that branch's inferred types
// (ONNX's inference merges both branches and loses dims where they differ).
bool rule_if_outputs(const onnx::GraphProto& scratch, const std::vector<int>& origin, const ConstantMap& constants,
                     const TypeMap& types, std::map<std::string, onnx::TypeProto>& ruled) {
  bool changed = false;
  for (size_t j = 0; j < origin.size(); ++j) {
    const onnx::NodeProto& n = scratch.node(static_cast<int>(j));
    if (!is_onnx_op(n, "If") || n.input_size() < 1) continue;
    auto cond = constants.find(n.input(0));
    if (cond == constants.end() || cond->second.size() != 1) continue;
    const std::string branch = cond->second.at_f(0) != 0 ? "then_branch" : "else_branch";
    for (const auto& a : n.attribute()) {
      if (a.name() != branch || !a.has_g()) continue;
      for (int k = 0; k < n.output_size() && k < a.g().output_size(); ++k) {
        const std::string& out = n.output(k);
        std::vector<int64_t> dims;
        if (out.empty() || ruled.count(out) || has_static_dims(types, out) ||
            !static_dims(&a.g().output(k).type(), dims))
          continue;
        ruled[out] = a.g().output(k).type();
        changed = true;
      }
    }
  }
  return changed;
}

// memplan's own shape rules for ops whose output dims ONNX 1.12's inference does not find although
// the input dims are static: the dims of output 0, or std::nullopt.
std::optional<std::vector<int64_t>> rule_output_dims(const onnx::NodeProto& n, const TypeMap& types,
                                                     const ConstantMap& constants) {
  auto constant = [&](int k) -> const Tensor* {
    if (n.input_size() <= k || n.input(k).empty()) return nullptr;
    auto c = constants.find(n.input(k));
    return c == constants.end() || c->second.is_float() ? nullptr : &c->second;
  };
  if (n.op_type() == "MaxUnpool") {
    // A constant output_shape is the output's shape (ONNX 1.12 then infers only the rank).
    const Tensor* shape = constant(2);
    if (!shape || shape->dims.size() != 1) return std::nullopt;
    for (int64_t d : shape->ints)
      if (d < 0) return std::nullopt;
    return shape->ints;
  }
  if (n.op_type() == "Compress") {
    // A constant condition decides how many slices are kept (the data need not be constant): those of its first
    // min(length, extent) entries that are true, along `axis`, or of the flattened input without it.
    const Tensor* condition = constant(1);
    auto dims = n.input_size() > 0 ? dims_of(types, constants, n.input(0)) : std::nullopt;
    if (!condition || !dims || condition->dims.size() != 1) return std::nullopt;
    std::optional<int64_t> axis;
    for (const auto& attr : n.attribute())
      if (attr.name() == "axis") axis = attr.i();
    const int64_t rank = static_cast<int64_t>(dims->size());
    if (axis && *axis < 0) *axis += rank;
    if (axis && (*axis < 0 || *axis >= rank)) return std::nullopt;
    int64_t extent = 1;
    if (axis) {
      extent = (*dims)[static_cast<size_t>(*axis)];
    } else {
      for (int64_t d : *dims) extent = d != 0 && extent > INT64_MAX / d ? INT64_MAX : extent * d;
    }
    int64_t kept = 0;
    const int64_t length = std::min<int64_t>(extent, static_cast<int64_t>(condition->ints.size()));
    for (int64_t k = 0; k < length; ++k) kept += condition->ints[static_cast<size_t>(k)] != 0;
    if (!axis) return std::vector<int64_t>{kept};
    (*dims)[static_cast<size_t>(*axis)] = kept;
    return dims;
  }
  if (n.op_type() != "Einsum") return std::nullopt;  // Einsum: ONNX 1.12 infers only the rank
  std::vector<std::vector<int64_t>> inputs;
  for (const auto& in : n.input()) {
    auto d = in.empty() ? std::nullopt : dims_of(types, constants, in);
    if (!d) return std::nullopt;
    inputs.push_back(*d);
  }
  for (const auto& attr : n.attribute())
    if (attr.name() == "equation") return einsum_output_dims(attr.s(), inputs);
  return std::nullopt;
}

// Whether a node not folded, reading (directly or through other such nodes) an output of `folded_now`, has an
// output whose shape `types` does not fully know: only then can another inference round with those constants
// find more.
// Who reads each value: for a name, its first entry in `head`, each entry's node and the next entry after it (one
// table and two arrays, not a list per name: a graph of shape computations has hundreds of thousands of names).
struct Readers {
  std::unordered_map<std::string_view, int> head;
  std::vector<int> node, next;
  explicit Readers(const onnx::GraphProto& graph) {
    head.reserve(static_cast<size_t>(graph.node_size()) * 2);
    for (int i = 0; i < graph.node_size(); ++i)
      for (const auto& in : graph.node(i).input()) {
        if (in.empty()) continue;
        auto [it, fresh] = head.try_emplace(in, -1);
        node.push_back(i);
        next.push_back(it->second);
        it->second = static_cast<int>(node.size()) - 1;
      }
  }
};

bool unknown_downstream(const onnx::GraphProto& graph, const Readers& readers, const std::vector<bool>& folded,
                        const std::vector<int>& folded_now, const TypeMap& types) {
  std::vector<bool> seen(static_cast<size_t>(graph.node_size()), false);
  std::vector<std::string_view> names;
  for (int i : folded_now)
    for (const auto& out : graph.node(i).output()) names.push_back(out);
  while (!names.empty()) {
    auto it = readers.head.find(names.back());
    names.pop_back();
    if (it == readers.head.end()) continue;
    for (int e = it->second; e >= 0; e = readers.next[e]) {
      const int r = readers.node[e];
      if (folded[r] || seen[r]) continue;
      seen[r] = true;
      for (const auto& out : graph.node(r).output()) {
        if (out.empty()) continue;
        if (!has_static_dims(types, out)) return true;
        names.push_back(out);
      }
    }
  }
  return false;
}

ShapePassReport complete_shapes(onnx::ModelProto& model, const std::string& path, const EvalLimits& limits,
                                const std::map<std::string, int64_t>& trip_counts) {
  ShapePassReport report;
  int opset = 1;
  for (const auto& op : model.opset_import())
    if (is_default_domain(op.domain())) opset = static_cast<int>(op.version());

  const onnx::GraphProto& graph = model.graph();
  ConstantMap constants;
  for (const auto& init : graph.initializer())
    if (auto t = read_tensor(init, limits.max_elements)) constants.emplace(init.name(), std::move(*t));

  std::vector<bool> folded(graph.node_size(), false);
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& n = graph.node(i);
    if (is_onnx_op(n, "Constant") && n.output_size() == 1)
      if (auto t = constant_value(n, limits.max_elements); t && to_tensor_proto(n.output(0), *t)) {
        constants.emplace(n.output(0), std::move(*t));
        folded[i] = true;
      }
  }
  const std::vector<int> order = topological_order(graph);
  // ONNX's inference walks nodes in list order and can crash on a node whose inputs come later (load-time
  // rewrites append nodes), so the scratch model lists them topologically; nodes on a cycle go last
  // (the graph builder reports the cycle).
  std::vector<int> inference_order = order;
  {
    std::vector<bool> listed(graph.node_size(), false);
    for (int i : order) listed[i] = true;
    for (int i = 0; i < graph.node_size(); ++i)
      if (!listed[i]) inference_order.push_back(i);
  }
  onnx::ShapeInferenceOptions inference(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);
  // Who reads each value (a node with a body may read any through it: then every fold counts as progress); made
  // when first needed.
  std::optional<Readers> readers;
  bool has_subgraphs = false;
  for (int i = 0; i < graph.node_size() && !has_subgraphs; ++i) has_subgraphs = holds_subgraph(graph.node(i));

  // On the heap: a child process (isolated.h) leaves it to its exit to free (0.1 s at 100k nodes).
  auto scratch_owner = std::make_unique<onnx::ModelProto>();
  onnx::ModelProto& scratch = *scratch_owner;
  // The graph outputs and the declared value_info entries are lent to each round's scratch model too, not copied (a
  // graph with a million outputs copied them each round: a fifth of the shape pass at 1M nodes). Inference merges
  // into them, so a later round starts from what the earlier ones found: it only adds to it (a second round knows
  // more constants). The value_info entries are held here meanwhile; the model's are written back at the end.
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> declared_entries;
  declared_entries.Swap(model.mutable_graph()->mutable_value_info());
  // Taken out of the scratch model (first in its lists) before it is copied over or deleted. (The scratch model's
  // graph and lists stay the same objects when a model is copied over it.)
  LentList<onnx::ValueInfoProto> lent_value_info(scratch.mutable_graph()->mutable_value_info());
  LentList<onnx::ValueInfoProto> lent_outputs(scratch.mutable_graph()->mutable_output());
  std::vector<int> scratch_origin;  // scratch node -> original node index
  // Output types memplan's own shape rules found where ONNX's inference stops; given to every later
  // inference round as value_info so that it carries them on.
  std::map<std::string, onnx::TypeProto> ruled;
  LoopShapes loops(trip_counts);
  SequenceElements sequences;
  constexpr int kMaxRounds = 64;
  for (int round = 0; round < kMaxRounds; ++round) {
    // The scratch model: evaluated nodes replaced by initializers holding their values. Without subgraphs (which
    // inference writes into) it borrows the model's nodes: their pointers, not copies, and not swapped in and out,
    // which would write every node twice a round. The initializers are always borrowed (inference reads them only).
    auto* mg = model.mutable_graph();
    lent_value_info.give_back();  // (the last round's, before the copy clears the scratch model's lists)
    lent_outputs.give_back();
    {
      google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
      google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
      google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> outputs;
      nodes.Swap(mg->mutable_node());
      initializers.Swap(mg->mutable_initializer());
      outputs.Swap(mg->mutable_output());
      scratch = model;
      nodes.Swap(mg->mutable_node());
      initializers.Swap(mg->mutable_initializer());
      outputs.Swap(mg->mutable_output());
    }
    auto* sg = scratch.mutable_graph();
    for (auto& vi : declared_entries) lent_value_info.lend(&vi);
    for (auto& vi : *mg->mutable_output()) lent_outputs.lend(&vi);
    // Taken out of the scratch model at the end of the round, whatever happens on the way: the scratch model must
    // never own them. (Until then the round's conclusions read the scratch model's nodes.)
    LentList<onnx::TensorProto> lent_initializers(sg->mutable_initializer());
    LentList<onnx::NodeProto> lent_nodes(sg->mutable_node());
    for (auto& t : *mg->mutable_initializer()) lent_initializers.lend(&t);
    scratch_origin.clear();
    for (int i : inference_order) {
      if (folded[i]) {
        for (const auto& out : graph.node(i).output())
          if (auto p = to_tensor_proto(out, constants.at(out))) *sg->add_initializer() = std::move(*p);
        continue;
      }
      if (has_subgraphs) {
        *sg->add_node() = graph.node(i);
      } else {
        lent_nodes.lend(mg->mutable_node(i));
      }
      scratch_origin.push_back(i);
    }
    for (const auto& [name, type] : ruled) {
      auto* vi = sg->add_value_info();
      vi->set_name(name);
      *vi->mutable_type() = type;
    }
    for (auto& out : *sg->mutable_output())  // a graph output's declared type is what inference merges into
      if (auto r = ruled.find(out.name()); r != ruled.end()) *out.mutable_type() = r->second;
    loops.assume(*sg, scratch_origin);
    sequences.unroll(*sg, static_cast<int>(scratch_origin.size()), constants, opset, limits);
    try {
      infer_model_shapes(scratch, onnx::OpSchemaRegistry::Instance(), inference);
    } catch (const std::exception& e) {
      report.warnings.push_back(std::string("ONNX shape inference stopped early: ") + e.what());
    }
    ++report.rounds;

    TypeMap types;
    types.reserve(static_cast<size_t>(sg->value_info_size() + sg->output_size() + sg->input_size()));
    for (const auto& vi : sg->value_info()) types[vi.name()] = &vi.type();
    for (const auto& vi : sg->output()) types[vi.name()] = &vi.type();
    for (const auto& vi : sg->input()) types[vi.name()] = &vi.type();

    // An output shape from a rule (rule_output_dims), for a node that is not folded: whether it gave one.
    auto apply_rule = [&](const onnx::NodeProto& n) {
      auto dims = rule_output_dims(n, types, constants);
      if (!dims || ruled.count(n.output(0)) || has_static_dims(types, n.output(0))) return false;
      ruled[n.output(0)] = tensor_type(element_type(types, constants, n.input(0)), *dims);
      return true;
    };
    std::vector<int> folded_now;  // nodes this round's evaluation folds
    bool progress = loops.conclude(*sg, scratch_origin, types, constants, ruled);
    progress = sequences.conclude(*sg, scratch_origin, graph, folded, types, constants, ruled) || progress;
    progress = rule_if_outputs(*sg, scratch_origin, constants, types, ruled) || progress;
    for (int i : order) {
      if (folded[i]) continue;
      const onnx::NodeProto& n = graph.node(i);
      if (!is_default_domain(n.domain()) || n.output_size() == 0 || n.output(0).empty()) continue;
      const std::string& op = n.op_type();
      std::optional<std::vector<Tensor>> result;
      try {
        if (op == "Shape" || op == "Size") {
          const auto dims = n.input_size() > 0 ? dims_of(types, constants, n.input(0)) : std::nullopt;
          if (!dims) continue;
          if (op == "Shape")
            result = std::vector<Tensor>{evaluate_shape(*dims, eval_attributes(n, limits.max_elements))};
          else
            result = std::vector<Tensor>{Tensor::int64_scalar(Tensor::int64s({}, *dims).size())};
        } else if (can_evaluate(op)) {
          const auto inputs = constant_inputs(n, [&](const std::string& name) -> const Tensor* {
            auto c = constants.find(name);
            return c == constants.end() ? nullptr : &c->second;
          });
          if (!inputs) {
            progress = apply_rule(n) || progress;
            continue;
          }
          result = evaluate(op, opset, eval_attributes(n, limits.max_elements), *inputs, limits);
        } else {
          progress = apply_rule(n) || progress;
          continue;
        }
      } catch (const EvalError& e) {
        fail_input(path, describe_node(n, i) + ": " + e.what() +
                             " while computing shapes (check the --dim and --input-shape values)");
      }
      if (!result || result->size() < static_cast<size_t>(n.output_size())) continue;
      bool representable = true;
      for (int k = 0; k < n.output_size(); ++k)
        if (!n.output(k).empty() && !tensor_proto_holds((*result)[k].dtype)) representable = false;
      if (!representable) continue;
      for (int k = 0; k < n.output_size(); ++k)
        if (!n.output(k).empty()) constants[n.output(k)] = std::move((*result)[k]);
      folded[i] = true;
      folded_now.push_back(i);
      ++report.evaluated_nodes;
    }
    // Another round only if this one's constants can tell inference something: when a node downstream of them
    // still has an output of unknown shape (a graph of shape computations folds all of them in one pass, and the
    // second inference of the whole graph found nothing).
    const bool look_downstream =
        !progress && !folded_now.empty() && !has_subgraphs && unknown_anywhere(graph, folded, types);
    if (look_downstream && !readers) readers.emplace(graph);
    if (!progress && !folded_now.empty())
      progress = has_subgraphs || (look_downstream && unknown_downstream(graph, *readers, folded, folded_now, types));
    if (!progress) break;
  }

  // The declared value_info entries are the scratch model's own from here on (written back below as the others are).
  {
    std::vector<onnx::ValueInfoProto*> taken(static_cast<size_t>(declared_entries.size()));
    declared_entries.UnsafeArenaExtractSubrange(0, declared_entries.size(), taken.data());
    lent_value_info.hand_over();
  }

  // The final types, by name: pointers into the scratch model, and the evaluated constants' types.
  // `placed`: the type has its place in the model (written back below, or the name is declared there already).
  // `entry`: the position of the scratch model's value_info entry the type is in, when it is (that entry is moved
  // whole to the model below).
  struct FinalType {
    onnx::TypeProto* type = nullptr;
    int entry = -1;
    bool placed = false;
  };
  absl::flat_hash_map<std::string_view, FinalType> final_types;
  final_types.reserve(static_cast<size_t>(scratch.graph().value_info_size() + scratch.graph().output_size()) +
                      constants.size());
  for (int k = 0; k < scratch.graph().value_info_size(); ++k) {
    onnx::ValueInfoProto* vi = scratch.mutable_graph()->mutable_value_info(k);
    final_types[vi->name()] = {vi->mutable_type(), k, false};
  }
  for (auto& vi : *scratch.mutable_graph()->mutable_output()) final_types[vi.name()] = {vi.mutable_type(), -1, false};
  std::deque<onnx::TypeProto> constant_types;
  for (int i = 0; i < graph.node_size(); ++i)
    if (folded[i])
      for (const auto& out : graph.node(i).output()) {
        auto c = constants.find(out);
        if (c == constants.end()) continue;
        // (Inference gave most of them this very type already: kept, no copy made.)
        if (auto it = final_types.find(out); it != final_types.end() && same_static_type(*it->second.type, c->second))
          continue;
        onnx::TypeProto& t = constant_types.emplace_back();
        t.mutable_tensor_type()->set_elem_type(c->second.dtype);
        auto* shape = t.mutable_tensor_type()->mutable_shape();
        for (int64_t d : c->second.dims) shape->add_dim()->set_dim_value(d);
        final_types[out] = {&t, -1, false};
      }
  auto final_type = [&](const std::string& name) -> const onnx::TypeProto* {
    auto it = final_types.find(name);
    return it == final_types.end() ? nullptr : it->second.type;
  };
  // Values that cannot be static, and why.
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& n = graph.node(i);
    if (!data_dependent_op(n.domain(), n.op_type())) continue;
    for (int k = 0; k < n.output_size(); ++k) {
      const std::string& out = n.output(k);
      std::vector<int64_t> dims;
      if (out.empty() || static_dims(final_type(out), dims)) continue;
      std::string why = "its size depends on the values computed by " + describe_node(n, i);
      if (n.op_type() == "Loop") {
        const int carried = n.input_size() - 2;
        const bool counted = !n.input(0).empty() && constants.count(n.input(0)) && n.input(1).empty();
        why = k < carried ? "the loop-carried value's shape changes across the iterations of " + describe_node(n, i)
              : counted   ? "the shape of each iteration's slice varies in the body of " + describe_node(n, i)
                          : "its length is the iteration count of " + describe_node(n, i) +
                              ", known only at run time (the trip count is not a constant, or a condition "
                              "can end the loop early); --trip-count " +
                              (n.name().empty() ? std::string("NODE") : n.name()) + "=N plans it for N iterations";
      }
      report.dynamic[out] = "data-dependent: " + why;
    }
  }
  // Write back: each final type is moved out of the scratch model or `constant_types`, which are not read after
  // this, to the one place it lands: a node output's value_info entry whole (name and type, nothing copied), a
  // graph output's or a constant's type by a swap.
  auto* g = model.mutable_graph();
  auto declared = [&](const std::string& name) {
    if (auto it = final_types.find(name); it != final_types.end()) it->second.placed = true;
  };
  for (const auto& vi : g->input()) declared(vi.name());
  for (auto& vi : *g->mutable_output()) {
    auto it = final_types.find(vi.name());
    if (it == final_types.end()) continue;
    vi.mutable_type()->Swap(it->second.type);  // (the scratch model's outputs are the model's: a swap with itself)
    it->second.placed = true;
  }
  lent_outputs.give_back();
  for (const auto& t : g->initializer()) declared(t.name());
  g->clear_value_info();
  g->mutable_value_info()->Reserve(static_cast<int>(final_types.size()));
  // The scratch model's entries, owned here from now on: those not moved are deleted at the end (left to the exit in
  // a child, as the scratch model is).
  std::vector<onnx::ValueInfoProto*> entries(static_cast<size_t>(scratch.graph().value_info_size()));
  scratch.mutable_graph()->mutable_value_info()->ExtractSubrange(0, static_cast<int>(entries.size()), entries.data());
  for (const auto& n : g->node())
    for (const auto& out : n.output()) {
      if (out.empty()) continue;
      auto it = final_types.find(out);
      if (it == final_types.end() || it->second.placed) continue;
      if (it->second.entry >= 0) {
        g->mutable_value_info()->AddAllocated(std::exchange(entries[static_cast<size_t>(it->second.entry)], nullptr));
      } else {
        auto* vi = g->add_value_info();
        vi->set_name(out);
        vi->mutable_type()->Swap(it->second.type);
      }
      it->second.placed = true;
    }
  final_types.clear();  // (its keys view names in the entries deleted next)
  if (!in_isolated_child())
    for (onnx::ValueInfoProto* e : entries) delete e;

  // Subgraphs: take the inferred bodies (the nodes owning them are never evaluated away). Without them the scratch
  // model's nodes were borrowed and are given back by now.
  for (size_t j = 0; has_subgraphs && j < scratch_origin.size(); ++j) {
    const auto& inferred = scratch.graph().node(static_cast<int>(j));
    auto* original = g->mutable_node(scratch_origin[j]);
    for (int a = 0; a < original->attribute_size(); ++a)
      if (original->attribute(a).type() == onnx::AttributeProto::GRAPH ||
          original->attribute(a).type() == onnx::AttributeProto::GRAPHS)
        *original->mutable_attribute(a) = inferred.attribute(a);
  }

  if (in_isolated_child()) (void)scratch_owner.release();
  return report;
}

}  // namespace memplan::onnx_io
