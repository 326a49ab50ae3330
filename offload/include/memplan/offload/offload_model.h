// Offload planning for a model: plan it; when a device's total exceeds its budget, choose what lives in host memory
// (offload.h), rewrite the partitioned graph with the copies (MemcpyToHost after an activation's producer,
// MemcpyFromHost before each residency, on a copy stream per direction, ordered with the compute stream), plan that
// graph with the same pipeline, and repeat with a lower target while the layout still exceeds the budget.
#pragma once

#include <string>

#include "memplan/offload/from_plan.h"
#include "memplan/offload/offload.h"
#include "memplan/partition/streams.h"
#include "memplan/planner/pipeline.h"

namespace memplan::offload {

struct OffloadOptions {
  partition::Device device;
  uint64_t budget = 0;         // the device's total (--max-arena)
  Scope scope = Scope::kAll;   // --offload=weights
  double bytes_per_us = 25e3;  // --host-bandwidth (25 GB/s)
  partition::CostModel cost;
  int max_rounds = 12;
};

struct OffloadOutcome {
  planner::PlannedModel planned;   // with the copies when anything moved (planned.offload says what)
  bool fits = false;               // the device's total is within the budget
  uint64_t before = 0, after = 0;  // the device's total without and with offload
  int rounds = 0;                  // choices tried
  std::string why;                 // when it does not fit: why (naming the step and what is live there)
};

// Throws Error(kUsage) for a device with several streams (not modelled yet).
// `model` by value: the CLI moves its model in (a copy of a 144,000-node graph cost 0.04 s).
OffloadOutcome offload_model(Model model, const planner::PlanRequest& request, const OffloadOptions& options);

// The partitioned graph with the copies of `choice` (problem from offload_problem on `parts`' plan), and what was
// moved, in the rewritten graph's value and node ids. Exposed for tests.
partition::PartitionedModel with_copies(const partition::PartitionedModel& parts, const PlanProblem& problem,
                                        const Result& choice, const partition::Device& device,
                                        planner::OffloadRecord& record);

}  // namespace memplan::offload
