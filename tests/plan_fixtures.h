// Plans of the samples and shared models, made in-process, for the validate and replay tests.
#pragma once

#include <string>
#include <vector>

#include "memplan/partition/pipeline.h"

namespace memplan::testing {

struct PlanCase {
  std::string label;            // "resnet50 gpu x3"
  std::string json;             // the plan file's text
  bool device_streams = false;  // has a non-CPU stream
  int streams = 1;
};

std::string make_plan_json(const std::string& model_path, const partition::PartitionRequest& request);

// The samples and a selection of shared models, each with CPU x1, CPU x2, GPU x1 and GPU x3 streams.
// Made once per test run (planning them all takes a few seconds).
const std::vector<PlanCase>& standard_plan_cases();

}  // namespace memplan::testing
