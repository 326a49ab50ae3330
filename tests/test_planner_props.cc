// Property tests of the planner and the layout on random graphs and on every shared model, checked
// against a happens-before relation computed independently (a transitive closure, not vector clocks).
#include <catch2/catch.hpp>
#include <random>
#include <set>

#include "memplan/arena/check.h"
#include "memplan/execution_order.h"
#include "memplan/onnx_io/load.h"
#include "memplan/partition/pipeline.h"
#include "memplan/planner/layout.h"
#include "model_builder.h"

using namespace memplan;
using namespace memplan::planner;
using namespace memplan::testing;

namespace {

// reach[a][b]: a completes before b starts in every interleaving (stream order and cross-stream edges).
std::vector<std::vector<bool>> closure(const Graph& g, const partition::Partition& part) {
  const size_t n = g.nodes.size();
  std::vector<std::vector<NodeId>> succ(n);
  for (const auto& s : part.streams)
    for (size_t i = 1; i < s.size(); ++i) succ[s[i - 1]].push_back(s[i]);
  for (const Node& node : g.nodes) {
    auto add = [&](ValueId v) {
      if (v != kNoId && g.values[v].producer != kNoId) succ[g.values[v].producer].push_back(node.index);
    };
    for (ValueId v : node.inputs) add(v);
    for (ValueId v : node.implicit_inputs) add(v);
  }
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (size_t a = 0; a < n; ++a) {
    std::vector<NodeId> stack(succ[a].begin(), succ[a].end());
    while (!stack.empty()) {
      NodeId b = stack.back();
      stack.pop_back();
      if (reach[a][b]) continue;
      reach[a][b] = true;
      for (NodeId c : succ[b]) stack.push_back(c);
    }
  }
  return reach;
}

std::vector<NodeId> users(const Value& v) {
  std::vector<NodeId> u(v.consumers.begin(), v.consumers.end());
  u.insert(u.end(), v.implicit_consumers.begin(), v.implicit_consumers.end());
  if (v.producer != kNoId) u.push_back(v.producer);
  return u;
}

// Checks the plan's sharing, releases and layout; returns the number of pairs of values that share
// memory (so callers can assert the check was not vacuous).
size_t check_plan(const Graph& g, const partition::Partition& part, const Plan& plan, const Layout& layout) {
  auto reach = closure(g, part);
  auto before_or_same = [&](NodeId a, NodeId b) { return a == b || reach[a][b]; };
  // u's memory may be taken by v if every user of u is done before v's producer writes.
  auto ordered = [&](const Value& u, const Value& v) {
    if (v.producer == kNoId) return false;
    for (NodeId x : users(u))
      if (!before_or_same(x, v.producer)) return false;
    return true;
  };
  auto unit = [&](ValueId v) {
    while (plan.values[v].inplace_of != kNoId) v = plan.values[v].inplace_of;
    return v;
  };
  size_t shared = 0;
  for (const Value& a : g.values)
    for (const Value& b : g.values) {
      if (a.index >= b.index) continue;
      bool same_root = plan.values[a.index].reused_buffer == plan.values[b.index].reused_buffer;
      bool overlap = false;
      if (layout.value_arena[a.index] >= 0 && layout.value_arena[a.index] == layout.value_arena[b.index] && a.bytes &&
          b.bytes) {
        uint64_t a0 = layout.value_offset[a.index], b0 = layout.value_offset[b.index];
        overlap = a0 < b0 + *b.bytes && b0 < a0 + *a.bytes && *a.bytes && *b.bytes;
      }
      if (!same_root && !overlap) continue;
      if (unit(a.index) == unit(b.index)) continue;  // an in-place chain: the plan says they share
      ++shared;
      INFO("values " << a.name << " and " << b.name << (same_root ? " share a root buffer" : " overlap in the arena"));
      CHECK((ordered(a, b) || ordered(b, a)));
    }
  // Every use of a released buffer happens before (or at) one of its release points.
  for (size_t r = 0; r < plan.release_actions.size(); ++r) {
    const ReleaseAction& act = plan.release_actions[r];
    std::vector<NodeId> points;
    for (const Node& n : g.nodes)
      for (int x : plan.node_releases[n.index])
        if (x == static_cast<int>(r)) points.push_back(n.index);
    CHECK(static_cast<int>(points.size()) == act.ref_count);
    for (const Value& v : g.values) {
      if (plan.values[v.index].reused_buffer != act.value) continue;
      for (NodeId x : users(v)) {
        bool covered = false;
        for (NodeId y : points) covered = covered || before_or_same(x, y);
        INFO("value " << v.name << " used at node " << x << " after its buffer's release");
        CHECK(covered);
      }
    }
  }
  return shared;
}

// A random DAG of Relu, Neg, Add and Sigmoid over a few shapes, so that reuse happens.
onnx::ModelProto random_model(std::mt19937& rng, int nodes) {
  std::vector<std::string> values{"x0", "x1"};
  std::vector<std::string> shape_of{"A", "A"};
  std::vector<onnx::NodeProto> ns;
  std::vector<onnx::ValueInfoProto> infos;
  const char* ops[] = {"Relu", "Neg", "Add", "Sigmoid"};
  for (int i = 0; i < nodes; ++i) {
    std::string op = ops[rng() % 4];
    std::string out = "v" + std::to_string(i);
    // Pick inputs of one shape class.
    size_t a = rng() % values.size();
    std::string cls = shape_of[a];
    std::vector<std::string> ins{values[a]};
    if (op == "Add") {
      std::vector<size_t> same;
      for (size_t k = 0; k < values.size(); ++k)
        if (shape_of[k] == cls) same.push_back(k);
      ins.push_back(values[same[rng() % same.size()]]);
    }
    ns.push_back(make_node(op, ins, {out}, "n" + std::to_string(i)));
    values.push_back(out);
    shape_of.push_back(cls);
  }
  // Nodes nobody consumes become graph outputs.
  std::set<std::string> consumed;
  for (const auto& n : ns)
    for (const auto& in : n.input()) consumed.insert(in);
  std::vector<onnx::ValueInfoProto> outputs;
  for (const auto& n : ns)
    if (!consumed.count(n.output(0))) outputs.push_back(tensor_info(n.output(0), 1, {"4", "8"}));
  return make_model(ns, {tensor_info("x0", 1, {"4", "8"}), tensor_info("x1", 1, {"4", "8"})}, outputs);
}

partition::Partition random_partition(const Graph& g, const std::vector<NodeId>& order, int streams,
                                      std::mt19937& rng) {
  partition::Partition p;
  p.stream_device.assign(streams, partition::Device{});
  p.node_stream.assign(g.nodes.size(), 0);
  for (NodeId n : order) p.node_stream[n] = static_cast<int>(rng() % streams);
  p.streams.assign(streams, {});
  for (NodeId n : order) p.streams[p.node_stream[n]].push_back(n);
  return p;
}

}  // namespace

TEST_CASE("random graphs: sharing and releases are safe under every interleaving", "[planner][property]") {
  std::mt19937 rng(2024);
  auto ops = partition::OpTable::builtin();
  size_t shared_total = 0;
  for (int trial = 0; trial < 40; ++trial) {
    Model m = onnx_io::load_model(write_temp_model("random.onnx", random_model(rng, 10 + trial)));
    const Graph& g = m.graph;
    partition::Placement placement{std::vector<partition::Device>(g.nodes.size()),
                                   std::vector<std::string>(g.nodes.size())};
    auto order = default_order(g);
    int streams = 1 + trial % 3;
    auto part = random_partition(g, order, streams, rng);
    for (ReuseMode mode : {ReuseMode::kMemplan, ReuseMode::kOrt}) {
      INFO("trial " << trial << ", " << streams << " streams, reuse " << reuse_mode_name(mode));
      PlanInput in{g, placement, part, order, ops, 14};
      Plan plan = create_plan(in, {mode});
      Layout layout = compute_layout(g, plan, part, {});
      shared_total += check_plan(g, part, plan, layout);
      for (const Arena& a : layout.arenas) {
        CHECK(a.bytes >= a.lower_bound);
        CHECK(a.bytes % a.alignment == 0);
      }
    }
  }
  CHECK(shared_total > 100);  // the property was exercised, not vacuously true
}

TEST_CASE("plans of every shared model and sample: safe, and the layout at its bound", "[planner][models]") {
  struct Case {
    std::string path;
    int streams;
  };
  std::vector<Case> cases;
  for (const char* m : {"resnet50", "mobilenet_v2", "densenet121", "inception_v3", "squeezenet1_1", "efficientnet_b0",
                        "vit_b_16", "bert_like", "gpt_like", "lstm2"})
    for (int s : {1, 2}) cases.push_back({std::string(MEMPLAN_SHARED_DIR "/models/") + m + ".onnx", s});
  for (const char* m : {"residual", "branches", "control_flow", "free_dims", "ort_observed"})
    cases.push_back({std::string(MEMPLAN_SOURCE_DIR "/samples/") + m + ".onnx", 2});
  onnx_io::LoadOptions load;
  load.overrides.dims = {{"N", 1}, {"batch", 1}, {"seq", 32}};
  load.overrides.allow_unmatched_dims = true;
  for (const Case& c : cases) {
    INFO(c.path << " with " << c.streams << " streams per device");
    Model m = onnx_io::load_model(c.path, load);
    partition::PartitionRequest r;
    r.streams_per_device = c.streams;
    auto parts = partition::partition_model(m, r);
    const Graph& g = parts.placed.graph;
    PlanInput in{g, parts.placed.placement, parts.partition, parts.order, parts.ops, parts.opset};
    Plan plan = create_plan(in, {});
    LayoutOptions lo;
    lo.solve.time_budget_s = 5;  // stops at the bound; the slack is for a loaded machine (the ratio is checked below)
    Layout layout = compute_layout(g, plan, parts.partition, lo);
    if (g.nodes.size() <= 700) check_plan(g, parts.partition, plan, layout);  // the closure is quadratic
    for (size_t a = 0; a < layout.arenas.size(); ++a) {
      const Arena& arena = layout.arenas[a];
      // The layout checked by the independent checker, on the arena's own problem.
      arena::Problem p = arena_problem(g, plan, layout, static_cast<int>(a));
      std::vector<uint64_t> offsets;
      for (const arena::Buffer& b : p.buffers) offsets.push_back(layout.value_offset[std::stoi(b.id)]);
      CHECK(arena::check_solution(p, offsets, arena.bytes) == "");
      if (c.streams == 1) CHECK(static_cast<double>(arena.bytes) <= 1.02 * static_cast<double>(arena.lower_bound));
    }
  }
}

TEST_CASE("arena_problem rebuilds the problem the layout solved, with --pack-outputs and ORT's pattern too",
          "[planner][layout]") {
  onnx_io::LoadOptions load;
  load.overrides.dims = {{"N", 1}, {"batch", 1}, {"seq", 32}};
  load.overrides.allow_unmatched_dims = true;
  for (const char* m : {"residual", "branches", "free_dims"}) {
    Model model = onnx_io::load_model(std::string(MEMPLAN_SOURCE_DIR "/samples/") + m + ".onnx", load);
    auto parts = partition::partition_model(model, {});
    const Graph& g = parts.placed.graph;
    PlanInput in{g, parts.placed.placement, parts.partition, parts.order, parts.ops, parts.opset};
    Plan plan = create_plan(in, {});
    for (int variant = 0; variant < 3; ++variant) {
      LayoutOptions lo;
      lo.pack_outputs = variant == 1;
      lo.ort_memory_pattern = variant == 2;
      Layout layout = compute_layout(g, plan, parts.partition, lo);
      INFO(m << " variant " << variant);
      bool packed_an_output = false;
      for (size_t a = 0; a < layout.arenas.size(); ++a) {
        arena::Problem p = arena_problem(g, plan, layout, static_cast<int>(a));
        CHECK(p.buffers.size() == layout.arenas[a].buffers);
        std::vector<uint64_t> offsets;
        for (const arena::Buffer& b : p.buffers) {
          offsets.push_back(layout.value_offset[std::stoi(b.id)]);
          packed_an_output = packed_an_output ||
                             (layout.arenas[a].purpose == "activations" && g.values[std::stoi(b.id)].is_graph_output);
        }
        CHECK(arena::check_solution(p, offsets, layout.arenas[a].bytes) == "");
      }
      CHECK(packed_an_output == (variant == 1));
    }
  }
}
