#include "precheck.h"

#include <onnx/defs/schema.h>

#include <map>

#include "memplan/error.h"
#include "memplan/text_escape.h"
#include "proto_model.h"

namespace memplan::onnx_io {
namespace {

const char* type_name(onnx::AttributeProto::AttributeType t) {
  switch (t) {
    case onnx::AttributeProto::FLOAT:
      return "a float";
    case onnx::AttributeProto::INT:
      return "an int";
    case onnx::AttributeProto::STRING:
      return "a string";
    case onnx::AttributeProto::TENSOR:
      return "a tensor";
    case onnx::AttributeProto::GRAPH:
      return "a graph";
    case onnx::AttributeProto::SPARSE_TENSOR:
      return "a sparse tensor";
    case onnx::AttributeProto::TYPE_PROTO:
      return "a type";
    case onnx::AttributeProto::FLOATS:
      return "a list of floats";
    case onnx::AttributeProto::INTS:
      return "a list of ints";
    case onnx::AttributeProto::STRINGS:
      return "a list of strings";
    case onnx::AttributeProto::TENSORS:
      return "a list of tensors";
    case onnx::AttributeProto::GRAPHS:
      return "a list of graphs";
    case onnx::AttributeProto::SPARSE_TENSORS:
      return "a list of sparse tensors";
    case onnx::AttributeProto::TYPE_PROTOS:
      return "a list of types";
    default:
      return "untyped";
  }
}

class Prechecker {
 public:
  Prechecker(const onnx::ModelProto& model, const std::string& path) : path_(path) {
    for (const auto& op : model.opset_import()) opsets_[domain_key(op.domain())] = op.version();
    if (model.opset_import_size() == 0) opsets_[""] = 1;
  }

  void graph(const onnx::GraphProto& g, int depth) {
    // (a bound on nesting: subgraph recursion in libonnx and here uses the stack)
    if (depth > 64) fail("subgraphs nest more than 64 deep");
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
      for (const auto& vi : *list) value_info(vi);
    for (const auto& t : g.initializer()) {
      name(t.name(), "initializer");
      for (int64_t d : t.dims())
        if (d < 0) fail("initializer '" + terminal_text(t.name()) + "' has a negative dim (" + std::to_string(d) + ")");
    }
    for (int i = 0; i < g.node_size(); ++i) node(g.node(i), i, depth);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { fail_input(path_, what); }

  void name(const std::string& s, const char* what) const {
    if (!is_valid_utf8(s))
      fail(std::string("the ") + what + " name '" + terminal_text(s) +
           "' is not valid UTF-8 (ONNX names are UTF-8 strings); the file is corrupt or was written by a broken "
           "exporter");
  }

  void value_info(const onnx::ValueInfoProto& vi) const {
    name(vi.name(), "value");
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    int axis = 0;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      if (d.has_dim_value() && d.dim_value() < 0)
        fail("value '" + terminal_text(vi.name()) + "' has negative dimension " + std::to_string(d.dim_value()) +
             " at axis " + std::to_string(axis));
      ++axis;
      if (d.has_dim_param()) name(d.dim_param(), "dim");
    }
  }

  void node(const onnx::NodeProto& n, int position, int depth) {
    name(n.name(), "node");
    name(n.op_type(), "op type");
    for (const auto& s : n.input()) name(s, "input");
    for (const auto& s : n.output()) name(s, "output");
    // (the node's description, built only for a fault: this check runs on every node of every model, three times)
    auto who = [&] { return describe_node(n, position); };
    const std::string domain = domain_key(n.domain());
    auto opset = opsets_.find(domain);
    const onnx::OpSchema* schema =
        opset == opsets_.end() || n.op_type().empty()
            ? nullptr
            : onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset->second), domain);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) graph(a.g(), depth + 1);
      for (const auto& sub : a.graphs()) graph(sub, depth + 1);
      if (a.type() == onnx::AttributeProto::GRAPH && !a.has_g())
        fail(who() + ": attribute '" + terminal_text(a.name()) + "' is declared a graph but holds none");
      if (!schema) continue;
      auto decl = schema->attributes().find(a.name());
      if (decl == schema->attributes().end() || a.has_ref_attr_name()) continue;
      // (untyped attributes come from IR version 1 writers; libonnx reads them as their declared type)
      const bool graph_declared =
          decl->second.type == onnx::AttributeProto::GRAPH || decl->second.type == onnx::AttributeProto::GRAPHS;
      if (a.type() == onnx::AttributeProto::UNDEFINED && graph_declared && !a.has_g() && a.graphs_size() == 0)
        fail(who() + ": attribute '" + terminal_text(a.name()) + "' must hold a graph but is empty");
      if (a.type() != onnx::AttributeProto::UNDEFINED && a.type() != decl->second.type)
        fail(who() + ": attribute '" + terminal_text(a.name()) + "' is " + type_name(a.type()) + " but " + n.op_type() +
             " takes " + type_name(decl->second.type) + "; the model is malformed");
    }
    // libonnx indexes with it before any check (a negative one crashes its inference); the range against the
    // ranks is checked after inference (attribute_ranges.h).
    if (n.op_type() == "GatherND" && (domain.empty()))
      for (const auto& a : n.attribute())
        if (a.name() == "batch_dims" && a.i() < 0)
          fail(who() + ": attribute batch_dims=" + std::to_string(a.i()) +
               " is negative; GatherND's batch dimensions count from 0 and must be less than both inputs' ranks");
    // A Constant takes its value from exactly one attribute; with none (or a misspelt one) it has no value and no
    // type, and its output would be planned as nothing.
    if (n.op_type() == "Constant" && domain.empty()) {
      int given = 0;
      for (const auto& a : n.attribute())
        for (const char* known : {"value", "sparse_value", "value_float", "value_floats", "value_int", "value_ints",
                                  "value_string", "value_strings"})
          given += a.name() == known;
      if (given != 1)
        fail(who() + (given ? " has several value attributes" : " has no value attribute") +
             " (a Constant takes exactly one of value, sparse_value, value_float(s), value_int(s), value_string(s)); "
             "the model is malformed");
    }
    if (!schema) return;
    for (const auto& [attr_name, decl] : schema->attributes()) {
      if (!decl.required) continue;
      bool present = false;
      for (const auto& a : n.attribute()) present = present || a.name() == attr_name;
      if (!present)
        fail(who() + ": the required attribute '" + attr_name + "' is missing (" + n.op_type() + " in opset " +
             std::to_string(opset->second) + " needs it); the model is malformed");
    }
    const int inputs = n.input_size(), outputs = n.output_size();
    if (inputs < schema->min_input() || inputs > schema->max_input())
      fail(who() + " has " + std::to_string(inputs) + " inputs; " + n.op_type() + " takes " +
           std::to_string(schema->min_input()) + " to " + std::to_string(schema->max_input()));
    if (outputs < schema->min_output() || outputs > schema->max_output())
      fail(who() + " has " + std::to_string(outputs) + " outputs; " + n.op_type() + " gives " +
           std::to_string(schema->min_output()) + " to " + std::to_string(schema->max_output()));
  }

  std::string path_;
  std::map<std::string, int64_t> opsets_;
};

}  // namespace

void check_before_inference(const onnx::ModelProto& model, const std::string& path) {
  Prechecker checker(model, path);
  checker.graph(model.graph(), 0);
}

}  // namespace memplan::onnx_io
