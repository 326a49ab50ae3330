// Internal to onnx_io/: the protobuf-facing steps of loading, kept apart so each can be tested.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memplan/graph.h"
#include "memplan/onnx_io/load.h"

namespace memplan::onnx_io {

// ONNX's default operator domain, which a model may write as "" or as "ai.onnx".
inline bool is_default_domain(std::string_view domain) {
  return domain.empty() || domain == "ai.onnx";
}
// A domain as memplan's graph and opset maps key it: "" for the default.
inline std::string domain_key(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}
// Whether `n` is ONNX's own `op_type` (Constant, Loop, STFT, ...), not a custom domain's op of that name.
inline bool is_onnx_op(const onnx::NodeProto& n, std::string_view op_type) {
  return n.op_type() == op_type && is_default_domain(n.domain());
}

// Parses and checks the container: non-empty, a valid ModelProto with a graph.
onnx::ModelProto parse_model(const std::string& path, const std::string& bytes);

// Applies --dim and --input-shape to the model's declared types (main graph and subgraphs). Returns warnings (e.g. a
// --dim name that no value uses).
std::vector<std::string> apply_overrides(onnx::ModelProto& model, const ShapeOverrides& overrides,
                                         const std::string& path);

// "node 'NAME' (OpType)", or "node #POSITION (OpType)" for a node without a name, the op with its domain where that
// is not ai.onnx (as describe_node of the graph view's Node); names escaped for a terminal.
std::string describe_node(const onnx::NodeProto& n, int position);

// Builds the graph view from a (shape-inferred) model. Throws Error(kBadInput) for structural faults.
Model build_model(const onnx::ModelProto& proto, const std::string& path);

// The same in two halves, so that the first can run while shape inference does: the structure (values, nodes,
// producers and consumers, the acyclic check) from a model without subgraphs, then the types of `proto`, a model with
// the same nodes (the structure's model after inference wrote value_info and outputs). Together they make what
// build_model makes. same_structure: whether `proto` still has the inputs and outputs the structure was built with.
Model build_model_structure(const onnx::ModelProto& proto, const std::string& path);
bool same_structure(const Model& model, const onnx::ModelProto& proto);
// `table`: the graph's value_info and outputs from an inference child (types_table.h), read instead of proto's.
class TypesTable;
void apply_model_types(Model& model, const onnx::ModelProto& proto, const std::string& path,
                       const TypesTable* table = nullptr);
// apply_model_types reads of the nodes only the Constant ones (it folds them): the others can be dropped once the
// structure is built, their memory reused for what follows (at 1M nodes, ~300 MB of protobuf objects).
void drop_nodes_but_constants(onnx::GraphProto& graph);

// Whether a node holds a subgraph: an attribute of type GRAPH or GRAPHS, or one carrying graphs whatever type it
// claims (inference and the loaders look inside either).
inline bool holds_subgraph(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS || a.has_g() ||
        a.graphs_size() > 0)
      return true;
  return false;
}

// The writer of `name` among the `nodes_back` nodes before node i of `g`, as (node, output position), found by
// comparing names: a node's input is mostly written a few nodes before it (a chain, a residual), and in a graph of a
// million nodes a table's lookup is a cache miss. At most 32 outputs are compared (a Split of 40,000 outputs read by
// one Concat: every input compared with every output was quadratic); nullopt where it was not found so, and the
// caller's table decides.
inline std::optional<std::pair<int, int>> written_near(const onnx::GraphProto& g, int i, const std::string& name,
                                                       int nodes_back) {
  constexpr int kMostCompared = 32;
  int compared = 0;
  for (int j = i - 1; j >= 0 && j >= i - nodes_back; --j) {
    const onnx::NodeProto& writer = g.node(j);
    for (int k = 0; k < writer.output_size(); ++k)
      if (++compared > kMostCompared)
        return std::nullopt;
      else if (writer.output(k) == name)
        return std::pair{j, k};
  }
  return std::nullopt;
}

// Calls f on every subgraph `n` holds (its GRAPH and GRAPHS attributes), mutable or read-only as `n` is.
template <typename F>
void for_each_subgraph(const onnx::NodeProto& n, F&& f) {
  for (const auto& a : n.attribute()) {
    if (a.has_g()) f(a.g());
    for (const auto& sub : a.graphs()) f(sub);
  }
}
template <typename F>
void for_each_subgraph(onnx::NodeProto& n, F&& f) {
  for (auto& a : *n.mutable_attribute()) {
    if (a.has_g()) f(*a.mutable_g());
    for (auto& sub : *a.mutable_graphs()) f(sub);
  }
}

// Calls fn on the type of every input, output and value_info that `g` and the subgraphs inside it declare (those
// with a type), in that order, the subgraphs after the graph's own.
template <typename Fn>
void for_each_declared_type(onnx::GraphProto& g, Fn& fn) {
  for (auto* list : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()})
    for (auto& vi : *list)
      if (vi.has_type()) fn(*vi.mutable_type());
  for (auto& node : *g.mutable_node())
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) for_each_declared_type(*attr.mutable_g(), fn);
      for (auto& sub : *attr.mutable_graphs()) for_each_declared_type(sub, fn);
    }
}

// Calls fn on every node of `g` and of the subgraphs inside it, each node before the subgraphs its attributes hold.
template <typename Fn>
void for_each_node(onnx::GraphProto& g, Fn& fn) {
  for (auto& node : *g.mutable_node()) {
    fn(node);
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) for_each_node(*attr.mutable_g(), fn);
      for (auto& sub : *attr.mutable_graphs()) for_each_node(sub, fn);
    }
  }
}

// Elements of one model lent to a list of a temporary model (pointers, not copies: a million nodes are not copied for
// an inference round), first in that list, and counted so that they are taken out again, not deleted, before the list
// is cleared or its model destroyed: by give_back(), else when the LentList goes. Elements the temporary model owns
// follow them in the list.
template <typename T>
class LentList {
 public:
  explicit LentList(google::protobuf::RepeatedPtrField<T>* borrower) : borrower_(borrower) {}
  ~LentList() { give_back(); }
  LentList(const LentList&) = delete;
  LentList& operator=(const LentList&) = delete;

  void lend(T* element) {
    if (borrower_->size() != count_)  // (given back from the front: nothing may stand before a lent element)
      throw std::logic_error("LentList: lending after the borrower's own elements");
    borrower_->UnsafeArenaAddAllocated(element);
    ++count_;
  }
  void give_back() {
    std::vector<T*> taken(static_cast<size_t>(count_));
    borrower_->UnsafeArenaExtractSubrange(0, count_, taken.data());
    count_ = 0;
  }
  int size() const { return count_; }  // how many are lent (the borrower's first ones)
  // The lent elements become the borrower's own (the lender has let go of them).
  void hand_over() { count_ = 0; }

 private:
  google::protobuf::RepeatedPtrField<T>* borrower_;
  int count_ = 0;
};

}  // namespace memplan::onnx_io
