// Builds the read-only graph view from a parsed ModelProto.
//
// Value indices follow ONNX Runtime's OrtValue index order (SessionState::CreateGraphInfo), so plans can
// be compared value by value with ORT's: declared graph inputs first, then for each node in NodeIndex
// (file) order its inputs, implicit inputs and outputs (first occurrence only), then graph outputs.
// Like ORT, Constant nodes become initializers at load and take no NodeIndex.
#include <absl/container/flat_hash_map.h>
#include <onnx/defs/schema.h>

#include <array>
#include <functional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "memplan/error.h"
#include "memplan/execution_order.h"
#include "memplan/text_escape.h"
#include "proto_model.h"
#include "types_table.h"

namespace memplan::onnx_io {
namespace {

// Names visible from a graph: its own definitions, then each enclosing graph's.
struct Scope {
  const Scope* parent = nullptr;
  struct Definition {
    int who;             // who defines it (GraphBuilder::build's codes)
    ValueId id = kNoId;  // its value in the graph being built, once made
  };
  // One table for "is it defined here" and "which value is it": on a graph of a million nodes each lookup is a cache
  // miss, so an open-addressing table of positions (one probe, mostly) rather than a node per name. Keys view names
  // in the proto, which outlives the build; a definition keeps its position as others are added.
  std::vector<Definition> definitions;
  absl::flat_hash_map<std::string_view, int32_t> names;
  bool visible(std::string_view name) const {
    for (const Scope* s = this; s; s = s->parent)
      if (s->names.contains(name)) return true;
    return false;
  }
  // The definition of `name` here, or nullptr.
  Definition* find(std::string_view name) {
    auto it = names.find(name);
    return it == names.end() ? nullptr : &definitions[static_cast<size_t>(it->second)];
  }
  // `name`'s position, defined by `who` unless it was already (then `fresh` is false and `who` is ignored).
  int32_t define(std::string_view name, int who, bool& fresh) {
    auto [it, inserted] = names.try_emplace(name, static_cast<int32_t>(definitions.size()));
    fresh = inserted;
    if (inserted) definitions.push_back(Definition{who});
    return it->second;
  }
  static constexpr int kOuterScope = -3;  // read here, defined in an enclosing graph
};

bool is_constant_node(const onnx::NodeProto& n) {
  return is_onnx_op(n, "Constant");
}

class GraphBuilder {
 public:
  GraphBuilder(const std::string& path, const std::map<std::string, int64_t>& opsets, int& constants_folded)
      : path_(path), opsets_(opsets), constants_folded_(constants_folded) {}

  Graph build(const onnx::GraphProto& proto, const Scope* outer, const std::string& context) {
    Graph graph = build_structure(proto, outer, context);
    apply_types(graph, proto);
    link_and_check(graph);
    return graph;
  }

  // Values, nodes, names, subgraphs (built whole) and which values are graph inputs and outputs: everything but
  // the types, which shape inference changes.
  Graph build_structure(const onnx::GraphProto& proto, const Scope* outer, const std::string& context) {
    Graph graph;
    graph.name = proto.name();
    context_ = context;

    // Everything this graph defines, with each value's single definition: who defines it, as a code (a node's
    // position, or one of the two below) turned into words only for a message.
    constexpr int kGraphInput = -1, kInitializer = -2;
    Scope scope{outer, {}, {}};
    auto definer_text = [&](int who) {
      return who == kGraphInput    ? std::string("a graph input")
             : who == kInitializer ? std::string("an initializer")
                                   : describe_node(proto.node(who), who);
    };
    auto define = [&](const std::string& name, int who) -> int32_t {
      bool fresh = false;
      const int32_t at = scope.define(name, who, fresh);
      const int before = scope.definitions[static_cast<size_t>(at)].who;
      if (!fresh && !(who == kInitializer && before == kGraphInput) && !(who == kGraphInput && before == kInitializer))
        fail("value '" + name + "' is defined twice: by " + definer_text(before) + " and by " + definer_text(who) +
             "; each value must have exactly one producer");
      return at;
    };
    // (sized for what is defined: a table reserved for twice that took twice the memory, fresh pages at 1M nodes)
    size_t defined =
        static_cast<size_t>(proto.input_size() + proto.initializer_size() + proto.sparse_initializer_size());
    for (const auto& n : proto.node()) defined += static_cast<size_t>(n.output_size());
    scope.names.reserve(defined);
    scope.definitions.reserve(defined);
    const size_t expected_values =
        static_cast<size_t>(proto.input_size() + proto.initializer_size() + 2 * proto.node_size());
    graph.values.reserve(expected_values);
    graph.nodes.reserve(static_cast<size_t>(proto.node_size()));
    for (const auto& vi : proto.input()) define(vi.name(), kGraphInput);
    for (const auto& t : proto.initializer()) define(t.name(), kInitializer);
    for (const auto& t : proto.sparse_initializer()) define(t.values().name(), kInitializer);
    // Each node output's definition, in order (-1 for an omitted one), kept so that neither the node that writes it
    // nor the next node, when it reads it, looks it up again.
    constexpr int32_t kOmitted = -1;
    std::vector<int32_t> output_definitions;
    output_definitions.reserve(defined);
    for (int i = 0; i < proto.node_size(); ++i)
      for (const auto& out : proto.node(i).output())
        output_definitions.push_back(out.empty() ? kOmitted : define(out, i));
    auto definition_at = [&](int32_t at) -> Scope::Definition& { return scope.definitions[static_cast<size_t>(at)]; };

    // The value of a name this graph defines (or reads from an enclosing one), made at its first mention.
    auto value_of = [&](const std::string& name, Scope::Definition& d) -> ValueId {
      if (d.id == kNoId) {
        d.id = static_cast<ValueId>(graph.values.size());
        Value v;
        v.index = d.id;
        v.name = name;
        graph.values.push_back(std::move(v));
      }
      return d.id;
    };
    auto value_id = [&](const std::string& name) -> ValueId { return value_of(name, *scope.find(name)); };
    // A value read by a node: local, or from an enclosing graph (then an outer-scope value here).
    // `reader()` says who reads it, for a message.
    auto read_value = [&](const std::string& name, auto&& reader) -> ValueId {
      Scope::Definition* d = scope.find(name);
      if (!d) {
        if (!outer || !outer->visible(name))
          fail(reader() + " reads value '" + name +
               "', which no node produces and which is neither a graph input nor an initializer; "
               "the model is incomplete (re-export it, or declare '" +
               name + "' as a graph input)");
        bool fresh = false;
        const ValueId id = value_of(name, definition_at(scope.define(name, Scope::kOuterScope, fresh)));
        graph.values[id].is_outer_scope = true;
        graph.outer_scope.push_back(id);
        return id;
      }
      return value_of(name, *d);
    };

    for (const auto& vi : proto.input()) graph.inputs.push_back(value_id(vi.name()));

    int node_position = 0;
    size_t outputs_at = 0;  // the node's first entry in output_definitions
    // The first entries there of the kNear - 1 nodes before (Constants too): a node's input that one of them wrote (a
    // chain, chains listed in turn, a residual) takes its definition without a lookup (written_near).
    constexpr int kNear = 8;
    std::array<size_t, kNear> recent_outputs_at{};
    auto defined_near = [&](int i, const std::string& name) -> Scope::Definition* {
      // (node i - kNear shares i's slot)
      const auto writer = written_near(proto, i, name, kNear - 1);
      if (!writer) return nullptr;
      const auto [j, k] = *writer;
      return &definition_at(output_definitions[recent_outputs_at[j % kNear] + static_cast<size_t>(k)]);
    };
    for (int i = 0; i < proto.node_size(); ++i) {
      const onnx::NodeProto& np = proto.node(i);
      const size_t first_output = std::exchange(outputs_at, outputs_at + static_cast<size_t>(np.output_size()));
      recent_outputs_at[i % kNear] = first_output;
      if (is_constant_node(np)) {
        ++constants_folded_;
        continue;
      }
      auto who = [&] { return describe_node(np, node_position); };
      Node node;
      node.index = static_cast<NodeId>(graph.nodes.size());
      node.name = np.name();
      node.op_type = np.op_type();
      node.domain = domain_key(np.domain());
      node.inputs.reserve(static_cast<size_t>(np.input_size()));
      node.outputs.reserve(static_cast<size_t>(np.output_size()));
      node.attributes.reserve(static_cast<size_t>(np.attribute_size()));
      for (const auto& in : np.input()) {
        if (in.empty()) {
          node.inputs.push_back(kNoId);
        } else if (Scope::Definition* d = defined_near(i, in)) {
          node.inputs.push_back(value_of(in, *d));
        } else {
          node.inputs.push_back(read_value(in, who));
        }
      }

      std::vector<std::string> implicit_names;
      for (const auto& ap : np.attribute()) {
        Attribute attr = convert_attribute(ap);
        auto add_subgraph = [&](const onnx::GraphProto& sub) {
          GraphBuilder nested(path_, opsets_, constants_folded_);
          Graph g = nested.build(sub, &scope, context_ + who() + " attribute '" + ap.name() + "': ");
          g.parent_node = node.index;
          g.parent_attribute = ap.name();
          for (ValueId v : g.outer_scope) implicit_names.push_back(g.values[v].name);
          attr.subgraphs.push_back(static_cast<int32_t>(graph.subgraphs.size()));
          node.subgraphs.push_back(static_cast<int32_t>(graph.subgraphs.size()));
          graph.subgraphs.push_back(std::move(g));
        };
        if (ap.type() == onnx::AttributeProto::GRAPH) add_subgraph(ap.g());
        if (ap.type() == onnx::AttributeProto::GRAPHS)
          for (const auto& sub : ap.graphs()) add_subgraph(sub);
        node.attributes.push_back(std::move(attr));
      }
      std::unordered_set<std::string> seen_implicit;
      for (const auto& name : implicit_names)
        if (seen_implicit.insert(name).second) node.implicit_inputs.push_back(read_value(name, who));

      for (int k = 0; k < np.output_size(); ++k)
        node.outputs.push_back(
            np.output(k).empty()
                ? kNoId
                : value_of(np.output(k), definition_at(output_definitions[first_output + static_cast<size_t>(k)])));
      graph.nodes.push_back(std::move(node));
      ++node_position;
    }

    for (const auto& vi : proto.output()) {
      ValueId id = read_value(vi.name(), [] { return std::string("graph output list"); });
      graph.outputs.push_back(id);
    }
    // Unused initializers and Constant outputs last: ORT drops them, memplan keeps them visible.
    for (const auto& t : proto.initializer()) value_id(t.name());
    for (const auto& t : proto.sparse_initializer()) value_id(t.values().name());

    // The graph's index by name, made once every value is.
    graph.value_by_name.reserve(graph.values.size());
    for (const Value& v : graph.values) graph.value_by_name.emplace(v.name, v.index);

    for (ValueId id : graph.inputs) graph.values[id].is_graph_input = true;
    for (ValueId id : graph.outputs) graph.values[id].is_graph_output = true;
    return graph;
  }

  // The types `proto` declares (after shape inference, most values'), the initializers' and the folded constants',
  // and the byte sizes they give, on a graph build_structure made from a model with the same nodes.
  // `table`: the value_info and outputs an inference child sent as a table, read instead of proto's.
  void apply_types(Graph& graph, const onnx::GraphProto& proto, const TypesTable* table = nullptr) {
    // Declared types: value_info, then outputs, then inputs, each over the one before, found by name.
    // Inference lists value_info in the order the nodes write them, which is mostly the values' own order: the value
    // after the last one found is tried before the table (a million lookups by name are a million cache misses).
    // Each value's type: one of proto's, or the table's entry at an offset.
    constexpr size_t kNoEntry = static_cast<size_t>(-1);
    struct Declared {
      const onnx::TypeProto* type = nullptr;
      size_t entry = kNoEntry;
    };
    std::vector<Declared> declared(graph.values.size());
    size_t next = 0;
    auto declare = [&](std::string_view name, Declared d) {
      if (next < graph.values.size() && graph.values[next].name == name) {
        declared[next++] = d;
        return;
      }
      auto it = graph.value_by_name.find(absl::string_view(name.data(), name.size()));
      if (it == graph.value_by_name.end()) return;
      declared[it->second] = d;
      next = static_cast<size_t>(it->second) + 1;
    };
    if (table) {
      table->for_each([&](std::string_view name, size_t entry) { declare(name, Declared{nullptr, entry}); });
    } else {
      for (const auto& vi : proto.value_info()) declare(vi.name(), Declared{&vi.type()});
      for (const auto& vi : proto.output()) declare(vi.name(), Declared{&vi.type()});
    }
    for (const auto& vi : proto.input()) declare(vi.name(), Declared{&vi.type()});
    for (auto& v : graph.values) {
      const Declared& d = declared[v.index];
      if (d.entry != kNoEntry)
        set_type(v, *table, d.entry);
      else if (d.type)
        set_type(v, *d.type);
    }
    for (const auto& t : proto.initializer())
      mark_initializer(graph, graph.values[graph.value_by_name.at(t.name())], t);
    for (const auto& t : proto.sparse_initializer()) {
      Value& v = graph.values[graph.value_by_name.at(t.values().name())];
      mark_initializer(graph, v, t.values());
      v.type_kind = TypeKind::kSparseTensor;
      v.dims.clear();
      for (int64_t d : t.dims()) v.dims.push_back(Dim{d, {}});
    }
    for (const auto& np : proto.node())
      if (is_constant_node(np)) fold_constant(graph, np);

    for (auto& v : graph.values)
      if (!compute_value_bytes(v))
        fail("value '" + v.name + "' (" + std::string(dtype_name(v.dtype)) + ", " + shape_text(v) +
             ") has a byte size that overflows 64 bits; check the model's shapes and the --dim values");
  }

  // Producers and consumers, and the check that the graph is acyclic.
  void link_and_check(Graph& graph) {
    link_values(graph);

    NodeId on_cycle = find_cycle_node(graph);
    if (on_cycle != kNoId) {
      const Node& n = graph.nodes[on_cycle];
      fail("the graph has a cycle through " + describe_node(n) + "; ONNX graphs must be acyclic");
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) { fail_input(path_, context_ + what); }

  void check_dtype(const Value& v, int32_t elem_type) {
    if (elem_type < 0 || elem_type > kDTypeLast)
      fail("value '" + v.name + "' has element type " + std::to_string(elem_type) +
           ", which ONNX does not define (known types are 1 to " + std::to_string(kDTypeLast) + ")");
  }

  // A value's type from its parts (a TypeProto's or a types table entry's): its kind, element type and whether a
  // shape follows; true where the dims follow (add_dim, axis by axis).
  bool set_type_head(Value& v, int value_case, int32_t elem_type, bool has_shape, uint32_t rank) {
    switch (value_case) {
      case onnx::TypeProto::kTensorType:
        v.type_kind = TypeKind::kTensor;
        check_dtype(v, elem_type);
        v.dtype = elem_type;
        v.has_shape = has_shape;
        v.dims.clear();
        v.dims.reserve(has_shape ? rank : 0);
        return has_shape;
      case onnx::TypeProto::kSparseTensorType:
        v.type_kind = TypeKind::kSparseTensor;
        check_dtype(v, elem_type);
        v.dtype = elem_type;
        return false;
      case onnx::TypeProto::kSequenceType:
        v.type_kind = TypeKind::kSequence;
        return false;
      case onnx::TypeProto::kMapType:
        v.type_kind = TypeKind::kMap;
        return false;
      case onnx::TypeProto::kOptionalType:
        v.type_kind = TypeKind::kOptional;
        return false;
      default:
        return false;
    }
  }

  void add_dim(Value& v, std::optional<int64_t> value, std::string_view param) {
    Dim dim;
    if (value) {
      if (*value < 0)
        fail("value '" + v.name + "' has negative dimension " + std::to_string(*value) + " at axis " +
             std::to_string(v.dims.size()) + "; dimensions must be >= 0");
      dim.value = *value;
    }
    dim.param = param;
    v.dims.push_back(std::move(dim));
  }

  void set_type(Value& v, const onnx::TypeProto& type) {
    const bool tensor = type.has_tensor_type(), sparse = type.has_sparse_tensor_type();
    const int32_t elem_type = tensor   ? type.tensor_type().elem_type()
                              : sparse ? type.sparse_tensor_type().elem_type()
                                       : 0;
    const onnx::TensorShapeProto* shape =
        tensor && type.tensor_type().has_shape() ? &type.tensor_type().shape() : nullptr;
    if (!set_type_head(v, type.value_case(), elem_type, shape != nullptr,
                       shape ? static_cast<uint32_t>(shape->dim_size()) : 0))
      return;
    for (const auto& d : shape->dim())
      add_dim(v, d.has_dim_value() ? std::optional<int64_t>(d.dim_value()) : std::nullopt,
              d.has_dim_param() ? std::string_view(d.dim_param()) : std::string_view());
  }

  // The same from a types table's entry (types_table.h), read in place.
  void set_type(Value& v, const TypesTable& table, size_t entry) {
    bool dims = false;
    table.read(
        entry,
        [&](uint8_t value_case, int32_t elem_type, bool has_shape, uint32_t rank) {
          dims = set_type_head(v, value_case, elem_type, has_shape, rank);
        },
        [&](uint8_t kind, int64_t value, std::string_view param) {
          if (dims)
            add_dim(v, kind == table_bytes::kDimValue ? std::optional<int64_t>(value) : std::nullopt,
                    kind == table_bytes::kDimParam ? param : std::string_view());
        });
  }

  void set_tensor_type(Value& v, int32_t elem_type, const google::protobuf::RepeatedField<int64_t>& dims) {
    check_dtype(v, elem_type);
    v.type_kind = TypeKind::kTensor;
    v.dtype = elem_type;
    v.has_shape = true;
    v.dims.clear();
    for (int axis = 0; axis < dims.size(); ++axis) {
      if (dims[axis] < 0)
        fail("initializer '" + v.name + "' has negative dimension " + std::to_string(dims[axis]) + " at axis " +
             std::to_string(axis));
      v.dims.push_back(Dim{dims[axis], {}});
    }
  }

  // Initializer types come from the TensorProto header (dims, data_type); its data is never read.
  void mark_initializer(Graph& graph, Value& v, const onnx::TensorProto& t) {
    set_tensor_type(v, t.data_type(), t.dims());
    if (!v.is_initializer) graph.initializers.push_back(v.index);
    v.is_initializer = true;
  }

  void fold_constant(Graph& graph, const onnx::NodeProto& np) {
    if (np.output_size() != 1 || np.output(0).empty()) return;
    auto it = graph.value_by_name.find(np.output(0));
    if (it == graph.value_by_name.end()) return;
    Value& v = graph.values[it->second];
    for (const auto& a : np.attribute()) {
      google::protobuf::RepeatedField<int64_t> dims;
      if (a.name() == "value" && a.has_t()) {
        mark_initializer(graph, v, a.t());
        return;
      }
      if (a.name() == "sparse_value" && a.has_sparse_tensor()) {
        mark_initializer(graph, v, a.sparse_tensor().values());
        v.type_kind = TypeKind::kSparseTensor;
        v.dims.clear();
        for (int64_t d : a.sparse_tensor().dims()) v.dims.push_back(Dim{d, {}});
        return;
      }
      int32_t elem = 0;
      if (a.name() == "value_float") elem = onnx::TensorProto::FLOAT;
      if (a.name() == "value_int") elem = onnx::TensorProto::INT64;
      if (a.name() == "value_string") elem = onnx::TensorProto::STRING;
      if (a.name() == "value_floats") elem = onnx::TensorProto::FLOAT, dims.Add(a.floats_size());
      if (a.name() == "value_ints") elem = onnx::TensorProto::INT64, dims.Add(a.ints_size());
      if (a.name() == "value_strings") elem = onnx::TensorProto::STRING, dims.Add(a.strings_size());
      if (elem != 0) {
        set_tensor_type(v, elem, dims);
        if (!v.is_initializer) graph.initializers.push_back(v.index);
        v.is_initializer = true;
        return;
      }
    }
  }

  static Attribute convert_attribute(const onnx::AttributeProto& ap) {
    Attribute a;
    a.name = ap.name();
    switch (ap.type()) {
      case onnx::AttributeProto::INT:
        a.kind = Attribute::Kind::kInt, a.i = ap.i();
        break;
      case onnx::AttributeProto::FLOAT:
        a.kind = Attribute::Kind::kFloat, a.f = ap.f();
        break;
      case onnx::AttributeProto::STRING:
        a.kind = Attribute::Kind::kString, a.s = ap.s();
        break;
      case onnx::AttributeProto::INTS:
        a.kind = Attribute::Kind::kInts;
        a.ints.assign(ap.ints().begin(), ap.ints().end());
        break;
      case onnx::AttributeProto::FLOATS:
        a.kind = Attribute::Kind::kFloats;
        a.floats.assign(ap.floats().begin(), ap.floats().end());
        break;
      case onnx::AttributeProto::STRINGS:
        a.kind = Attribute::Kind::kStrings;
        a.strings.assign(ap.strings().begin(), ap.strings().end());
        break;
      case onnx::AttributeProto::GRAPH:
        a.kind = Attribute::Kind::kGraph;
        break;
      case onnx::AttributeProto::GRAPHS:
        a.kind = Attribute::Kind::kGraphs;
        break;
      case onnx::AttributeProto::TENSOR:
        a.kind = Attribute::Kind::kTensor;
        break;
      default:
        a.kind = Attribute::Kind::kOther;
        break;
    }
    return a;
  }

  const std::string& path_;
  const std::map<std::string, int64_t>& opsets_;
  int& constants_folded_;
  std::string context_;
};

// A subgraph's outer-scope values take their types from the enclosing graph, recursively.
void fill_outer_scope_types(Graph& sub, const Graph& parent) {
  for (ValueId id : sub.outer_scope) {
    Value& v = sub.values[id];
    const Value* outer = parent.find_value(v.name);
    if (!outer) continue;
    v.type_kind = outer->type_kind;
    v.dtype = outer->dtype;
    v.has_shape = outer->has_shape;
    v.dims = outer->dims;
    v.bytes = outer->bytes;
  }
  for (Graph& nested : sub.subgraphs) fill_outer_scope_types(nested, sub);
}

}  // namespace

std::string describe_node(const onnx::NodeProto& n, int position) {
  std::string who = n.name().empty() ? "#" + std::to_string(position) : "'" + terminal_text(n.name()) + "'";
  const std::string op = is_default_domain(n.domain()) ? n.op_type() : n.domain() + "." + n.op_type();
  return "node " + who + " (" + terminal_text(op) + ")";
}

namespace {

// A model's own fields, without its graph.
Model model_fields(const onnx::ModelProto& proto, const std::string& path) {
  Model model;
  model.path = path;
  model.ir_version = proto.ir_version();
  model.producer_name = proto.producer_name();
  for (const auto& op : proto.opset_import()) model.opsets[domain_key(op.domain())] = op.version();
  if (proto.opset_import_size() == 0) model.opsets[""] = 1;  // IR < 3 models imply ai.onnx v1
  return model;
}

}  // namespace

Model build_model(const onnx::ModelProto& proto, const std::string& path) {
  Model model = model_fields(proto, path);
  GraphBuilder builder(path, model.opsets, model.constant_nodes_folded);
  model.graph = builder.build(proto.graph(), nullptr, "");
  for (Graph& sub : model.graph.subgraphs) fill_outer_scope_types(sub, model.graph);
  return model;
}

Model build_model_structure(const onnx::ModelProto& proto, const std::string& path) {
  Model model = model_fields(proto, path);
  GraphBuilder builder(path, model.opsets, model.constant_nodes_folded);
  model.graph = builder.build_structure(proto.graph(), nullptr, "");
  if (!model.graph.subgraphs.empty())
    throw std::logic_error("build_model_structure: a graph with subgraphs is built whole (build_model)");
  builder.link_and_check(model.graph);
  return model;
}

bool same_structure(const Model& model, const onnx::ModelProto& proto) {
  const Graph& g = model.graph;
  const auto& gp = proto.graph();
  if (g.outputs.size() != static_cast<size_t>(gp.output_size()) ||
      g.inputs.size() != static_cast<size_t>(gp.input_size()))
    return false;
  for (int i = 0; i < gp.output_size(); ++i)
    if (g.values[g.outputs[static_cast<size_t>(i)]].name != gp.output(i).name()) return false;
  for (int i = 0; i < gp.input_size(); ++i)
    if (g.values[g.inputs[static_cast<size_t>(i)]].name != gp.input(i).name()) return false;
  return true;
}

void drop_nodes_but_constants(onnx::GraphProto& graph) {
  auto* nodes = graph.mutable_node();
  int kept = 0;
  for (int i = 0; i < nodes->size(); ++i)
    if (is_constant_node(nodes->Get(i))) nodes->SwapElements(i, kept++);
  nodes->DeleteSubrange(kept, nodes->size() - kept);
}

void apply_model_types(Model& model, const onnx::ModelProto& proto, const std::string& path, const TypesTable* table) {
  int unused = 0;
  GraphBuilder builder(path, model.opsets, unused);
  builder.apply_types(model.graph, proto.graph(), table);
}

}  // namespace memplan::onnx_io
