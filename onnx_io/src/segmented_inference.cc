#include "segmented_inference.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "proto_model.h"

namespace memplan::onnx_io {

namespace {

// Nodes with subgraphs per piece: each copies the types its piece knows so far, so a piece costs about this many
// times its own size.
constexpr int kHoldersPerPiece = 16;
// Fewer nodes with subgraphs than this: one call, as ONNX makes it (the copies cost less than the pieces would).
constexpr int kMinHolders = 64;
// The prefix of the symbolic dims ONNX's inference invents.
constexpr std::string_view kInvented = "unk__";

// Appends to `out` the names `g` and the subgraphs inside it read from the scopes around `g`.
void outer_names(const onnx::GraphProto& g, std::vector<std::string>& out) {
  std::unordered_set<std::string_view> local;
  for (const auto& v : g.input()) local.insert(v.name());
  for (const auto& t : g.initializer()) local.insert(t.name());
  for (const auto& t : g.sparse_initializer()) local.insert(t.values().name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) local.insert(o);
  auto use = [&](const std::string& name) {
    if (!name.empty() && !local.count(name)) out.push_back(name);
  };
  std::vector<std::string> inner;
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) use(i);
    for (const auto& a : n.attribute()) {
      inner.clear();
      if (a.has_g()) outer_names(a.g(), inner);
      for (const auto& sub : a.graphs()) outer_names(sub, inner);
      for (const auto& name : inner) use(name);
    }
  }
  for (const auto& o : g.output()) use(o.name());  // (a branch may return an outer value as it is)
}

// Calls fn on every dim of every type declared in `g` and in the subgraphs inside it (where ONNX looks for the
// symbols that exist, and where it writes new ones).
template <typename Fn>
void for_each_dim(onnx::TypeProto& t, Fn& fn) {
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      if (t.tensor_type().has_shape())
        for (auto& d : *t.mutable_tensor_type()->mutable_shape()->mutable_dim()) fn(d);
      break;
    case onnx::TypeProto::kSparseTensorType:
      if (t.sparse_tensor_type().has_shape())
        for (auto& d : *t.mutable_sparse_tensor_type()->mutable_shape()->mutable_dim()) fn(d);
      break;
    case onnx::TypeProto::kSequenceType:
      if (t.sequence_type().has_elem_type()) for_each_dim(*t.mutable_sequence_type()->mutable_elem_type(), fn);
      break;
    case onnx::TypeProto::kOptionalType:
      if (t.optional_type().has_elem_type()) for_each_dim(*t.mutable_optional_type()->mutable_elem_type(), fn);
      break;
    case onnx::TypeProto::kMapType:
      if (t.map_type().has_value_type()) for_each_dim(*t.mutable_map_type()->mutable_value_type(), fn);
      break;
    default:
      break;
  }
}

template <typename Fn>
void for_each_dim(onnx::GraphProto& g, Fn& fn) {
  auto dims = [&](onnx::TypeProto& t) { for_each_dim(t, fn); };
  for_each_declared_type(g, dims);
}

bool invented(const onnx::TensorShapeProto::Dimension& d) {
  return d.has_dim_param() && d.dim_param().compare(0, kInvented.size(), kInvented) == 0;
}

// A Constant node's tensor, which ONNX's inference reads as the contents of its output.
const onnx::AttributeProto* constant_value(const onnx::NodeProto& n) {
  if (!is_onnx_op(n, "Constant") || n.output_size() != 1) return nullptr;
  for (const auto& a : n.attribute())
    if (a.name() == "value" && ((a.type() == onnx::AttributeProto::TENSOR && a.has_t()) ||
                                (a.type() == onnx::AttributeProto::SPARSE_TENSOR && a.has_sparse_tensor())))
      return &a;
  return nullptr;
}

// One piece: a model that borrows the main graph's nodes, initializers, declared value_info and outputs (pointers,
// given back whatever happens) and owns the rest (its inputs, copies of Constant contents, what inference adds).
struct Piece {
  onnx::ModelProto model;
  onnx::ModelProto& whole;
  onnx::GraphProto& graph = *model.mutable_graph();
  // (after the model: given back before it goes)
  LentList<onnx::NodeProto> nodes{graph.mutable_node()};
  LentList<onnx::ValueInfoProto> value_info{graph.mutable_value_info()};
  LentList<onnx::ValueInfoProto> outputs{graph.mutable_output()};
  LentList<onnx::TensorProto> initializers{graph.mutable_initializer()};
  LentList<onnx::SparseTensorProto> sparse_initializers{graph.mutable_sparse_initializer()};
  explicit Piece(onnx::ModelProto& whole_model) : whole(whole_model) {
    model.set_ir_version(whole.ir_version());
    *model.mutable_opset_import() = whole.opset_import();
    model.mutable_functions()->Swap(whole.mutable_functions());
  }
  ~Piece() { model.mutable_functions()->Swap(whole.mutable_functions()); }
  Piece(const Piece&) = delete;
  Piece& operator=(const Piece&) = delete;
};

}  // namespace

void infer_model_shapes(onnx::ModelProto& model, const onnx::ISchemaRegistry* registry,
                        const onnx::ShapeInferenceOptions& options) {
  onnx::GraphProto& g = *model.mutable_graph();
  const int n = g.node_size();
  std::vector<int> piece_end;  // the node each piece ends before
  int holders = 0;
  for (int i = 0; i < n; ++i)
    if (holds_subgraph(g.node(i)) && ++holders % kHoldersPerPiece == 0) piece_end.push_back(i + 1);
  if (holders < kMinHolders) {
    onnx::shape_inference::InferShapes(model, registry, options);
    return;
  }
  if (piece_end.empty() || piece_end.back() != n) piece_end.push_back(n);

  // Where each name comes from. (Views into the model's strings: nodes, initializers and entries never move.)
  std::unordered_map<std::string_view, int> producer, initializer, sparse_initializer;
  std::unordered_map<std::string_view, const onnx::ValueInfoProto*> input;
  for (int i = 0; i < n; ++i)
    for (const auto& o : g.node(i).output())
      if (!o.empty()) producer.emplace(o, i);
  for (int k = 0; k < g.initializer_size(); ++k) initializer.emplace(g.initializer(k).name(), k);
  for (int k = 0; k < g.sparse_initializer_size(); ++k)
    sparse_initializer.emplace(g.sparse_initializer(k).values().name(), k);
  for (const auto& v : g.input()) input.emplace(v.name(), &v);
  auto piece_of = [&](std::string_view name) -> int {
    auto it = producer.find(name);
    if (it == producer.end()) return -1;
    return static_cast<int>(std::upper_bound(piece_end.begin(), piece_end.end(), it->second) - piece_end.begin());
  };

  // The symbols the model has: new ones must differ from them.
  std::unordered_set<std::string> taken;
  auto note_taken = [&](onnx::TensorShapeProto::Dimension& d) {
    if (invented(d)) taken.insert(d.dim_param());
  };
  for_each_dim(g, note_taken);
  int next_symbol = 0;
  auto new_symbol = [&] {
    std::string name;
    do name = std::string(kInvented) + std::to_string(next_symbol++);
    while (taken.count(name));
    taken.insert(name);
    return name;
  };

  // The declared value_info stays first, as a single call leaves it; what inference adds follows in node order.
  // Until the end the main graph holds neither list (restored whatever happens).
  struct Entries {
    onnx::GraphProto& g;
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> declared, added;
    explicit Entries(onnx::GraphProto& graph) : g(graph) { declared.Swap(g.mutable_value_info()); }
    ~Entries() {
      g.mutable_value_info()->Swap(&declared);
      std::vector<onnx::ValueInfoProto*> moved(static_cast<size_t>(added.size()));
      added.ExtractSubrange(0, added.size(), moved.data());
      for (onnx::ValueInfoProto* vi : moved) g.mutable_value_info()->AddAllocated(vi);
    }
  } entries(g);
  std::vector<std::vector<int>> declared_in(piece_end.size()), outputs_in(piece_end.size());
  for (int k = 0; k < entries.declared.size(); ++k)
    if (int p = piece_of(entries.declared.Get(k).name()); p >= 0) declared_in[static_cast<size_t>(p)].push_back(k);
  for (int k = 0; k < g.output_size(); ++k)
    if (int p = piece_of(g.output(k).name()); p >= 0) outputs_in[static_cast<size_t>(p)].push_back(k);

  // The type each value has so far, as a single call would see it: a graph output's over a declared value_info.
  std::unordered_map<std::string_view, const onnx::TypeProto*> types;
  for (const auto& vi : entries.declared)
    if (vi.has_type()) types[vi.name()] = &vi.type();
  for (const auto& vi : g.output())
    if (vi.has_type()) types[vi.name()] = &vi.type();

  std::unordered_map<std::string, onnx::TensorShapeProto> shape_data;  // data propagation's, across the pieces
  std::vector<std::string> reads;
  std::unordered_set<std::string_view> seen;
  for (size_t p = 0; p < piece_end.size(); ++p) {
    const int first = p == 0 ? 0 : piece_end[p - 1], end = piece_end[p];
    Piece piece(model);
    onnx::GraphProto& pg = *piece.model.mutable_graph();
    // What the piece reads from outside itself: graph inputs, initializers, values of earlier pieces.
    reads.clear();
    seen.clear();
    for (int i = first; i < end; ++i) {
      const onnx::NodeProto& node = g.node(i);
      for (const auto& in : node.input()) reads.push_back(in);
      for (const auto& a : node.attribute()) {
        if (a.has_g()) outer_names(a.g(), reads);
        for (const auto& sub : a.graphs()) outer_names(sub, reads);
      }
    }
    std::vector<const onnx::AttributeProto*> constants;
    std::vector<const std::string*> constant_names;
    for (const std::string& name : reads) {
      if (name.empty() || !seen.insert(name).second) continue;
      if (auto it = producer.find(name); it != producer.end() && it->second >= first && it->second < end) continue;
      if (auto in = input.find(name); in != input.end()) {
        *pg.add_input() = *in->second;
      } else if (auto t = types.find(name); t != types.end()) {
        auto* vi = pg.add_input();
        vi->set_name(name);
        *vi->mutable_type() = *t->second;
      }
      if (auto it = initializer.find(name); it != initializer.end()) {
        piece.initializers.lend(g.mutable_initializer(it->second));
      } else if (auto s = sparse_initializer.find(name); s != sparse_initializer.end()) {
        piece.sparse_initializers.lend(g.mutable_sparse_initializer(s->second));
      } else if (auto pr = producer.find(name); pr != producer.end()) {
        if (const onnx::AttributeProto* c = constant_value(g.node(pr->second))) {
          constants.push_back(c);
          constant_names.push_back(&name);
        }
      }
    }
    // The contents of earlier Constant nodes' outputs, as initializers of the piece (after the borrowed ones).
    for (size_t k = 0; k < constants.size(); ++k) {
      if (constants[k]->type() == onnx::AttributeProto::TENSOR) {
        onnx::TensorProto* t = pg.add_initializer();
        *t = constants[k]->t();
        t->set_name(*constant_names[k]);
      } else {
        onnx::SparseTensorProto* t = pg.add_sparse_initializer();
        *t = constants[k]->sparse_tensor();
        t->mutable_values()->set_name(*constant_names[k]);
      }
    }
    for (int i = first; i < end; ++i) {
      piece.nodes.lend(g.mutable_node(i));
    }
    for (int k : declared_in[p]) {
      piece.value_info.lend(entries.declared.Mutable(k));
    }
    for (int k : outputs_in[p]) {
      piece.outputs.lend(g.mutable_output(k));
    }

    std::unordered_set<std::string> existing;  // the symbols the piece starts with
    auto note_existing = [&](onnx::TensorShapeProto::Dimension& d) {
      if (invented(d)) existing.insert(d.dim_param());
    };
    for_each_dim(pg, note_existing);
    onnx::shape_inference::InferShapes(piece.model, registry, options, &shape_data);

    // The piece's new symbols, each renamed to one no other piece has, in the order the piece made them (its
    // numbering), so that the names are those a single call gives.
    std::unordered_map<std::string, std::string> renamed;
    auto note_new = [&](onnx::TensorShapeProto::Dimension& d) {
      if (invented(d) && !existing.count(d.dim_param())) renamed.try_emplace(d.dim_param());
    };
    for_each_dim(pg, note_new);
    if (!renamed.empty()) {
      std::vector<std::string> made;
      for (const auto& entry : renamed) made.push_back(entry.first);
      std::sort(made.begin(), made.end(), [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() < b.size() : a < b;  // unk__9 before unk__10
      });
      for (const std::string& name : made) renamed[name] = new_symbol();
      auto rename = [&](onnx::TensorShapeProto::Dimension& d) {
        if (!invented(d)) return;
        if (auto it = renamed.find(d.dim_param()); it != renamed.end()) d.set_dim_param(it->second);
      };
      for_each_dim(pg, rename);
      for (int i = first; i < end; ++i)
        for (const auto& o : g.node(i).output())
          if (auto it = shape_data.find(o); it != shape_data.end())
            for (auto& d : *it->second.mutable_dim()) rename(d);
    }

    // What inference added: kept, in order, and known to the pieces after.
    const int added = pg.value_info_size() - piece.value_info.size();
    std::vector<onnx::ValueInfoProto*> moved(static_cast<size_t>(added));
    pg.mutable_value_info()->ExtractSubrange(piece.value_info.size(), added, moved.data());
    for (onnx::ValueInfoProto* vi : moved) {
      entries.added.AddAllocated(vi);
      if (vi->has_type()) types[vi->name()] = &vi->type();
    }
  }
}

}  // namespace memplan::onnx_io
