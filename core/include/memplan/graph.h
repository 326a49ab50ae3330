// The read-only graph view every stage works on: plain data, indices instead of pointers.
// onnx_io/ fills it from a model file; nothing here knows about protobuf.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "memplan/dtype.h"

namespace memplan {

using ValueId = int32_t;  // index into Graph::values
using NodeId = int32_t;   // index into Graph::nodes
inline constexpr int32_t kNoId = -1;

// One dimension: a known extent, or a symbol (dim_param), or neither.
struct Dim {
  int64_t value = -1;  // >= 0 when known
  std::string param;   // symbolic name, kept even when empty
  bool known() const { return value >= 0; }
  bool operator==(const Dim&) const = default;
};

enum class TypeKind { kUnknown, kTensor, kSparseTensor, kSequence, kMap, kOptional };
const char* type_kind_name(TypeKind k);

struct Value {
  ValueId index = kNoId;
  std::string name;
  TypeKind type_kind = TypeKind::kUnknown;
  DType dtype = kDTypeUndefined;  // element type for tensors
  bool has_shape = false;         // the rank is known
  std::vector<Dim> dims;
  std::optional<uint64_t> bytes;  // set when the type and every dim are known
  // Why the size stays unknown when it does (empty when known); the shape pass fills it.
  std::string unknown_reason;

  bool is_graph_input = false;  // listed in the graph's inputs (may also be an initializer)
  bool is_initializer = false;  // an initializer, or a Constant node's output (ORT folds those)
  bool is_graph_output = false;
  bool is_outer_scope = false;  // a subgraph's use of a value from an enclosing graph

  NodeId producer = kNoId;
  std::vector<NodeId> consumers;           // nodes reading it as an explicit input, ascending, once each
  std::vector<NodeId> implicit_consumers;  // nodes reading it inside one of their subgraphs

  bool is_tensor() const { return type_kind == TypeKind::kTensor; }
  bool shape_known() const;  // rank and every dim known
  std::optional<uint64_t> element_count() const;
};

struct Attribute {
  enum class Kind { kInt, kFloat, kString, kInts, kFloats, kStrings, kGraph, kGraphs, kTensor, kOther };
  std::string name;
  Kind kind = Kind::kOther;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::vector<int32_t> subgraphs;  // indices into the owning Graph::subgraphs (kGraph, kGraphs)
};

struct Node {
  NodeId index = kNoId;
  std::string name;  // may be empty: ONNX allows unnamed nodes
  std::string op_type;
  std::string domain;                    // "" for the default ai.onnx domain
  std::vector<ValueId> inputs;           // kNoId for a missing optional input
  std::vector<ValueId> outputs;          // kNoId for a missing optional output
  std::vector<ValueId> implicit_inputs;  // outer values used anywhere inside its subgraphs, recursively
  std::vector<Attribute> attributes;
  std::vector<int32_t> subgraphs;  // indices into Graph::subgraphs

  const Attribute* attribute(const std::string& attr_name) const;
  int64_t int_attribute(const std::string& attr_name, int64_t fallback) const;
};

// A node as messages name it: "node 'its name' (its op)", or by position, "node #3 (Relu)", where it has no name
// (ONNX allows unnamed nodes); the op with its domain where that is not ai.onnx. Made safe for a terminal.
std::string describe_node(const Node& n);

// Calls fn(v) for each value `node` reads: its inputs (omitted optional ones skipped), then its implicit inputs (the
// outer values its subgraphs read). The order the planner's passes and ORT's Node::InputDefs walk follow.
template <typename Fn>
void for_each_input_value(const Node& node, Fn&& fn) {
  for (ValueId v : node.inputs)
    if (v != kNoId) fn(v);
  for (ValueId v : node.implicit_inputs) fn(v);
}

struct Graph {
  std::string name;
  std::vector<Value> values;          // in ONNX Runtime's OrtValue index order (see onnx_io/graph_builder.cc)
  std::vector<Node> nodes;            // in file order: Node::index is ORT's NodeIndex
  std::vector<ValueId> inputs;        // declared graph inputs, in order
  std::vector<ValueId> outputs;       // declared graph outputs, in order
  std::vector<ValueId> initializers;  // in file order, Constant-node outputs after them
  std::vector<ValueId> outer_scope;   // values this graph reads from enclosing graphs

  // Subgraphs of this graph's nodes (If/Loop/Scan bodies), each knowing its owner.
  std::vector<Graph> subgraphs;
  NodeId parent_node = kNoId;    // the owning node in the enclosing graph
  std::string parent_attribute;  // "then_branch", "body", ...

  // (an open-addressing table: one lookup per value in the loader and in every graph edit; looked up by string_view)
  absl::flat_hash_map<std::string, ValueId> value_by_name;
  // ONNX Runtime's Graph::name_generator_ after its load-time rewrites: names it generates later (Memcpy
  // nodes) continue from it.
  int ort_name_counter = 0;

  const Value* find_value(const std::string& value_name) const;
  size_t total_subgraph_count() const;  // recursively
};

// Identity and load facts of a model file.
struct Model {
  std::string path;
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;  // domain ("" = ai.onnx) -> version
  std::string producer_name;
  Graph graph;
  int constant_nodes_folded = 0;       // Constant nodes turned into initializers (as ORT does at load)
  int ort_casts_removed = 0;           // duplicate Cast nodes ORT removes at load, removed here too
  int ort_functions_inlined = 0;       // calls of the model's own functions, and function ops ORT has no kernel
                                       // for, replaced by their bodies
  int shape_pass_rounds = 0;           // ONNX inference runs of the shape pass
  int shape_pass_evaluated_nodes = 0;  // shape-computing nodes memplan evaluated
  std::vector<std::string> warnings;
};

// "[1,3,N,?]": known dims, symbols, '?' for neither; "?" when the rank is unknown.
std::string shape_text(const Value& value);

// Sets every value's producer, consumers and implicit consumers from the nodes (previous links cleared).
void link_values(Graph& graph);

// Computes Value::bytes from dtype and dims; false when the byte count overflows 64 bits.
bool compute_value_bytes(Value& value);

}  // namespace memplan
