// The types table an inference child sends its parent (onnx_io/src/types_table.h) against the protobuf entries it
// stands for.
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "memplan/error.h"
#include "model_builder.h"
#include "proto_model.h"
#include "types_table.h"

using namespace memplan;
using namespace memplan::testing;

namespace {

// A graph declaring every kind of type the graph view reads: tensors with known, named and anonymous dims, a tensor
// of unknown rank, a scalar, a sparse tensor, a sequence, a map, an optional, an entry without a type, a name declared
// twice (the later wins) and an output whose type differs from its value_info entry (the output wins).
onnx::ModelProto varied_model() {
  onnx::ModelProto model =
      make_model({make_node("Relu", {"x"}, {"a"}), make_node("Relu", {"a"}, {"b"}), make_node("Relu", {"b"}, {"c"}),
                  make_node("Relu", {"c"}, {"d"}), make_node("Relu", {"d"}, {"e"}), make_node("Relu", {"e"}, {"f"}),
                  make_node("Relu", {"f"}, {"g"}), make_node("Relu", {"g"}, {"y"})},
                 {tensor_info("x", onnx::TensorProto::FLOAT, {"N", "3"})},
                 {tensor_info("y", onnx::TensorProto::FLOAT, {"N", "3"})});
  auto& g = *model.mutable_graph();
  auto* a = g.add_value_info();
  *a = tensor_info("a", onnx::TensorProto::FLOAT, {"N", "3"});
  a->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();  // an anonymous third dim
  auto* b = g.add_value_info();
  b->set_name("b");
  b->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);  // rank unknown
  *g.add_value_info() = tensor_info("c", onnx::TensorProto::DOUBLE, {});              // a scalar
  auto* d = g.add_value_info();
  d->set_name("d");
  d->mutable_type()->mutable_sparse_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  d->mutable_type()->mutable_sparse_tensor_type()->mutable_shape()->add_dim()->set_dim_value(7);
  auto* e = g.add_value_info();
  e->set_name("e");
  e->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  auto* f = g.add_value_info();
  f->set_name("f");
  f->mutable_type()->mutable_map_type()->set_key_type(onnx::TensorProto::INT64);
  auto* opt = g.add_value_info();
  opt->set_name("g");
  opt->mutable_type()->mutable_optional_type();
  g.add_value_info()->set_name("untyped");
  *g.add_value_info() = tensor_info("c", onnx::TensorProto::FLOAT16, {"5"});  // declared again: this one wins
  *g.add_value_info() = tensor_info("y", onnx::TensorProto::FLOAT, {"2", "3"});
  return model;
}

// The fields of a type the graph view reads.
std::string read_fields(const onnx::TypeProto& t) {
  std::string s = std::to_string(t.value_case());
  const onnx::TensorShapeProto* shape = nullptr;
  if (t.has_tensor_type()) {
    s += " " + std::to_string(t.tensor_type().elem_type());
    if (t.tensor_type().has_shape()) shape = &t.tensor_type().shape();
  }
  if (t.has_sparse_tensor_type()) {
    s += " " + std::to_string(t.sparse_tensor_type().elem_type());
    if (t.sparse_tensor_type().has_shape()) shape = &t.sparse_tensor_type().shape();
  }
  if (shape) {
    s += " [";
    for (const auto& d : shape->dim())
      s += d.has_dim_value() ? std::to_string(d.dim_value()) + "," : d.has_dim_param() ? d.dim_param() + "," : "?,";
    s += "]";
  }
  return s;
}

}  // namespace

TEST_CASE("a types table gives back each entry's name and the fields of its type the graph view reads",
          "[load][shapes]") {
  const onnx::ModelProto model = varied_model();
  const onnx::GraphProto& g = model.graph();
  const onnx_io::TypesTable table(onnx_io::types_table_part(g));
  CHECK(table.value_info_count() == static_cast<uint64_t>(g.value_info_size()));
  CHECK(table.output_count() == static_cast<uint64_t>(g.output_size()));
  std::vector<const onnx::ValueInfoProto*> expected;
  for (const auto& vi : g.value_info()) expected.push_back(&vi);
  for (const auto& vi : g.output()) expected.push_back(&vi);
  size_t k = 0;
  onnx::TypeProto type;
  table.for_each([&](std::string_view name, size_t entry) {
    REQUIRE(k < expected.size());
    CHECK(name == expected[k]->name());
    table.type(entry, type);
    CHECK(read_fields(type) == read_fields(expected[k]->type()));
    ++k;
  });
  CHECK(k == expected.size());

  // Put back into a graph: the same lists, names and fields.
  onnx::GraphProto back = g;
  back.clear_value_info();
  back.mutable_output(0)->mutable_type()->Clear();
  table.put_back(back);
  REQUIRE(back.value_info_size() == g.value_info_size());
  REQUIRE(back.output_size() == g.output_size());
  for (int i = 0; i < g.value_info_size(); ++i) {
    CHECK(back.value_info(i).name() == g.value_info(i).name());
    CHECK(read_fields(back.value_info(i).type()) == read_fields(g.value_info(i).type()));
  }
  CHECK(read_fields(back.output(0).type()) == read_fields(g.output(0).type()));

  // A table cut short, or with bytes after its entries, is refused.
  const std::string bytes = onnx_io::types_table_part(g);
  CHECK_THROWS_AS(onnx_io::TypesTable(bytes.substr(0, bytes.size() - 3)), std::runtime_error);
  CHECK_THROWS_AS(onnx_io::TypesTable(bytes + "x"), std::runtime_error);
}

TEST_CASE("the graph view's types from a types table equal those from the protobuf entries", "[load][shapes]") {
  const onnx::ModelProto model = varied_model();
  Model from_proto = onnx_io::build_model_structure(model, "varied.onnx");
  Model from_table = onnx_io::build_model_structure(model, "varied.onnx");
  onnx_io::apply_model_types(from_proto, model, "varied.onnx");
  const onnx_io::TypesTable table(onnx_io::types_table_part(model.graph()));
  onnx::ModelProto parsed_only = model;  // (what this process parsed: its entries are not read)
  parsed_only.mutable_graph()->clear_value_info();
  onnx_io::apply_model_types(from_table, parsed_only, "varied.onnx", &table);
  REQUIRE(from_proto.graph.values.size() == from_table.graph.values.size());
  for (size_t i = 0; i < from_proto.graph.values.size(); ++i) {
    const Value &a = from_proto.graph.values[i], &b = from_table.graph.values[i];
    INFO(a.name);
    CHECK(a.type_kind == b.type_kind);
    CHECK(a.dtype == b.dtype);
    CHECK(a.has_shape == b.has_shape);
    CHECK(a.dims == b.dims);
    CHECK(a.bytes == b.bytes);
  }
  // What each value got: the later of two entries, the output's type over its entry's, the input's own.
  const Graph& g = from_table.graph;
  CHECK(g.values[g.value_by_name.at("c")].dtype == onnx::TensorProto::FLOAT16);
  CHECK(g.values[g.value_by_name.at("y")].dims == std::vector<Dim>{{-1, "N"}, {3, ""}});
  CHECK(g.values[g.value_by_name.at("e")].type_kind == TypeKind::kSequence);
  CHECK(g.values[g.value_by_name.at("d")].type_kind == TypeKind::kSparseTensor);
  CHECK(g.values[g.value_by_name.at("a")].dims.size() == 3);

  // A negative dim from the table is refused as one from the entries is, naming the value.
  onnx::ModelProto negative = model;
  negative.mutable_graph()
      ->mutable_value_info(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_value(-2);
  Model structure = onnx_io::build_model_structure(negative, "negative.onnx");
  const onnx_io::TypesTable bad(onnx_io::types_table_part(negative.graph()));
  try {
    onnx_io::apply_model_types(structure, parsed_only, "negative.onnx", &bad);
    FAIL("a negative dim was taken");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("value 'a' has negative dimension -2 at axis 1") != std::string::npos);
  }
}
