// `memplan validate`: a static verifier of a plan file, independent of the planner's bookkeeping. It
// builds the happens-before order of all steps (stream order, TriggerDownstream -> Barrier,
// ActivateNotification -> WaitOnEP) as vector clocks, and checks definitions, memory overlaps, releases,
// offsets, arenas and kinds against it.
#pragma once

#include <string>
#include <vector>

#include "memplan/plan_doc/plan_doc.h"

namespace memplan::validate {

struct Violation {
  std::string check;    // structure, unsized, deadlock, use-before-definition, overlap, release, alignment, arena, kind
  std::string message;  // names the value, node, stream and step involved
};

struct Report {
  std::vector<Violation> violations;
  size_t values_checked = 0;
  size_t uses_checked = 0;
  size_t regions_checked = 0;  // in-place chains placed in arenas, each checked against those sharing its bytes
  double seconds = 0;
  bool ok() const { return violations.empty(); }
};

Report validate_plan(const plan_doc::PlanDoc& plan);

}  // namespace memplan::validate
