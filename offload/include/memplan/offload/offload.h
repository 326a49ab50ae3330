// Offload planning (issue 21, first part): which device buffers live in host memory for part of the run, and when
// they are copied in and out, so that the device's live bytes stay under a budget. A plain problem over program
// counters, like the arena problems: no graph, no plan. Building it from a plan, the copy steps, the staging
// regions in the layout, validate and replay come next (see docs/offload.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memplan::offload {

// One buffer of the device: a weight (on the device for the whole run unless offloaded; its home can be the host)
// or an activation (written at its first use, read at the others; its home is the device).
struct Buffer {
  uint64_t bytes = 0;
  bool weight = false;
  bool offloadable = true;  // false: an in-place chain, an output, an alias... stays where the plan put it
  std::vector<int> uses;    // program counters, sorted, distinct; an activation's first is its producer
};

enum class Scope { kAll, kWeights };

struct Problem {
  std::vector<double> step_us;  // per program counter: the compute time of its kernel (the cost model's)
  std::vector<Buffer> buffers;
  uint64_t budget = 0;         // live bytes the device may hold at any program counter
  double bytes_per_us = 25e3;  // host <-> device, each direction (25 GB/s)
  Scope scope = Scope::kAll;
};

// A stretch of program counters during which an offloaded buffer is on the device.
struct Residency {
  int from = 0;         // the staging region exists from this program counter (a copy-in is issued there)
  int first_use = 0;    // ... the copy-in must be complete before this one runs
  int last_use = 0;     // ... the last use it serves
  int until = 0;        // ... and it is held through this program counter (a copy-out may still read it)
  bool copy_in = true;  // false for an activation's first residency, which its producer writes
};

struct Choice {
  bool offloaded = false;
  std::vector<Residency> residencies;  // empty when not offloaded
  int copy_out_after = -1;             // an offloaded activation: copied to the host after this program counter
};

struct Transfer {
  int buffer = 0;
  bool to_device = true;
  int issued_at = 0;  // the program counter after (copy-out) or before (copy-in) which the copy starts
  int needed_by = 0;  // copy-in: the first use it serves; copy-out: the program counter the device copy is held to
  uint64_t bytes = 0;
};

struct Result {
  std::vector<Choice> choices;      // per buffer
  std::vector<Transfer> transfers;  // by issue order
  std::vector<uint64_t> live;       // per program counter: device bytes with the choices made
  uint64_t peak = 0;                // max of live
  uint64_t peak_without = 0;        // the same with nothing offloaded
  bool fits = false;                // peak <= budget
  int peak_at = -1;                 // where the peak is (where it failed, when it does not fit)
  uint64_t bytes_moved = 0;         // per inference, both directions
  double compute_us = 0;            // sum of step_us: the run without transfers
  double estimated_us = 0;          // the run with them: compute waits for late copy-ins and held copy-outs
  std::string why;                  // when it does not fit: what is live at the peak that could not move
};

// Chooses residencies greedily from the highest peak down: at the first program counter over the budget it moves
// the buffer that makes no reader wait and costs the fewest copies per byte freed there (among equals: the smallest
// that alone brings the peak under the budget, else the largest; then the one free longest; then the lowest index),
// until every program counter fits or nothing live at the peak can move. Copy-ins start just early enough that the
// compute between their issue and their first use covers their transfer time; when that lead is itself over the
// budget, later (a reader then waits). The estimate simulates one copy stream per direction beside the compute.
// Deterministic: the same problem gives the same result.
Result choose_offload(const Problem& problem);

// The smallest budget (to `granularity` bytes) at which choose_offload fits, by bisection between the largest
// single use's working set and the peak without offload.
uint64_t smallest_fitting_budget(Problem problem, uint64_t granularity = 1 << 20);

}  // namespace memplan::offload
