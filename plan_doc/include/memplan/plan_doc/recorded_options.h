// How a plan was made, as its "options" object records it: written by `memplan plan` and the library's
// make_plan, read back by `validate --model` to load the model with the shapes the plan was made for. The keys and
// their spelling live here only (the planner adds "reuse" itself: what the plan did, not what was asked).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace memplan::plan_doc {

struct RecordedOptions {
  std::string device = "cpu", order = "default", arena_algorithm = "auto";
  int streams_per_device = 1;
  uint64_t alignment = 256;
  bool pack_outputs = false;
  bool allow_unknown_sizes = false;
  std::string partition_config;  // "" when memplan made the partition
  std::string like;              // "" or "ort"
  std::string offload;           // "" or the --offload scope; with it, host_bandwidth (GB/s, as text)
  std::string host_bandwidth;
  // NAME -> VALUE as the command line takes them: --dim NAME=VALUE, --input-shape NAME=1x3x224x224, --trip-count
  // NODE=N.
  std::map<std::string, std::string> dims, input_shapes, trip_counts;
};

// The plan file's "options" object (text values; the map's order is the file's).
std::map<std::string, std::string> options_object(const RecordedOptions& o);

// Back from a plan's "options": keys it does not know (the planner's "reuse", a later memplan's) are ignored, and
// fields it lacks keep their defaults.
RecordedOptions read_recorded_options(const std::map<std::string, std::string>& options);

}  // namespace memplan::plan_doc
