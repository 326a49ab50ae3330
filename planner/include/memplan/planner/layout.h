// The arena layout: every buffer that owns memory gets an offset in its device's arena, found before the
// model runs, next to a lower bound that proves how close it is.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "memplan/arena/solve.h"
#include "memplan/partition/partition.h"
#include "memplan/planner/allocation_planner.h"

namespace memplan::planner {

struct Arena {
  std::string name;  // "cpu", "gpu:0", "cpu/outputs", "cpu/weights", "cpu/bodies"
  Device location;
  std::string purpose;  // "activations", "outputs", "weights", "bodies"
  uint64_t bytes = 0;
  uint64_t lower_bound = 0;
  uint64_t alignment = 256;
  std::string algorithm;
  bool optimal = false;
  double seconds = 0;
  size_t buffers = 0;
  uint64_t distinct_buffer_bytes = 0;  // the plan's distinct root buffers side by side (no offset sharing)
  bool multi_stream = false;           // conflicts come from happens-before, not only intervals
  std::string note;                    // why a phase of the layout's algorithm did not run (the exact search)
};

// Memory a node holds while it runs besides its inputs and outputs: the bodies of the If/Loop/Scan it executes
// (planned per execution, each in arenas of its own; planner/subgraphs.h). The parent's layout places it in the
// activation arena of its device for the span of the node's step, so the arena's size and bound are the peak
// of the whole model.
struct Workspace {
  NodeId node = kNoId;
  Device location;
  uint64_t bytes = 0;
  int arena = -1;  // set by compute_layout
  uint64_t offset = 0;
};

struct LayoutOptions {
  uint64_t alignment = 256;
  bool pack_outputs = false;  // outputs share the activation arena instead of their own
  // ORT's memory pattern (--like ort): a reused buffer stays the original allocation until the last read of any
  // value sharing it, and a buffer nobody reads is held to the end of the run.
  bool ort_memory_pattern = false;
  // A body: everything it allocates (activations, outputs, its constants) in one arena per device, the memory its
  // owner holds while it runs.
  bool one_arena = false;
  std::vector<Workspace> workspaces;  // what nodes hold while they run (node, location, bytes)
  // ORT allocates a body's memory when its owner runs, outside the main graph's memory pattern: the workspaces go
  // into an arena of their own per device ("bodies") instead of the activation arena.
  bool workspaces_apart = false;
  // Each arena's lower bound and buffer statistics (Arena::lower_bound, optimal, distinct_buffer_bytes). Off where only
  // the sizes are wanted (ORT's estimate: device totals); those fields are then 0 and false.
  bool bounds = true;
  arena::SolveOptions solve;
};

struct Layout {
  std::vector<Arena> arenas;
  std::vector<int> value_arena;        // per value: arena index, -1 when it owns no memory in an arena
  std::vector<uint64_t> value_offset;  // per value (Reuse/Share values: their root's offset)
  std::vector<Workspace> workspaces;   // with their arena and offset
  // How the arena problems were built, so arena_problem() rebuilds exactly the problem that was solved.
  bool pack_outputs = false, ort_memory_pattern = false, one_arena = false, workspaces_apart = false;
  // The exact searches' work, in seconds of --time-budget (work_budget.h): what a command that lays out again
  // (offload's rounds) has spent of its budget.
  double search_work_s = 0;
};

// Builds the per-arena problems (root buffers with lifetimes from first definition to the last use of any
// value sharing them; conflicts from happens-before on multi-stream devices) and solves them.
Layout compute_layout(const Graph& graph, const Plan& plan, const partition::Partition& partition,
                      const LayoutOptions& options);

// The problem the layout solved for one arena, for `memplan plan --export-problem`.
arena::Problem arena_problem(const Graph& graph, const Plan& plan, const Layout& layout, int arena);

nlohmann::ordered_json arena_to_json(const Arena& arena);

}  // namespace memplan::planner
