// ONNX's inference in pieces (onnx_io/src/segmented_inference.h) against ONNX's single call on the same model.
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "model_builder.h"
#include "proto_model.h"
#include "segmented_inference.h"

using namespace memplan;
using namespace memplan::testing;

namespace {

onnx::AttributeProto graph_attribute(const std::string& name, const onnx::GraphProto& g) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::GRAPH);
  *a.mutable_g() = g;
  return a;
}

onnx::NodeProto int64_constant(const std::string& output, const std::vector<int64_t>& values) {
  onnx::NodeProto n = make_node("Constant", {}, {output}, "const_" + output);
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
  return n;
}

// `blocks` blocks, each with an If whose branches read the running value from the main graph, a NonZero (a dim
// inference must invent), and Reshapes to shapes made `lag` blocks earlier: one a Shape's (known to inference only by
// data propagation), one a Constant's (known by its contents). With 16 Ifs a piece, lag 20 crosses pieces.
onnx::ModelProto many_ifs(int blocks, int lag) {
  std::vector<onnx::NodeProto> nodes;
  std::string cur = "x";
  for (int i = 0; i < blocks; ++i) {
    const std::string s = std::to_string(i);
    nodes.push_back(make_node("Shape", {cur}, {"shape" + s}));
    nodes.push_back(int64_constant("dims" + s, {4, 8, 8}));
    const std::string earlier = std::to_string(i >= lag ? i - lag : i);
    nodes.push_back(make_node("Reshape", {cur, "shape" + earlier}, {"by_shape" + s}));
    nodes.push_back(make_node("Reshape", {"by_shape" + s, "dims" + earlier}, {"by_constant" + s}));
    nodes.push_back(make_node("NonZero", {"by_constant" + s}, {"nonzero" + s}));
    nodes.push_back(make_node("ReduceSum", {"by_constant" + s}, {"sum" + s}));
    nodes.push_back(make_node("Cast", {"sum" + s}, {"cond" + s}));
    nodes.back().add_attribute()->CopyFrom([] {
      onnx::AttributeProto a;
      a.set_name("to");
      a.set_type(onnx::AttributeProto::INT);
      a.set_i(onnx::TensorProto::BOOL);
      return a;
    }());
    onnx::GraphProto then_branch, else_branch;
    *then_branch.add_node() = make_node("Relu", {"by_constant" + s}, {"then" + s});
    *then_branch.add_output() = tensor_info("then" + s, onnx::TensorProto::FLOAT, {});
    then_branch.mutable_output(0)->clear_type();
    *else_branch.add_node() = make_node("Neg", {"by_constant" + s}, {"else" + s});
    *else_branch.add_output() = tensor_info("else" + s, onnx::TensorProto::FLOAT, {});
    else_branch.mutable_output(0)->clear_type();
    then_branch.set_name("then" + s);
    else_branch.set_name("else" + s);
    onnx::NodeProto branch = make_node("If", {"cond" + s}, {"if" + s}, "if" + s);
    *branch.add_attribute() = graph_attribute("then_branch", then_branch);
    *branch.add_attribute() = graph_attribute("else_branch", else_branch);
    nodes.push_back(branch);
    cur = "if" + s;
  }
  onnx::ModelProto m = make_model(nodes, {tensor_info("x", onnx::TensorProto::FLOAT, {"4", "64"})},
                                  {tensor_info(cur, onnx::TensorProto::FLOAT, {})}, 14);
  m.mutable_graph()->mutable_output(0)->clear_type();
  return m;
}

// Renames every dim ONNX invented (unk__N) to its rank of first appearance, walking the whole model in one order.
void canonical_symbols(onnx::GraphProto& g, std::map<std::string, std::string>& names) {
  auto visit = [&](onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type()) return;
    for (auto& d : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
      if (d.has_dim_param() && d.dim_param().rfind("unk__", 0) == 0) {
        auto [it, added] = names.try_emplace(d.dim_param(), "");
        if (added) it->second = "s" + std::to_string(names.size());
        d.set_dim_param(it->second);
      }
  };
  for (auto* list : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()})
    for (auto& vi : *list) visit(vi);
  for (auto& n : *g.mutable_node())
    for (auto& a : *n.mutable_attribute())
      if (a.has_g()) canonical_symbols(*a.mutable_g(), names);
}

std::string canonical(onnx::ModelProto m) {
  std::map<std::string, std::string> names;
  canonical_symbols(*m.mutable_graph(), names);
  std::string out;
  m.SerializeToString(&out);
  return out;
}

const onnx::TypeProto* inferred(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& vi : m.graph().value_info())
    if (vi.name() == name) return &vi.type();
  return nullptr;
}

}  // namespace

TEST_CASE("inference in pieces gives what ONNX's single call gives", "[shapes][scale]") {
  for (bool data_propagation : {false, true}) {
    INFO("data propagation " << data_propagation);
    const onnx::ModelProto model = many_ifs(100, 20);
    onnx::ShapeInferenceOptions options(false, 0, data_propagation);
    onnx::ModelProto pieces = model, single = model;
    onnx_io::infer_model_shapes(pieces, onnx::OpSchemaRegistry::Instance(), options);
    onnx::shape_inference::InferShapes(single, onnx::OpSchemaRegistry::Instance(), options);
    // The nodes, the declared types, every inferred type (main graph and branches) and their order are the same, the
    // invented dims up to their names.
    CHECK(pieces.graph().value_info_size() == single.graph().value_info_size());
    CHECK(canonical(pieces) == canonical(single));

    // The pieces did see across themselves: a Reshape to a Shape's output 20 blocks (more than a piece) back has
    // a static shape only with data propagation; one to an earlier Constant's contents always has.
    const onnx::TypeProto* by_shape = inferred(pieces, "by_shape99");
    const onnx::TypeProto* by_constant = inferred(pieces, "by_constant99");
    REQUIRE(by_shape);
    REQUIRE(by_constant);
    CHECK(by_shape->tensor_type().shape().dim_size() == (data_propagation ? 3 : 0));  // (the Ifs give [4, 8, 8])
    if (data_propagation) CHECK(by_shape->tensor_type().shape().dim(2).dim_value() == 8);
    REQUIRE(by_constant->tensor_type().shape().dim_size() == 3);
    CHECK(by_constant->tensor_type().shape().dim(2).dim_value() == 8);
    // Each NonZero's count is a dim of its own, though each piece's inference named its first one unk__0.
    std::set<std::string> counts;
    for (int i = 0; i < 100; ++i) {
      const onnx::TypeProto* t = inferred(pieces, "nonzero" + std::to_string(i));
      REQUIRE(t);
      REQUIRE(t->tensor_type().shape().dim_size() == 2);
      counts.insert(t->tensor_type().shape().dim(1).dim_param());
    }
    CHECK(counts.size() == 100);
    CHECK(counts.count("") == 0);
  }
}

TEST_CASE("inference in pieces keeps declared types where ONNX's single call keeps them", "[shapes][scale]") {
  onnx::ModelProto model = many_ifs(80, 20);
  // A declared value_info in the middle of the graph and a typed graph output: merged into, not duplicated.
  *model.mutable_graph()->add_value_info() = tensor_info("by_constant40", onnx::TensorProto::FLOAT, {"4", "8", "8"});
  *model.mutable_graph()->mutable_output(0) = tensor_info("if79", onnx::TensorProto::FLOAT, {"4", "N", "8"});
  onnx::ShapeInferenceOptions options(false, 0, true);
  onnx::ModelProto pieces = model, single = model;
  onnx_io::infer_model_shapes(pieces, onnx::OpSchemaRegistry::Instance(), options);
  onnx::shape_inference::InferShapes(single, onnx::OpSchemaRegistry::Instance(), options);
  CHECK(pieces.graph().value_info(0).name() == "by_constant40");
  CHECK(pieces.graph().output(0).type().tensor_type().shape().dim(1).dim_value() == 8);  // (inferred over "N")
  CHECK(canonical(pieces) == canonical(single));
}

TEST_CASE("a plan of 600 Ifs: inspect lists the owners holding the most, the timeline draws their bodies together",
          "[scale][bodies]") {
  const std::string model = write_temp_model("six_hundred_ifs.onnx", many_ifs(600, 20));
  const std::string plan = model + ".plan.json", svg = model + ".svg";
  REQUIRE(run("plan " + model + " --allow-unknown-sizes -o " + plan).exit_code == 0);
  const RunResult text = run_stdout("inspect " + plan + " --svg " + svg);
  REQUIRE(text.exit_code == 0);
  size_t owner_lines = 0;
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);)
    owner_lines += line.find("If 'if") != std::string::npos && line.find("branch") != std::string::npos;
  CHECK(owner_lines == 10);  // --top's default
  CHECK(text.out.find("... 590 more owners of bodies") != std::string::npos);

  std::ifstream in(svg);
  std::stringstream picture;
  picture << in.rdbuf();
  const std::string drawn = picture.str();
  CHECK(drawn.find("the bodies of 600 If/Loop/Scan nodes") != std::string::npos);
  CHECK(drawn.find("<title>the bodies of If") == std::string::npos);  // none drawn one by one
}

TEST_CASE("a lent list gives back what was lent, first in the borrower's list, and keeps what it owns", "[shapes]") {
  onnx::GraphProto lender;
  for (const char* name : {"a", "b", "c"}) lender.add_node()->set_name(name);
  {
    onnx::GraphProto borrower;
    onnx_io::LentList<onnx::NodeProto> lent(borrower.mutable_node());
    lent.lend(lender.mutable_node(0));
    lent.lend(lender.mutable_node(2));
    borrower.add_node()->set_name("own");
    REQUIRE(borrower.node_size() == 3);
    CHECK(&borrower.node(0) == &lender.node(0));  // the same message, not a copy
    CHECK(&borrower.node(1) == &lender.node(2));
    CHECK(lent.size() == 2);
    CHECK_THROWS_AS(lent.lend(lender.mutable_node(1)), std::logic_error);  // (it would stand after "own")
    lent.give_back();
    REQUIRE(borrower.node_size() == 1);
    CHECK(borrower.node(0).name() == "own");
  }
  {
    onnx::GraphProto borrower;
    onnx_io::LentList<onnx::NodeProto> lent(borrower.mutable_node());
    lent.lend(lender.mutable_node(1));
  }  // (the lent list goes first: the node is taken out, not deleted with the borrower)
  REQUIRE(lender.node_size() == 3);
  CHECK(lender.node(0).name() == "a");
  CHECK(lender.node(1).name() == "b");
  CHECK(lender.node(2).name() == "c");
  {
    onnx::GraphProto borrower;
    onnx_io::LentList<onnx::NodeProto> lent(borrower.mutable_node());
    auto* let_go = new onnx::NodeProto;  // a node its lender lets go of
    let_go->set_name("let go");
    lent.lend(let_go);
    lent.hand_over();  // the borrower's own from now: deleted with it (else a leak, which ASan reports)
    CHECK(lent.size() == 0);
    CHECK(borrower.node_size() == 1);
  }
}
