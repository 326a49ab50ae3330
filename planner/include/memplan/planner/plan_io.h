// The plan's forms: versioned JSON (format "memplan.plan", documented in docs/plan-format.md) and a
// text form laid out like ONNX Runtime's plan printout.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "memplan/device_totals.h"
#include "memplan/file_io.h"
#include "memplan/graph.h"
#include "memplan/planner/offload_record.h"
#include "memplan/planner/plan.h"

namespace memplan::planner {

inline constexpr int kPlanFormatVersion = 1;
// A plan with offload (copy streams, staging values, the "offload" section) is version 2; readers take both.
inline constexpr int kPlanFormatVersionOffload = 2;

struct Layout;        // planner/layout.h
struct SubgraphPlan;  // planner/subgraphs.h

// ORT's estimate while it is still being made (pipeline.h): ready() says whether wait() would return at once;
// wait() waits for it and returns it (nullptr: there is none).
struct PendingOrtRules {
  std::function<bool()> ready;
  std::function<const std::vector<DeviceTotal>*()> wait;
  explicit operator bool() const { return static_cast<bool>(wait); }
};

// Everything the writers need besides the plan.
struct PlanContext {
  const Graph& graph;
  const Plan& plan;
  std::string model_path;
  std::string model_sha256;
  std::map<std::string, std::string> options;            // as given on the command line, for the record
  const Layout* layout = nullptr;                        // arenas, offsets and workspaces, once computed
  const std::vector<SubgraphPlan>* subgraphs = nullptr;  // bodies of If/Loop/Scan, when planned
  const std::vector<DeviceTotal>* totals = nullptr;      // per device, when the layout is computed
  const std::vector<DeviceTotal>* ort_rules = nullptr;   // the same under ORT's rules (pipeline.h)
  // Where ort_rules is not known yet: waited for where the JSON writer reaches it (see write_plan_json).
  PendingOrtRules ort_rules_pending = {};
  const OffloadRecord* offload = nullptr;  // what offload planning moved, when it did
};

std::string plan_to_json(const PlanContext& ctx);
// The same text handed to `out` in pieces, in order, as it is produced, so that a large plan is written to its
// file while it is being made and never held whole. On a large graph two threads make it, in parts of a few MB
// (runs of nodes and of values) of which a few at most wait in memory for the ones before them (ordered_parts.h);
// `out` is never called by both at once. An exception from `out` stops both.
// With `spill`: where ORT's estimate is still being made when the text reaches it, the text after it (the rest of
// the plan, values and all) is made meanwhile and set aside in `spill`, then handed to `out` behind the estimate once
// it is ready; without, or where `spill` could not be made, the text waits for the estimate there.
void write_plan_json(const PlanContext& ctx, const std::function<void(std::string_view)>& out,
                     SpillFile* spill = nullptr);
// ORT's layout: "Allocation Plan:", one line per value, "Execution Plan:", "Start logic stream: ...".
std::string plan_to_text(const PlanContext& ctx);

// Hex SHA-256 of a file's bytes (OpenSSL).
std::string sha256_hex(const std::string& bytes);
// The same of a file, read in pieces (a model with inline weights is not held in memory to hash it).
std::string sha256_file_hex(const std::string& path);

}  // namespace memplan::planner
