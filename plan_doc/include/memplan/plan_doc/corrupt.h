// Deliberate corruptions of a valid plan, for testing that `validate` and `replay` catch each kind of
// mistake a planner could make. Works on the plan's JSON so corrupted plans can be written as files
// (`memplan corrupt`).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace memplan::plan_doc {

enum class Corruption {
  kOffsetOntoLiveNeighbour,  // a value's offset moved onto a value live at the same time
  kDropWaitOnEP,             // a WaitOnEP step removed
  kDropBarrier,              // a Barrier step removed
  kReleaseEarlier,           // a release action moved to the previous node of its stream
  kShrinkArena,              // an arena made one alignment unit smaller
  kMisalignOffset,           // an offset moved off its alignment
  kChangeKind,               // a value's kind changed (Allocate <-> PreExisting, ...)
  kShrinkWorkspace,          // the memory a node holds for its If/Loop/Scan bodies made one alignment unit smaller
};

const std::vector<Corruption>& all_corruptions();
const char* corruption_name(
    Corruption c);  // "offset", "wait", "barrier", "release", "shrink", "misalign", "kind", "workspace"
bool parse_corruption(const std::string& name, Corruption& out);

// Applies one corruption chosen by `seed` among the places it applies to. Returns false (plan unchanged)
// when the plan has no such place (e.g. no WaitOnEP in a CPU plan). `what` describes the change.
// With `body` >= 0 the corruption goes into that If/Loop/Scan body's plan (bodies numbered depth first, as
// count_bodies counts them), which has the same form as the top-level one.
bool corrupt_plan(nlohmann::ordered_json& plan, Corruption kind, uint64_t seed, std::string& what, int body = -1);
int count_bodies(const nlohmann::ordered_json& plan);

}  // namespace memplan::plan_doc
