// ORT's view of a model sent as a table of shapes by name (shape_table.h).
#include "shape_table.h"

#include <absl/container/flat_hash_map.h>

#include <cstring>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "memplan/error.h"
#include "memplan/text_escape.h"
#include "proto_model.h"
#include "shape_pass.h"
#include "types_table.h"

namespace memplan::onnx_io {
namespace {

// One entry of the table: the name and its shape (none where the type has no tensor shape).
void put_entry(std::string& out, const std::string& name, const onnx::TypeProto* type) {
  table_bytes::put_text(out, name);
  const bool has_shape = type && type->has_tensor_type() && type->tensor_type().has_shape();
  table_bytes::put_shape(out, has_shape ? &type->tensor_type().shape() : nullptr);
}

// shape_table_in_order's walk, after `out`'s first bytes. It needs the nodes listed in order (listed_in_order), so
// that every name a node reads was sent before it; the graph outputs and value_info declaring typed node outputs only,
// each once, in the order the nodes write them (as ONNX's inference appends them); the graph inputs named once. Then
// each node output is sent where the walk meets it, its type found by a cursor into each list; last, as
// shape_table_by_names has them, the typed inputs that are initializers, then the Constants' outputs (those the graph
// outputs type, then those value_info types). False where any of that fails (`out` is then dropped). At 1M nodes the
// table of names was a third of ORT's view's own work, a cache miss per name.
bool write_in_order(const onnx::GraphProto& g, std::string& out, uint64_t& count, std::optional<bool> listed) {
  if (!(listed ? *listed : listed_in_order(g))) return false;
  absl::flat_hash_map<std::string_view, bool> input_is_initializer;  // (inputs are few; initializers may be many)
  input_is_initializer.reserve(static_cast<size_t>(g.input_size()));
  for (const auto& vi : g.input())
    if (!vi.name().empty() && !input_is_initializer.emplace(vi.name(), false).second) return false;
  if (!input_is_initializer.empty()) {
    for (const auto& t : g.initializer())
      if (auto it = input_is_initializer.find(t.name()); it != input_is_initializer.end()) it->second = true;
    for (const auto& t : g.sparse_initializer())
      if (auto it = input_is_initializer.find(t.values().name()); it != input_is_initializer.end()) it->second = true;
  }
  auto send = [&](const std::string& name, const onnx::TypeProto* type) {
    put_entry(out, name, type);
    ++count;
  };
  for (const auto& vi : g.input())
    if (!vi.name().empty() && !input_is_initializer.at(vi.name())) send(vi.name(), &vi.type());
  using Typed = std::pair<const std::string*, const onnx::TypeProto*>;
  std::vector<Typed> constants_typed_as_outputs, constants_typed_in_info;
  int next_output = 0, next_info = 0;
  for (const auto& n : g.node()) {
    const bool constant = is_onnx_op(n, "Constant");
    for (const auto& name : n.output()) {
      if (name.empty()) continue;
      const onnx::TypeProto* type = nullptr;  // a graph output's declaration over value_info's
      bool as_output = false;
      if (next_output < g.output_size() && g.output(next_output).name() == name) {
        type = &g.output(next_output++).type();
        as_output = true;
      }
      if (next_info < g.value_info_size() && g.value_info(next_info).name() == name) {
        if (!type) type = &g.value_info(next_info).type();
        ++next_info;
      }
      if (!type) return false;  // untyped, or declared out of order: only a table of names tells
      if (!constant)
        send(name, type);
      else
        (as_output ? constants_typed_as_outputs : constants_typed_in_info).push_back({&name, type});
    }
  }
  if (next_output < g.output_size() || next_info < g.value_info_size()) return false;
  for (const auto& vi : g.input())
    if (!vi.name().empty() && input_is_initializer.at(vi.name())) send(vi.name(), &vi.type());
  for (const auto* list : {&constants_typed_as_outputs, &constants_typed_in_info})
    for (const auto& [name, type] : *list) send(*name, type);
  return true;
}

}  // namespace

std::optional<std::string> shape_table_in_order(const onnx::ModelProto& proto, std::optional<bool> listed) {
  const onnx::GraphProto& g = proto.graph();
  std::string out;
  out.reserve(static_cast<size_t>(g.node_size() + g.input_size()) * 48);
  table_bytes::put<uint64_t>(out, 0);  // the count, set at the end
  uint64_t count = 0;
  if (!write_in_order(g, out, count, listed)) return std::nullopt;
  std::memcpy(out.data(), &count, sizeof count);
  return out;
}

std::string shape_table_part(const onnx::ModelProto& proto, std::optional<bool> listed) {
  if (auto table = shape_table_in_order(proto, listed)) return std::move(*table);
  return shape_table_by_names(proto);
}

std::string shape_table_by_names(const onnx::ModelProto& proto) {
  const onnx::GraphProto& g = proto.graph();
  struct Name {
    const onnx::TypeProto* type = nullptr;
    bool sent = false;   // in the table already
    bool apart = false;  // not visited by a graph built from the model: listed last, if typed
  };
  absl::flat_hash_map<std::string_view, Name> names;
  // Room for the names: a node output is typed in value_info too, so the larger of the two counts, not their sum
  // (which doubled the table: 67 MB more fresh memory at 1M nodes). Names only nodes read are few (the table grows).
  size_t node_outputs = 0;
  for (const auto& n : g.node()) node_outputs += static_cast<size_t>(n.output_size());
  names.reserve(
      std::max(static_cast<size_t>(g.value_info_size()), node_outputs) +
      static_cast<size_t>(g.input_size() + g.output_size() + g.initializer_size() + g.sparse_initializer_size()));
  // (counted, so that the passes over what is left run only when something is: each lookup is a cache miss)
  size_t typed = 0, typed_sent = 0, constant_outputs = 0;
  for (const auto* list : {&g.value_info(), &g.output(), &g.input()})
    for (const auto& vi : *list) {
      Name& n = names[vi.name()];
      typed += n.type == nullptr;
      n.type = &vi.type();
    }
  for (const auto& t : g.initializer()) names[t.name()].apart = true;
  for (const auto& t : g.sparse_initializer()) names[t.values().name()].apart = true;
  std::string out;
  out.reserve(names.size() * 48);
  table_bytes::put<uint64_t>(out, 0);  // the count, set at the end
  uint64_t count = 0;
  auto send = [&](const std::string& name, const Name& n) {
    typed_sent += n.type != nullptr;
    put_entry(out, name, n.type);
    ++count;
  };
  // An initializer is never sent; a Constant's output is sent only among the others (a graph folds it into an
  // initializer); any other name at its first mention.
  auto visit = [&](const std::string& name) {
    if (name.empty()) return;
    Name& n = names[name];
    if (n.sent || n.apart) return;
    n.sent = true;
    send(name, n);
  };
  for (const auto& n : g.node())
    if (is_onnx_op(n, "Constant"))
      for (const auto& name : n.output())
        if (!name.empty()) {
          names[name].apart = true;
          ++constant_outputs;
        }
  for (const auto& vi : g.input()) visit(vi.name());
  for (const auto& n : g.node()) {
    for (const auto& name : n.input()) visit(name);
    for (const auto& name : n.output()) visit(name);
  }
  for (const auto& vi : g.output()) visit(vi.name());
  // The rest, in the order the model lists them: every typed name not sent yet (an initializer's too, when the model
  // declares its type), then the Constants' outputs.
  auto rest = [&](const std::string& name) {
    if (name.empty()) return;
    Name& n = names[name];
    if (n.sent) return;
    n.sent = true;
    send(name, n);
  };
  if (typed_sent < typed)
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
      for (const auto& vi : *list) rest(vi.name());
  if (constant_outputs > 0)
    for (const auto& n : g.node())
      for (const auto& name : n.output()) rest(name);
  std::memcpy(out.data(), &count, sizeof count);
  return out;
}

ShapeView read_shape_table(const char* data, size_t size, const std::string& path) {
  table_bytes::Reader in(data, size);
  const auto count = in.get<uint64_t>();
  if (count > size) throw std::runtime_error("shape inference returned a truncated table");
  ShapeView shapes;
  shapes.names.reserve(count);
  shapes.shapes.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    std::string name(in.text());
    KnownShape known;
    auto rank = [&](bool has_shape, uint32_t n) {
      if (n > size) throw std::runtime_error("shape inference returned a truncated table");
      known.has_shape = has_shape;
      known.dims.reserve(n);
    };
    table_bytes::get_shape(in, rank, [&](uint8_t kind, int64_t value, std::string_view param) {
      Dim& dim = known.dims.emplace_back();
      if (kind == table_bytes::kDimValue) {
        dim.value = value;
        if (dim.value < 0)
          fail_input(path, "value '" + terminal_text(name) + "' has negative dimension " + std::to_string(dim.value) +
                               "; dimensions must be >= 0");
      } else if (kind == table_bytes::kDimParam) {
        dim.param = std::string(param);
      }
    });
    shapes.add(std::move(name), std::move(known));
  }
  if (!in.done()) throw std::runtime_error("shape inference returned a table with bytes after its end");
  return shapes;
}

}  // namespace memplan::onnx_io
