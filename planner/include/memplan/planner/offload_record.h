// What offload planning did to a plan (offload/offload_model.h), as the plan file records it: the device and its
// budget, the copy streams, and for each moved value its home and its staging copies. Plain data: the planner's
// writers print it without depending on offload/.
#pragma once

#include <cstdint>
#include <vector>

#include "memplan/graph.h"
#include "memplan/partition/device.h"

namespace memplan::planner {

struct OffloadRecord {
  partition::Device device;
  uint64_t budget = 0;       // the device's budget (--max-arena)
  uint64_t before = 0;       // the device's total without offload
  int copy_in_stream = -1;   // host to device
  int copy_out_stream = -1;  // device to host
  double bytes_per_us = 0;   // the host-device bandwidth the choice assumed
  double compute_us = 0;     // the cost model's time for the steps
  double estimated_us = 0;   // ... with the copies beside them
  uint64_t bytes_moved = 0;  // per inference, both directions
  struct Moved {
    ValueId home = kNoId;          // the value in host memory: a weight, or an activation's copy-out
    ValueId source = kNoId;        // an activation: the device value its producer writes; kNoId for a weight
    std::vector<ValueId> staging;  // device copies, one per residency, in order
    std::vector<NodeId> copies;    // the copy nodes: the copy-out first (activations), then the copy-ins
    bool weight = false;
  };
  std::vector<Moved> moved;
};

}  // namespace memplan::planner
