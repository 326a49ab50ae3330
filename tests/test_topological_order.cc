// The inference order of a model's nodes (onnx_io/src/shape_pass.h's topological_order), against a plain reference:
// Kahn's algorithm taking the smallest ready index first, inputs found by a scan of every node's outputs.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "shape_pass.h"

using memplan::onnx_io::topological_order;

namespace {

onnx::NodeProto& add_node(onnx::GraphProto& g, const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto& n = *g.add_node();
  n.set_op_type("Add");
  for (const auto& in : inputs) n.add_input(in);
  n.add_output(output);
  return n;
}

// Producer of each name read by node i (its inputs and, at any depth, its bodies' reads), -1 for none.
void reads(const onnx::NodeProto& n, std::vector<std::string>& out) {
  for (const auto& in : n.input()) out.push_back(in);
  for (const auto& a : n.attribute())
    if (a.has_g())
      for (const auto& inner : a.g().node()) reads(inner, out);
}

std::vector<int> reference_order(const onnx::GraphProto& g) {
  const int n = g.node_size();
  auto producer = [&](const std::string& name, int reader, bool inside) {
    int found = -1;
    for (int j = 0; j < n; ++j)
      for (const auto& o : g.node(j).output())
        if (!o.empty() && o == name) found = j;
    return inside && found == reader ? -1 : found;
  };
  std::vector<std::vector<int>> before(n);
  for (int i = 0; i < n; ++i) {
    for (const auto& in : g.node(i).input())
      if (int p = producer(in, i, false); p >= 0) before[i].push_back(p);
    std::vector<std::string> inner;
    for (const auto& a : g.node(i).attribute())
      if (a.has_g())
        for (const auto& m : a.g().node()) reads(m, inner);
    for (const auto& in : inner)
      if (int p = producer(in, i, true); p >= 0) before[i].push_back(p);
  }
  std::vector<int> order;
  std::vector<bool> done(n, false);
  for (bool progress = true; progress;) {
    progress = false;
    for (int i = 0; i < n; ++i) {
      if (done[i]) continue;
      bool ready = std::all_of(before[i].begin(), before[i].end(), [&](int p) { return done[p]; });
      if (ready) {
        done[i] = true;
        order.push_back(i);
        progress = true;
        break;  // the smallest ready index first
      }
    }
  }
  return order;
}

std::vector<int> identity(int n) {
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  return order;
}

}  // namespace

TEST_CASE("a chain listed in order is taken as listed, and put in order when reversed", "[load][order]") {
  onnx::GraphProto g;
  g.add_input()->set_name("x");
  g.add_initializer()->set_name("w");
  std::string last = "x";
  for (int i = 0; i < 50; ++i) {
    add_node(g, {last, "w"}, "v" + std::to_string(i));
    last = "v" + std::to_string(i);
  }
  CHECK(topological_order(g) == identity(50));
  std::reverse(g.mutable_node()->begin(), g.mutable_node()->end());
  std::vector<int> reversed(50);
  for (int i = 0; i < 50; ++i) reversed[i] = 49 - i;
  CHECK(topological_order(g) == reversed);
}

TEST_CASE("a node of many outputs read by the next: past the outputs compared, the table decides", "[load][order]") {
  // One node writes 200 values (more than the check compares near a reader), all read by the node after it, in
  // reverse order, and by one more node further on.
  onnx::GraphProto g;
  g.add_input()->set_name("x");
  onnx::NodeProto& split = add_node(g, {"x"}, "s0");
  for (int k = 1; k < 200; ++k) split.add_output("s" + std::to_string(k));
  std::vector<std::string> reversed;
  for (int k = 199; k >= 0; --k) reversed.push_back("s" + std::to_string(k));
  add_node(g, reversed, "joined");
  add_node(g, {"joined", "s150"}, "y");
  CHECK(memplan::onnx_io::listed_in_order(g));
  CHECK(topological_order(g) == identity(3));
  // The reader first: not in order, whichever of the outputs it reads first.
  std::swap(*g.mutable_node(0), *g.mutable_node(1));
  CHECK_FALSE(memplan::onnx_io::listed_in_order(g));
  CHECK(topological_order(g) == reference_order(g));
  CHECK(topological_order(g) == std::vector<int>{1, 0, 2});
}

TEST_CASE("a value read far from its producer is ordered by the full check", "[load][order]") {
  onnx::GraphProto g;
  g.add_input()->set_name("x");
  // Node 0 reads the output of node 40 (far past the nodes looked back at), which reads only x.
  add_node(g, {"x", "far"}, "first");
  for (int i = 1; i < 40; ++i) add_node(g, {"x"}, "v" + std::to_string(i));
  add_node(g, {"x"}, "far");
  const std::vector<int> order = topological_order(g);
  REQUIRE(order.size() == 41);
  CHECK(order == reference_order(g));
  CHECK(std::find(order.begin(), order.end(), 40) < std::find(order.begin(), order.end(), 0));
  // Listed in order, with the read far after the write: the list as it is.
  std::rotate(g.mutable_node()->begin(), g.mutable_node()->begin() + 1, g.mutable_node()->end());
  CHECK(topological_order(g) == identity(41));
  // A node reading its own output is on a cycle: left out.
  add_node(g, {"self"}, "self");
  CHECK(topological_order(g).size() == 41);
}

TEST_CASE("a body's read of a value written later orders its node after the writer", "[load][order]") {
  onnx::GraphProto g;
  g.add_input()->set_name("x");
  onnx::NodeProto& holder = add_node(g, {"x"}, "y");
  holder.set_op_type("If");
  onnx::AttributeProto& branch = *holder.add_attribute();
  branch.set_name("then_branch");
  branch.set_type(onnx::AttributeProto::GRAPH);
  add_node(*branch.mutable_g(), {"later"}, "inner");
  add_node(g, {"x"}, "later");  // (the one node next to it: a near write is no proof for a body's read)
  CHECK(topological_order(g) == std::vector<int>{1, 0});
}

TEST_CASE("random graphs: the order is the reference's, listed in order or not", "[load][order]") {
  std::mt19937 rng(20261207);
  for (int round = 0; round < 300; ++round) {
    const int n = std::uniform_int_distribution<int>(1, 60)(rng);
    const int reach = std::uniform_int_distribution<int>(1, 40)(rng);  // how far back an input may be written
    onnx::GraphProto g;
    g.add_input()->set_name("x");
    g.add_initializer()->set_name("w");
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> inputs;
      const int count = std::uniform_int_distribution<int>(0, 3)(rng);
      for (int k = 0; k < count; ++k) {
        const int pick = std::uniform_int_distribution<int>(-2, std::min(i, reach) - 1)(rng);
        inputs.push_back(pick == -2 ? "x" : pick == -1 ? "w" : "v" + std::to_string(i - 1 - pick));
      }
      if (std::uniform_int_distribution<int>(0, 9)(rng) == 0) inputs.push_back("");  // an omitted optional input
      add_node(g, inputs, "v" + std::to_string(i));
    }
    // Listed in order, or with some nodes moved (a function's body appended at the end, a file written out of order).
    const int moves = std::uniform_int_distribution<int>(0, 3)(rng);
    for (int m = 0; m < moves && n > 1; ++m) {
      const int a = std::uniform_int_distribution<int>(0, n - 1)(rng);
      const int b = std::uniform_int_distribution<int>(0, n - 1)(rng);
      g.mutable_node()->SwapElements(a, b);
    }
    INFO("round " << round << ", " << n << " nodes, reach " << reach << ", moves " << moves);
    CHECK(topological_order(g) == reference_order(g));
  }
}
