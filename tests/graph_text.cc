#include "graph_text.h"

#include <cctype>
#include <stdexcept>
#include <string>
#include <vector>

#include "memplan/dtype.h"
#include "memplan/graph_edit.h"

namespace memplan::testing {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> out;
  if (trim(s).empty()) return out;
  for (size_t at = 0;;) {
    const size_t comma = s.find(',', at);
    out.emplace_back(trim(s.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at)));
    if (comma == std::string_view::npos) return out;
    at = comma + 1;
  }
}

struct Reader {
  Graph g;
  int line_number = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("graph text, line " + std::to_string(line_number) + ": " + what);
  }

  ValueId value(const std::string& name) {
    if (name.empty()) return kNoId;
    if (auto it = g.value_by_name.find(name); it != g.value_by_name.end()) return it->second;
    Value v;
    v.name = name;
    const ValueId id = add_value(g, std::move(v));
    g.value_by_name[name] = id;
    return id;
  }

  // "float[M,N]": the dtype by its name, the dims when a list follows.
  void set_type(Value& v, std::string_view type) {
    const size_t bracket = type.find('[');
    const std::string_view dtype = trim(type.substr(0, bracket));
    v.dtype = kDTypeUndefined;
    for (int t = 1; t < 64 && dtype_is_known(t); ++t)
      if (dtype_name(t) == dtype) v.dtype = t;
    if (v.dtype == kDTypeUndefined) fail("unknown element type '" + std::string(dtype) + "'");
    v.type_kind = TypeKind::kTensor;
    if (bracket != std::string_view::npos) {
      if (type.back() != ']') fail("a shape ends with ']'");
      v.has_shape = true;
      for (const std::string& d : split_list(type.substr(bracket + 1, type.size() - bracket - 2))) {
        if (d.empty()) fail("an empty dim");
        if (std::isdigit(static_cast<unsigned char>(d.front())))
          v.dims.push_back(Dim{std::stoll(d), {}});
        else
          v.dims.push_back(Dim{-1, d});
      }
    }
    compute_value_bytes(v);
  }

  void declaration(std::string_view kind, std::string_view rest) {
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos) fail("a declaration is 'KIND NAME: TYPE'");
    const ValueId id = value(std::string(trim(rest.substr(0, colon))));
    Value& v = g.values[id];
    set_type(v, trim(rest.substr(colon + 1)));
    if (kind == "input") v.is_graph_input = true, g.inputs.push_back(id);
    if (kind == "output") v.is_graph_output = true, g.outputs.push_back(id);
    if (kind == "weight") v.is_initializer = true, g.initializers.push_back(id);
  }

  void node(std::string_view outputs, std::string_view call) {
    Node n;
    n.index = static_cast<NodeId>(g.nodes.size());
    n.name = "node" + std::to_string(g.nodes.size());
    if (const size_t as = call.rfind(" as "); as != std::string_view::npos) {
      n.name = std::string(trim(call.substr(as + 4)));
      call = trim(call.substr(0, as));
    }
    const size_t open = call.find('(');
    if (open == std::string_view::npos || call.back() != ')') fail("a node is 'OUTPUTS = OP(INPUTS)'");
    const std::string_view op = trim(call.substr(0, open));
    const size_t dot = op.rfind('.');
    n.op_type = std::string(dot == std::string_view::npos ? op : op.substr(dot + 1));
    if (dot != std::string_view::npos) n.domain = std::string(op.substr(0, dot));
    if (n.op_type.empty()) fail("a node without an op type");
    for (const std::string& in : split_list(call.substr(open + 1, call.size() - open - 2)))
      n.inputs.push_back(value(in));
    for (const std::string& out : split_list(outputs)) {
      if (out.empty()) fail("an empty output name");
      n.outputs.push_back(value(out));
    }
    g.nodes.push_back(std::move(n));
  }
};

}  // namespace

Graph parse_graph(std::string_view text) {
  Reader r;
  r.g.name = "text";
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++r.line_number;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    if (const size_t eq = line.find('='); eq != std::string_view::npos) {
      r.node(trim(line.substr(0, eq)), trim(line.substr(eq + 1)));
      continue;
    }
    const size_t space = line.find(' ');
    const std::string_view kind = line.substr(0, space);
    if (space == std::string_view::npos || (kind != "input" && kind != "output" && kind != "weight" && kind != "value"))
      r.fail("expected 'input', 'output', 'weight' or 'value NAME: TYPE', or 'OUTPUTS = OP(INPUTS)'");
    r.declaration(kind, trim(line.substr(space + 1)));
  }
  renumber_values(r.g);
  return std::move(r.g);
}

Model parse_model(std::string_view text, std::map<std::string, int64_t> opsets) {
  Model m;
  m.path = "graph text";
  m.ir_version = 8;
  m.opsets = std::move(opsets);
  m.graph = parse_graph(text);
  return m;
}

}  // namespace memplan::testing
