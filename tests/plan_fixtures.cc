#include "plan_fixtures.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "memplan/file_io.h"
#include "memplan/offload/offload_model.h"
#include "memplan/onnx_io/load.h"
#include "memplan/plan_doc/corrupt.h"
#include "memplan/plan_doc/plan_doc.h"
#include "memplan/planner/layout.h"
#include "memplan/planner/pipeline.h"
#include "memplan/planner/plan_io.h"
#include "model_builder.h"

namespace memplan::testing {

std::string make_plan_json(const std::string& model_path, const partition::PartitionRequest& request,
                           double offload_fraction) {
  onnx_io::LoadOptions load;
  load.overrides.dims = {{"N", 1}, {"batch", 1}, {"seq", 16}};
  load.overrides.allow_unmatched_dims = true;  // one set of defaults for every model
  Model m = onnx_io::load_model(model_path, load);
  // The same pipeline as `memplan plan`.
  planner::PlanRequest r;
  r.partition = request;
  r.layout.solve.time_budget_s = 0.2;
  planner::PlannedModel planned;
  if (offload_fraction > 0) {
    // --offload with --max-arena at this fraction of the device's total without offload.
    const planner::PlannedModel whole = planner::plan_model(m, r);
    offload::OffloadOptions o;
    o.device = request.device;
    for (const DeviceTotal& t : whole.totals)
      if (t.device == partition::device_name(request.device))
        o.budget = static_cast<uint64_t>(static_cast<double>(t.total()) * offload_fraction);
    offload::OffloadOutcome out = offload::offload_model(m, r, o);
    REQUIRE(out.fits);
    REQUIRE(out.planned.offload);
    planned = std::move(out.planned);
  } else {
    planned = planner::plan_model(m, r);
  }
  const auto& layout = planned.layout;
  planner::PlanContext ctx{
      planned.graph(), planned.plan,      model_path, planner::sha256_hex(read_file(model_path)), {},
      &layout,         &planned.subgraphs};
  ctx.totals = &planned.totals;
  if (planned.ort_rules) ctx.ort_rules = &*planned.ort_rules;
  if (planned.offload) ctx.offload = &*planned.offload;
  return planner::plan_to_json(ctx);
}

static std::vector<PlanCase> make_standard_plan_cases() {
  std::vector<std::string> models;
  for (const char* s : {"residual", "branches", "control_flow", "free_dims", "ort_observed"})
    models.push_back(std::string(MEMPLAN_SOURCE_DIR "/samples/") + s + ".onnx");
  for (const char* m : {"squeezenet1_1", "resnet50", "inception_v3", "bert_like", "lstm2"})
    models.push_back(std::string(MEMPLAN_SHARED_DIR "/models/") + m + ".onnx");
  std::vector<PlanCase> cases;
  for (const auto& path : models)
    for (auto [gpu, streams] : {std::pair{false, 1}, {false, 2}, {true, 1}, {true, 3}}) {
      partition::PartitionRequest r;
      if (gpu) r.device = partition::Device{partition::DeviceType::kGpu, 0};
      r.streams_per_device = streams;
      std::string name = path.substr(path.rfind('/') + 1);
      cases.push_back(
          {name + (gpu ? " gpu x" : " cpu x") + std::to_string(streams), make_plan_json(path, r), gpu, streams});
    }
  // Offload (--offload): an activation sent out and back (long_skip), weights brought in (squeezenet1_1).
  partition::PartitionRequest gpu;
  gpu.device = partition::Device{partition::DeviceType::kGpu, 0};
  for (auto [path, fraction] : {std::pair<std::string, double>{MEMPLAN_SOURCE_DIR "/samples/long_skip.onnx", 0.93},
                                {MEMPLAN_SHARED_DIR "/models/squeezenet1_1.onnx", 0.6}}) {
    std::string name = path.substr(path.rfind('/') + 1);
    cases.push_back({name + " gpu offload", make_plan_json(path, gpu, fraction), true, 1});
  }
  return cases;
}

const std::vector<PlanCase>& standard_plan_cases() {
  static const std::vector<PlanCase> cases = make_standard_plan_cases();
  return cases;
}

size_t check_text_corruptions(const std::string& json, const std::string& label) {
  INFO(label);
  const plan_doc::PlanDoc doc = plan_doc::read_plan_doc(json, label);
  // Read in pieces of one node and one value each, as a large plan is: its sections say where each piece stands.
  const plan_doc::PlanDoc in_pieces = plan_doc::read_plan_file(write_temp("corruptions.json", json), 0, 1);
  const bool pieces = plan_doc::split_shape(json, 1).has_value();
  if (pieces)
    CHECK(std::any_of(in_pieces.sections.begin(), in_pieces.sections.end(),
                      [](const plan_doc::TextSection& x) { return x.key == "values" && !x.pieces.empty(); }));
  const bool newline = !json.empty() && json.back() == '\n';
  size_t compared = 0;
  for (int body = -1; body < plan_doc::count_bodies(doc); ++body)
    for (plan_doc::Corruption kind : plan_doc::all_corruptions())
      for (uint64_t seed = 0; seed < 3; ++seed) {
        const auto chosen = plan_doc::choose_corruption(doc, kind, seed, body);
        auto tree = nlohmann::ordered_json::parse(json);
        std::string what;
        REQUIRE(plan_doc::corrupt_plan(tree, kind, seed, what, body) == chosen.has_value());
        if (!chosen) continue;
        INFO(what);
        CHECK(what == chosen->what);
        const std::string expected = tree.dump(1) + (newline ? "\n" : "");
        CHECK(plan_doc::apply_edits(json, json.capacity(), chosen->edits, label) == expected);
        // Parsing only the sections edited, where the reader says the top-level keys stand (memplan corrupt).
        CHECK(plan_doc::apply_edits(json, json.capacity(), chosen->edits, label, &doc.sections) == expected);
        // ... and only the pieces of its lists edited.
        CHECK(plan_doc::apply_edits(json, json.capacity(), chosen->edits, label, &in_pieces.sections) == expected);
        ++compared;
      }
  return compared;
}

}  // namespace memplan::testing
