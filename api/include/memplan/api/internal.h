// The pieces of the library API that the command line shares beyond the public header (memplan/memplan.h):
// settings turned into requests, and the JSON reports of `inspect`. Not installed.
#pragma once

#include <string>

#include "memplan/graph.h"
#include "memplan/memplan.h"
#include "memplan/onnx_io/load.h"
#include "memplan/plan_doc/insight.h"
#include "memplan/plan_doc/plan_doc.h"
#include "memplan/planner/pipeline.h"

namespace memplan::api {

// The checked options of a plan; throws Error(kUsage) naming the setting (as the command line's option) that is
// wrong. The layout's progress display is off (the command line turns it on).
planner::PlanRequest plan_request(const PlanSettings& settings);
partition::PartitionRequest partition_request(const PlanSettings& settings);
onnx_io::LoadOptions load_options(const ShapeSettings& shapes);

// Why a plan is incomplete: how many values have no known size and why, grouped by cause, with the --dim options
// that would fix free dims; and the values inside If/Loop/Scan bodies.
std::string incomplete_plan_reasons(const planner::PlannedModel& planned);

// `inspect --json` of a model: format memplan.inspect (`values`: every value listed too).
std::string inspect_model_json(const Model& model, OrderKind order, bool values);

// check_plan_file on a plan already read (the command line keeps the plan it reads).
Validation check_plan_doc(const plan_doc::PlanDoc& doc, const ValidateSettings& settings);

// `inspect --json` of a plan: format memplan.inspect-plan (`path` as given).
std::string inspect_plan_json(const std::string& path, const plan_doc::PlanDoc& plan,
                              const plan_doc::PlanInsight& insight, size_t top);

}  // namespace memplan::api
