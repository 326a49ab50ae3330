// The replay harness on its CPU twin: every plan replays clean (with jitter), and corrupted plans are
// caught; prints the detection rate per kind of corruption.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include "device.h"  // replay/src: the CPU twin's device, for its count of queued turns
#include "memplan/error.h"
#include "memplan/plan_doc/corrupt.h"
#include "memplan/plan_doc/plan_doc.h"
#include "memplan/replay/replay.h"
#include "memplan/validate/validate.h"
#include "model_builder.h"
#include "plan_fixtures.h"

using namespace memplan;
using namespace memplan::testing;

TEST_CASE("every plan replays clean on CPU threads, with jitter over several seeds", "[replay]") {
  for (const PlanCase& c : standard_plan_cases()) {
    INFO(c.label);
    replay::ReplayOptions o;
    o.jitter = true;
    o.iterations = 3;
    o.seed = 11;
    o.sample = c.label.find("bert") != std::string::npos;  // keep the big one quick
    auto report = replay::replay(plan_doc::read_plan_doc(c.json, c.label), o);
    for (const auto& e : report.errors) UNSCOPED_INFO(e);
    CHECK(report.ok());
    CHECK(report.bytes_verified > 0);
    CHECK(report.iterations == 3);
  }
}

// A graph input that a view (a Reshape, a Squeeze, ...) reads as it is: the view is the caller's memory, not a buffer
// of its own. 123 of the backend test models' plans replayed dirty before the replay gave such views their root's
// region ("never written"). Plans of every node test whose plan has a view of a value outside the arenas.
TEST_CASE("plans with views of the caller's inputs replay clean (ONNX's node tests)", "[replay][sweep]") {
  namespace fs = std::filesystem;
  std::vector<std::string> models;
  for (const auto& entry : fs::directory_iterator(MEMPLAN_TESTDATA_DIR "/node"))
    if (fs::exists(entry.path() / "model.onnx")) models.push_back((entry.path() / "model.onnx").string());
  std::sort(models.begin(), models.end());
  size_t replayed = 0;
  for (const auto& path : models) {
    std::string json;
    try {
      json = make_plan_json(path, partition::PartitionRequest{});
    } catch (const Error&) {
      continue;  // (models memplan rejects or cannot size: the sweep tests cover them)
    }
    const plan_doc::PlanDoc doc = plan_doc::read_plan_doc(json, path);
    const bool view_of_outside = std::any_of(doc.values.begin(), doc.values.end(), [&](const plan_doc::ValueDoc& v) {
      return v.alias && v.inplace_of >= 0 && v.arena < 0 && v.bytes && *v.bytes > 0;
    });
    if (!view_of_outside) continue;
    INFO(path);
    replay::ReplayOptions o;
    auto report = replay::replay(doc, o);
    for (const auto& e : report.errors) UNSCOPED_INFO(e);
    CHECK(report.ok());
    ++replayed;
  }
  std::cout << "node-test plans with views of the caller's memory replayed: " << replayed << "\n";
  CHECK(replayed >= 100);
}

// RAFT's recurrent block reads each weight once per iteration; offloaded, each read gets its own staging value, and
// ORT's freelist chains them onto two root buffers while the layout puts them at other offsets. Releasing a root once
// poisoned every member's region, among them an early member's region that a later staging value of the other root
// held by then ("released before this read"). A release frees its last user's region.
TEST_CASE("an offloaded plan whose staging values leave their roots' offsets replays clean", "[replay][offload]") {
  partition::PartitionRequest gpu;
  gpu.device = partition::Device{partition::DeviceType::kGpu, 0};
  const std::string json = make_plan_json(MEMPLAN_SOURCE_DIR "/zoo/optical_flow/raft_small.onnx", gpu, 0.6);
  const plan_doc::PlanDoc doc = plan_doc::read_plan_doc(json, "raft_small gpu offload");
  // The shape of plan this needs: a staging value away from its root's offset.
  const bool away = std::any_of(doc.values.begin(), doc.values.end(), [&](const plan_doc::ValueDoc& v) {
    const auto& root = doc.values[static_cast<size_t>(v.reused_buffer)];
    return v.staging_of >= 0 && v.arena >= 0 && root.arena == v.arena && root.offset != v.offset;
  });
  REQUIRE(away);
  replay::ReplayOptions o;
  o.jitter = true;
  o.iterations = 3;
  auto report = replay::replay(doc, o);
  for (const auto& e : report.errors) UNSCOPED_INFO(e);
  CHECK(report.ok());
  CHECK(validate::validate_plan(doc).ok());
}

TEST_CASE("replay catches corrupted plans", "[replay][mutation]") {
  // Every corruption a run can show must be caught: misplaced memory deterministically; a dropped sync
  // or an early release when its race materialises, which the slow-stream runs of --jitter arrange (each
  // stream in turn lags while the others run ahead). A dropped wait that ordered only views cannot show.
  std::map<std::string, std::pair<int, int>> rate;
  int views_only = 0;
  for (const PlanCase& c : standard_plan_cases()) {
    // The big models take long under jitter; the samples and three shared models cover every kind.
    if (c.label.find("bert") != std::string::npos || c.label.find("inception") != std::string::npos ||
        c.label.find("resnet50") != std::string::npos)
      continue;
    for (auto kind : plan_doc::all_corruptions())
      for (uint64_t seed = 0; seed < 3; ++seed) {
        auto j = nlohmann::ordered_json::parse(c.json);
        std::string what;
        if (!plan_doc::corrupt_plan(j, kind, seed, what)) continue;
        replay::ReplayOptions o;
        o.jitter = true;
        o.iterations = 4;
        o.seed = 100 + seed;
        if (what.find("ordered only views") != std::string::npos ||
            what.find("the copy frees host memory") != std::string::npos) {
          // No bytes move, so the replay must find nothing; if it did, the views-only label was wrong.
          ++views_only;
          INFO(c.label << ": " << what);
          CHECK(replay::replay(plan_doc::read_plan_doc(j.dump(), c.label), o).ok());
          continue;
        }
        o.timeout_s = 10;
        auto report = replay::replay(plan_doc::read_plan_doc(j.dump(), c.label), o);
        auto& r = rate[plan_doc::corruption_name(kind)];
        ++r.second;
        if (!report.ok())
          ++r.first;
        else
          std::cout << "not caught in " << c.label << ": " << what << "\n";
      }
  }
  std::cout << "replay mutation detection (CPU threads, jitter, 4 iterations):";
  for (const auto& [kind, r] : rate) std::cout << " " << kind << " " << r.first << "/" << r.second;
  std::cout << " (and " << views_only
            << " dropped waits no replay can show, views only or a copy freeing host memory, left to validate)\n";
  REQUIRE(rate.size() == plan_doc::all_corruptions().size());
  for (const auto& [kind, r] : rate) {
    INFO(kind);
    CHECK(r.second > 0);
    CHECK(r.first == r.second);
  }
  // The standard plans no longer wait on views across streams (alias-only nodes stay with their producer);
  // views_only_wait_is_labelled below exercises the label.
  (void)views_only;
}

TEST_CASE("a dropped wait that ordered only views is labelled, and the replay indeed finds nothing",
          "[replay][mutation]") {
  // As an ORT config may do: the weight's Identity on its own stream, so the MatMul waits for a view.
  auto model = testing::make_model(
      {testing::make_node("Identity", {"w"}, {"wi"}, "idw"), testing::make_node("Relu", {"x"}, {"r"}, "relu"),
       testing::make_node("MatMul", {"r", "wi"}, {"y"}, "mm")},
      {testing::tensor_info("x", 1, {"4", "4"})}, {testing::tensor_info("y", 1, {"4", "4"})});
  *model.mutable_graph()->add_initializer() = testing::header_only_initializer("w", {4, 4});
  std::string path = testing::write_temp_model("views_only_wait.onnx", model);
  std::string config =
      testing::write_temp("views_only_wait.json",
                          R"({"type":"DeviceBasedPartitioner","devices":["1","1"],"streams":[["relu","mm"],["idw"]]})");
  partition::PartitionRequest r;
  r.device = partition::Device{partition::DeviceType::kGpu, 0};
  r.config_file = config;
  auto j = nlohmann::ordered_json::parse(testing::make_plan_json(path, r));
  std::string what;
  REQUIRE(plan_doc::corrupt_plan(j, plan_doc::Corruption::kDropWaitOnEP, 0, what));
  CHECK_THAT(what, Catch::Contains("ordered only views"));
  replay::ReplayOptions o;
  o.jitter = true;
  o.iterations = 4;
  CHECK(replay::replay(plan_doc::read_plan_doc(j.dump(), "views_only_wait"), o).ok());
  // validate still sees the missing order.
  CHECK_FALSE(validate::validate_plan(plan_doc::read_plan_doc(j.dump(), "views_only_wait")).ok());
}

TEST_CASE("the CPU twin counts a stream's turns queued until each has run (what bounds a lagging host's lead)",
          "[replay]") {
  // The executor's lagging host waits while 16 turns are queued (wait_for_turns); it relies on this count, which
  // the CUDA back-end keeps with its gates.
  auto device = replay::make_cpu_device();
  const int stream = device->create_stream();
  std::atomic<bool> go{false};
  std::atomic<int> turns_run{0};
  replay::KernelTask turn;
  turn.before = [&] {
    while (!go) std::this_thread::sleep_for(std::chrono::microseconds(50));
    ++turns_run;
  };
  for (int k = 0; k < 5; ++k) device->launch(stream, turn);
  device->launch(stream, replay::KernelTask{});  // a task without a turn does not count
  CHECK(device->turns_queued(stream) == 5);      // the first is inside its turn: not past it yet
  go = true;
  device->synchronize();
  CHECK(turns_run == 5);
  CHECK(device->turns_queued(stream) == 0);
}
