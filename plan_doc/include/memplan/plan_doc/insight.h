// Where a plan's memory goes: per-arena summaries, the peak step and what is live there (pictures of it:
// picture.h).
#pragma once

#include <string>
#include <vector>

#include "memplan/plan_doc/plan_doc.h"

namespace memplan::plan_doc {

struct ArenaInsight {
  int arena = -1;
  uint64_t bytes = 0, lower_bound = 0;
  int peak_step = -1;  // program counter with the most bytes live
  uint64_t peak_live = 0;
  std::vector<int> live_at_peak;  // values live there, largest first
  // Nodes running there that hold memory for their If/Loop/Scan bodies: (node, bytes), largest first.
  std::vector<std::pair<int, uint64_t>> workspaces_at_peak;
  uint64_t no_reuse_bytes = 0;         // every value its own buffer (aligned)
  uint64_t distinct_buffer_bytes = 0;  // the plan's distinct root buffers side by side, no offset sharing
  // What is live at the peak, summed by the producing node's op type and by layer prefix (the first two
  // '/'-separated parts of the value's name, as torch and TF exports write them), largest first.
  std::vector<std::pair<std::string, uint64_t>> peak_by_op, peak_by_prefix;
};

struct PlanInsight {
  std::vector<ArenaInsight> arenas;
  std::vector<int> largest;  // values by bytes, largest first
  uint64_t input_bytes = 0;  // PreExisting graph inputs
};

PlanInsight analyse(const PlanDoc& plan);

// "/enc/layers.0" for "/enc/layers.0/linear1/MatMul_output_0"; "(top level)" for names without one.
std::string layer_prefix(const std::string& value_name);

}  // namespace memplan::plan_doc
