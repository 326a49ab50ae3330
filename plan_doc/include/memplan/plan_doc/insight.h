// Where a plan's memory goes: per-arena summaries, the peak step and what is live there, and a memory
// timeline picture (SVG, and a standalone HTML page with a sortable value table).
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
  uint64_t no_reuse_bytes = 0;    // every value its own buffer (aligned)
  uint64_t same_shape_bytes = 0;  // one buffer per distinct root (ORT's same-shape reuse alone)
};

struct PlanInsight {
  std::vector<ArenaInsight> arenas;
  std::vector<int> largest;  // values by bytes, largest first
  uint64_t input_bytes = 0;  // PreExisting graph inputs
};

PlanInsight analyse(const PlanDoc& plan);

// The memory timeline: x = program counter, y = offset, a rectangle per value, one panel per arena.
std::string render_svg(const PlanDoc& plan, const PlanInsight& insight);
std::string render_html(const PlanDoc& plan, const PlanInsight& insight);

}  // namespace memplan::plan_doc
