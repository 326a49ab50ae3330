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

// With `offload_fraction` > 0: planned with --offload for a budget of that fraction of the device's total.
std::string make_plan_json(const std::string& model_path, const partition::PartitionRequest& request,
                           double offload_fraction = 0);

// The samples and a selection of shared models, each with CPU x1, CPU x2, GPU x1 and GPU x3 streams; and two
// plans made with --offload (copy streams, staging values).
// Made once per test run (planning them all takes a few seconds).
const std::vector<PlanCase>& standard_plan_cases();

// For every corruption kind, seeds 0-2 and every body: the edits memplan corrupt makes to the plan's text give the
// text of the tree corrupt_plan edits, byte for byte (Catch checks). Returns how many were compared.
size_t check_text_corruptions(const std::string& json, const std::string& label);

}  // namespace memplan::testing
