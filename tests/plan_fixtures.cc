#include "plan_fixtures.h"

#include "memplan/file_io.h"
#include "memplan/onnx_io/load.h"
#include "memplan/planner/layout.h"
#include "memplan/planner/pipeline.h"
#include "memplan/planner/plan_io.h"

namespace memplan::testing {

std::string make_plan_json(const std::string& model_path, const partition::PartitionRequest& request) {
  onnx_io::LoadOptions load;
  load.overrides.dims = {{"N", 1}, {"batch", 1}, {"seq", 16}};
  load.overrides.allow_unmatched_dims = true;  // one set of defaults for every model
  Model m = onnx_io::load_model(model_path, load);
  // The same pipeline as `memplan plan`.
  planner::PlanRequest r;
  r.partition = request;
  r.layout.solve.time_budget_s = 0.2;
  planner::PlannedModel planned = planner::plan_model(m, r);
  const auto& layout = planned.layout;
  planner::PlanContext ctx{
      planned.graph(), planned.plan,      model_path, planner::sha256_hex(read_file(model_path)), {},
      &layout,         &planned.subgraphs};
  ctx.totals = &planned.totals;
  if (planned.ort_rules) ctx.ort_rules = &*planned.ort_rules;
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
  return cases;
}

const std::vector<PlanCase>& standard_plan_cases() {
  static const std::vector<PlanCase> cases = make_standard_plan_cases();
  return cases;
}

}  // namespace memplan::testing
