// memplan's benchmarks: printed figures, not timed tests. Run: build/bench/memplan-bench [section...]
// Sections: planning (planner time on generated graphs), minimalloc, idealloc, models. Default: all.
// Floors for scripts/bench-scale: `memplan-bench floor MODEL` (reading and parsing the file plus ONNX shape
// inference, nothing of memplan's); bench/read_plan.cc is the other floor, reading a plan file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "memplan/arena/csv.h"
#include "memplan/execution_order.h"
#include "memplan/file_io.h"
#include "memplan/offload/device_layout.h"
#include "memplan/onnx_io/load.h"
#include "memplan/partition/pipeline.h"
#include "memplan/plan_doc/plan_doc.h"
#include "memplan/planner/layout.h"
#include "memplan/planner/pipeline.h"

using namespace memplan;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A generated graph: `width` parallel chains of Relu/Add nodes, joined every 16 layers, each value
// float[256]. With streams = width each chain is its own stream.
Graph generated_graph(size_t nodes, int width) {
  Graph g;
  auto value = [&](const std::string& name) {
    Value v;
    v.index = static_cast<ValueId>(g.values.size());
    v.name = name;
    v.type_kind = TypeKind::kTensor;
    v.dtype = 1;
    v.has_shape = true;
    v.dims = {Dim{256, {}}};
    v.bytes = 1024;
    g.values.push_back(v);
    return v.index;
  };
  ValueId input = value("input");
  g.values[input].is_graph_input = true;
  g.inputs.push_back(input);
  std::vector<ValueId> tips(width, input);
  for (size_t i = 0; i < nodes; ++i) {
    int chain = static_cast<int>(i % width);
    Node n;
    n.index = static_cast<NodeId>(g.nodes.size());
    n.name = "n" + std::to_string(i);
    bool join = (i / width) % 16 == 15 && width > 1;
    n.op_type = join ? "Add" : "Relu";
    n.inputs = {tips[chain]};
    if (join) n.inputs.push_back(tips[(chain + 1) % width]);
    ValueId out = value("v" + std::to_string(i));
    n.outputs = {out};
    tips[chain] = out;
    g.nodes.push_back(n);
  }
  for (ValueId t : tips) {
    g.values[t].is_graph_output = true;
    g.outputs.push_back(t);
  }
  link_values(g);
  return g;
}

void bench_planning() {
  std::printf("\n## Planning time on generated graphs (one core)\n\n");
  std::printf(
      "| nodes | streams | order (s) | create_plan (s) | layout (s) | plan time per node (us) "
      "|\n|---|---|---|---|---|---|\n");
  auto ops = partition::OpTable::builtin();
  for (int streams : {1, 4}) {
    double previous = 0;
    for (size_t nodes : {10'000u, 100'000u, 1'000'000u}) {
      Graph g = generated_graph(nodes, 4);
      auto t0 = Clock::now();
      auto order = default_order(g);
      double t_order = seconds_since(t0);
      partition::Placement placement{std::vector<partition::Device>(g.nodes.size()),
                                     std::vector<std::string>(g.nodes.size())};
      partition::Partition part;
      part.stream_device.assign(streams, partition::Device{});
      part.node_stream.assign(g.nodes.size(), 0);
      for (NodeId n : order) part.node_stream[n] = streams == 1 ? 0 : static_cast<int>(n % streams);
      part.streams.assign(streams, {});
      for (NodeId n : order) part.streams[part.node_stream[n]].push_back(n);
      planner::PlanInput in{g, placement, part, order, ops, 14};
      auto t1 = Clock::now();
      planner::Plan plan = planner::create_plan(in, {});
      double t_plan = seconds_since(t1);
      auto t2 = Clock::now();
      planner::LayoutOptions lo;
      lo.solve.algorithm = arena::Algorithm::kBestFit;
      // Multi-stream layouts check every pair of buffers for ordering; keep them to the smaller graphs.
      double t_layout = -1;
      if (streams == 1 || nodes <= 10'000) {
        planner::compute_layout(g, plan, part, lo);
        t_layout = seconds_since(t2);
      }
      std::printf("| %zu | %d | %.3f | %.3f | %s | %.2f |\n", nodes, streams, t_order, t_plan,
                  t_layout < 0 ? "-" : std::to_string(t_layout).substr(0, 5).c_str(),
                  1e6 * t_plan / static_cast<double>(nodes));
      if (previous > 0) std::printf("|   | ratio for 10x nodes: %.1fx |  |  |  |  |\n", t_plan / previous);
      previous = t_plan;
    }
  }
}

void bench_minimalloc(double budget) {
  std::printf("\n## MiniMalloc's challenging problems (auto: best heuristic, then exact within %.0f s)\n\n", budget);
  std::printf(
      "| problem | buffers | lower bound | best known | best-fit | greedy-size | memplan auto | time (s) | optimal "
      "|\n|---|---|---|---|---|---|---|---|---|\n");
  const char* names = "ABCDEFGHIJK";
  const unsigned long long known[] = {1048576, 1048576, 1039360, 1031168, 1048576, 1048576,
                                      1048576, 1048576, 1048576, 1041408, 1048576};
  for (int i = 0; i < 11; ++i) {
    std::string path = std::string(MEMPLAN_SHARED_DIR "/anchors/minimalloc/challenging/") + names[i] + ".1048576.csv";
    auto p = arena::read_minimalloc_csv(read_file(path), path);
    auto bf = arena::solve(p, {arena::Algorithm::kBestFit, 0, false});
    auto gs = arena::solve(p, {arena::Algorithm::kGreedySize, 0, false});
    auto best = arena::solve(p, {arena::Algorithm::kAuto, budget, false});
    std::printf("| %c | %zu | %llu | %llu | %llu | %llu | %llu | %.2f | %s |\n", names[i], p.buffers.size(),
                static_cast<unsigned long long>(best.lower_bound), known[i], static_cast<unsigned long long>(bf.peak),
                static_cast<unsigned long long>(gs.peak), static_cast<unsigned long long>(best.peak), best.seconds,
                best.optimal ? "yes" : "no");
    std::fflush(stdout);
  }
}

void bench_idealloc(double budget) {
  std::printf("\n## Real-model traces (idealloc): peak against the lower bound\n\n");
  std::printf(
      "| trace | buffers | lower bound | best-fit | greedy-size | memplan auto | ratio | time (s) "
      "|\n|---|---|---|---|---|---|---|---|\n");
  for (const char* name :
       {"somas_tensors__resnet50", "iopddl__G_1", "somas_tensors__pangu_2.6B", "iopddl__S_1", "iopddl__Y_1"}) {
    std::string path = std::string(MEMPLAN_SHARED_DIR "/anchors/idealloc/") + name + ".csv";
    auto p = arena::read_minimalloc_csv(read_file(path), path);
    auto bf = arena::solve(p, {arena::Algorithm::kBestFit, 0, false});
    auto gs = arena::solve(p, {arena::Algorithm::kGreedySize, 0, false});
    auto best = arena::solve(p, {arena::Algorithm::kAuto, budget, false});
    std::printf("| %s | %zu | %llu | %llu | %llu | %llu | %.4f | %.2f |\n", name, p.buffers.size(),
                static_cast<unsigned long long>(best.lower_bound), static_cast<unsigned long long>(bf.peak),
                static_cast<unsigned long long>(gs.peak), static_cast<unsigned long long>(best.peak),
                static_cast<double>(best.peak) / static_cast<double>(best.lower_bound), best.seconds);
    std::fflush(stdout);
  }
}

void bench_models() {
  std::printf("\n## Shared models and samples: activation arena / lower bound (CPU, dims N=1, batch=1, seq=128)\n\n");
  std::printf(
      "| model | lower bound | best-fit | greedy-size | auto | auto / bound | ORT's reuse, buffers side by side | no "
      "reuse |\n|---|---|---|---|---|---|---|---|\n");
  onnx_io::LoadOptions load;
  load.overrides.dims = {{"N", 1}, {"batch", 1}, {"seq", 128}};
  std::vector<std::string> paths;
  for (const char* m : {"resnet50", "mobilenet_v2", "densenet121", "inception_v3", "squeezenet1_1", "efficientnet_b0",
                        "vit_b_16", "bert_like", "gpt_like", "lstm2"})
    paths.push_back(std::string(MEMPLAN_SHARED_DIR "/models/") + m + ".onnx");
  for (const char* m : {"residual", "branches", "control_flow", "free_dims", "ort_observed"})
    paths.push_back(std::string(MEMPLAN_SOURCE_DIR "/samples/") + m + ".onnx");
  load.overrides.allow_unmatched_dims = true;  // one set of dims for every model
  for (const auto& path : paths) {
    Model m = onnx_io::load_model(path, load);
    // The pipeline `memplan plan` runs, with the reuse rules and the layout algorithm varied.
    auto activations = [&](planner::ReuseMode mode, arena::Algorithm a, planner::Arena* out) {
      planner::PlanRequest request;
      request.plan.reuse = mode;
      request.layout.solve.algorithm = a;
      request.ort_rules_estimate = false;
      auto planned = planner::plan_model(m, request);
      for (const auto& arena : planned.layout.arenas)
        if (arena.purpose == "activations") {
          if (out) *out = arena;
          return arena.bytes;
        }
      return uint64_t{0};
    };
    planner::Arena auto_arena, ort_arena;
    uint64_t bf = activations(planner::ReuseMode::kMemplan, arena::Algorithm::kBestFit, nullptr);
    uint64_t gs = activations(planner::ReuseMode::kMemplan, arena::Algorithm::kGreedySize, nullptr);
    uint64_t au = activations(planner::ReuseMode::kMemplan, arena::Algorithm::kAuto, &auto_arena);
    activations(planner::ReuseMode::kOrt, arena::Algorithm::kBestFit, &ort_arena);
    planner::Arena none_arena;
    activations(planner::ReuseMode::kNone, arena::Algorithm::kBestFit, &none_arena);
    std::string name = path.substr(path.rfind('/') + 1);
    std::printf("| %s | %llu | %llu | %llu | %llu | %.3f | %llu | %llu |\n", name.c_str(),
                static_cast<unsigned long long>(auto_arena.lower_bound), static_cast<unsigned long long>(bf),
                static_cast<unsigned long long>(gs), static_cast<unsigned long long>(au),
                auto_arena.lower_bound ? static_cast<double>(au) / static_cast<double>(auto_arena.lower_bound) : 1.0,
                static_cast<unsigned long long>(ort_arena.distinct_buffer_bytes),
                static_cast<unsigned long long>(none_arena.distinct_buffer_bytes));
    std::fflush(stdout);
  }
}

// Offload planning (offload/, not yet in the CLI): per shared model on a GPU, the device's one arena without
// offload, the smallest budget at which an arena with offload fits, and at 75%, 50% and 25% of the arena without
// offload the bytes moved per inference and the estimated slowdown (transfers at 25 GB/s beside the cost model's
// compute); then the weights alone kept at 25% of their size, activations untouched.
void bench_offload() {
  std::printf(
      "\n## Offload: the GPU's arena, the smallest budget that fits, and the cost at 75/50/25%% (dims N=1, "
      "batch=1, seq=128)\n\n");
  std::printf(
      "| model | plan's GPU arenas | one arena | weights | smallest budget | 75%%: moved, slowdown | 50%% | 25%% | "
      "weights at 25%%: moved, slowdown | seconds |\n|---|---|---|---|---|---|---|---|---|---|\n");
  onnx_io::LoadOptions load;
  load.overrides.dims = {{"N", 1}, {"batch", 1}, {"seq", 128}};
  load.overrides.allow_unmatched_dims = true;
  auto mb = [](uint64_t b) { return static_cast<double>(b) / 1e6; };
  arena::SolveOptions solve;
  solve.time_budget_s = 0.05;
  const uint64_t alignment = 256;
  auto cell = [&](const offload::Fit& f) {
    char text[96];
    if (f.fits)
      std::snprintf(text, sizeof text, "%.1f MB, +%.1f%%", mb(f.choice.bytes_moved),
                    100 * (f.choice.estimated_us / f.choice.compute_us - 1));
    else
      std::snprintf(text, sizeof text, "does not fit");
    return std::string(text);
  };
  for (const char* name : {"resnet50", "mobilenet_v2", "densenet121", "inception_v3", "efficientnet_b0", "vit_b_16",
                           "bert_like", "gpt_like", "lstm2"}) {
    const std::string path = std::string(MEMPLAN_SHARED_DIR "/models/") + name + ".onnx";
    Model m = onnx_io::load_model(path, load);
    planner::PlanRequest request;
    request.partition.device = {partition::DeviceType::kGpu, 0};
    request.ort_rules_estimate = false;
    const auto planned = planner::plan_model(m, request);
    uint64_t planned_arenas = 0;
    for (const auto& a : planned.layout.arenas)
      if (a.location == request.partition.device) planned_arenas += a.bytes;
    const auto start = Clock::now();
    offload::PlanProblem pp = offload::offload_problem(planned, request.partition.device);
    pp.problem.budget = std::numeric_limits<uint64_t>::max();
    const uint64_t arena =
        offload::lay_out_device(pp.problem, offload::choose_offload(pp.problem), alignment, solve).solution.peak;
    const uint64_t smallest = offload::smallest_fitting_arena(pp.problem, alignment, solve, 1 << 18);
    std::string cells;
    for (double fraction : {0.75, 0.5, 0.25}) {
      pp.problem.budget = static_cast<uint64_t>(static_cast<double>(arena) * fraction);
      cells += " " + cell(offload::fit_device(pp.problem, alignment, solve)) + " |";
    }
    pp.problem.scope = offload::Scope::kWeights;
    pp.problem.budget = arena - pp.weight_bytes + pp.weight_bytes / 4;
    const std::string weights = cell(offload::fit_device(pp.problem, alignment, solve));
    std::printf("| %s | %.1f MB | %.1f MB | %.1f MB | %.1f MB (%.0f%%) |%s %s | %.2f |\n", name, mb(planned_arenas),
                mb(arena), mb(pp.weight_bytes), mb(smallest),
                100.0 * static_cast<double>(smallest) / static_cast<double>(arena), cells.c_str(), weights.c_str(),
                seconds_since(start));
    std::fflush(stdout);
  }
}

}  // namespace

// What any tool that plans a model must do first: read the file, parse it, run ONNX's shape inference.
int floor_seconds(const std::string& path) {
  auto start = Clock::now();
  onnx_io::parse_and_infer_only(path);
  std::printf("%.3f\n", seconds_since(start));
  return 0;
}

int main(int argc, char** argv) {
  std::vector<std::string> sections(argv + 1, argv + argc);
  if (sections.size() == 2 && sections[0] == "floor") return floor_seconds(sections[1]);
  auto want = [&](const char* s) {
    return sections.empty() || std::find(sections.begin(), sections.end(), s) != sections.end();
  };
  double budget = 10;
  if (const char* b = std::getenv("MEMPLAN_BENCH_BUDGET")) budget = std::atof(b);
  std::printf("# memplan benchmarks\n");
  if (want("planning")) bench_planning();
  if (want("models")) bench_models();
  if (want("minimalloc")) bench_minimalloc(budget);
  if (want("idealloc")) bench_idealloc(budget);
  if (want("offload")) bench_offload();
  return 0;
}
