#include "memplan/graph.h"

#include "memplan/enum_names.h"
#include "memplan/text_escape.h"

namespace memplan {

namespace {
constexpr EnumName<TypeKind> kTypeKindNames[] = {
    {TypeKind::kUnknown, "unknown"},   {TypeKind::kTensor, "tensor"}, {TypeKind::kSparseTensor, "sparse_tensor"},
    {TypeKind::kSequence, "sequence"}, {TypeKind::kMap, "map"},       {TypeKind::kOptional, "optional"},
};
}  // namespace

const char* type_kind_name(TypeKind k) {
  return enum_name(kTypeKindNames, k, "unknown");
}

bool Value::shape_known() const {
  if (!has_shape) return false;
  for (const Dim& d : dims)
    if (!d.known()) return false;
  return true;
}

std::optional<uint64_t> Value::element_count() const {
  if (!shape_known()) return std::nullopt;
  uint64_t count = 1;
  for (const Dim& d : dims)
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(d.value), &count)) return std::nullopt;
  return count;
}

std::string describe_node(const Node& n) {
  const std::string who = n.name.empty() ? "#" + std::to_string(n.index) : "'" + terminal_text(n.name) + "'";
  return "node " + who + " (" + terminal_text(n.domain.empty() ? n.op_type : n.domain + "." + n.op_type) + ")";
}

const Attribute* Node::attribute(const std::string& attr_name) const {
  for (const Attribute& a : attributes)
    if (a.name == attr_name) return &a;
  return nullptr;
}

int64_t Node::int_attribute(const std::string& attr_name, int64_t fallback) const {
  const Attribute* a = attribute(attr_name);
  return a && a->kind == Attribute::Kind::kInt ? a->i : fallback;
}

const Value* Graph::find_value(const std::string& value_name) const {
  auto it = value_by_name.find(value_name);
  return it == value_by_name.end() ? nullptr : &values[it->second];
}

size_t Graph::total_subgraph_count() const {
  size_t n = subgraphs.size();
  for (const Graph& g : subgraphs) n += g.total_subgraph_count();
  return n;
}

std::string shape_text(const Value& v) {
  if (!v.has_shape) return "?";
  std::string s = "[";
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (i) s += ",";
    s += v.dims[i].known() ? std::to_string(v.dims[i].value) : (v.dims[i].param.empty() ? "?" : v.dims[i].param);
  }
  return s + "]";
}

void link_values(Graph& graph) {
  for (Value& v : graph.values) {
    v.producer = kNoId;
    v.consumers.clear();
    v.implicit_consumers.clear();
  }
  for (const Node& n : graph.nodes) {
    for (ValueId v : n.outputs)
      if (v != kNoId) graph.values[v].producer = n.index;
    for (ValueId v : n.inputs)
      if (v != kNoId && (graph.values[v].consumers.empty() || graph.values[v].consumers.back() != n.index))
        graph.values[v].consumers.push_back(n.index);
    for (ValueId v : n.implicit_inputs) graph.values[v].implicit_consumers.push_back(n.index);
  }
}

bool compute_value_bytes(Value& value) {
  value.bytes.reset();
  if (!value.is_tensor() || !dtype_is_known(value.dtype) || !value.shape_known()) return true;
  uint64_t count = 1;
  for (const Dim& d : value.dims)
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(d.value), &count)) return false;
  auto bytes = dtype_bytes(value.dtype, count);
  if (!bytes) return false;
  value.bytes = bytes;
  return true;
}

}  // namespace memplan
