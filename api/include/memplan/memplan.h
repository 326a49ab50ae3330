// memplan's library API: plan the memory of an ONNX model from C++ (the `memplan` command line and the Python
// module are its users). Plain data in and out; documents (plans, partition configs, reports) as the JSON text
// the command line writes, described in docs/plan-format.md and docs/*.schema.json.
//
//   #include <memplan/memplan.h>
//   memplan::PlanSettings s;
//   s.shapes.dims["batch"] = 8;
//   s.device = "gpu";
//   memplan::PlanResult r = memplan::make_plan("model.onnx", s);   // r.devices[0].total, r.json, ...
//
// Every function throws memplan::Error (memplan/error.h) for bad input: its message is the command line's
// ("FILE: what is wrong, what to do") and code() its exit code. Link with find_package(memplan) and
// target_link_libraries(... memplan::memplan).
//
// Stability: names and fields here change only with kApiVersion; new fields may be added at the end of a
// struct.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "memplan/error.h"

#define MEMPLAN_API __attribute__((visibility("default")))

namespace memplan {

inline constexpr int kApiVersion = 1;

// memplan's version, e.g. "0.1.0".
MEMPLAN_API std::string version();

// How a model's free shapes are fixed: the command line's --dim, --input-shape and --trip-count.
struct ShapeSettings {
  std::map<std::string, int64_t> dims;                       // dim_param name -> size
  std::map<std::string, std::vector<int64_t>> input_shapes;  // graph input -> full shape
  std::map<std::string, int64_t> trip_counts;                // Loop node -> iterations to plan for
};

// The choices of `memplan plan`, with its defaults (`partition` reads the device and stream ones).
struct PlanSettings {
  ShapeSettings shapes;
  std::string device = "cpu";            // cpu, gpu or gpu:N
  int streams_per_device = 1;            // 1..64 logical streams per device
  std::string order = "default";         // execution order: default or priority (ORT's two)
  std::string partition_config;          // path of an ONNX Runtime partition config to apply ("": make one)
  std::string placement;                 // path of placement rules replacing the built-in ones ("": built-in)
  std::string op_properties;             // path of op properties extending the built-in table ("": none)
  std::string like;                      // "ort": plan exactly as ONNX Runtime would
  std::string reuse = "memplan";         // memplan, ort or none
  std::string arena_algorithm = "auto";  // best-fit, greedy-size, exact or auto
  double time_budget_s = 1.0;            // for the exact arena search
  uint64_t alignment = 256;              // of every buffer, a power of two
  bool pack_outputs = false;             // graph outputs in the activation arena
  bool allow_unknown_sizes = false;      // else a plan with values of unknown size is an error
};

// Per device, the bytes it needs (largest first in PlanResult::devices).
struct DeviceSummary {
  std::string device;  // "cpu", "gpu:0", ...
  uint64_t total = 0, activations = 0, outputs = 0, weights = 0, inputs = 0;
  bool complete = true;  // false: values of unknown size are left out, the figures are lower bounds
};

struct ArenaSummary {
  std::string name;  // "cpu", "gpu:0", "cpu/weights", ...
  std::string device;
  std::string purpose;  // activations, outputs, weights, bodies
  uint64_t bytes = 0, lower_bound = 0;
  std::string algorithm;
  bool optimal = false;  // proven to be at the bound
  size_t buffers = 0;
};

struct PlanResult {
  std::string json;  // the plan file, byte for byte what `memplan plan -o` writes
  bool complete = true;
  size_t nodes = 0, values = 0, streams = 0;
  std::vector<DeviceSummary> devices;
  std::vector<ArenaSummary> arenas;
  std::vector<std::string> warnings;  // what the command line prints as "memplan: warning: ..."
};

// Loads, partitions, plans and lays out the model.
MEMPLAN_API PlanResult make_plan(const std::string& model_path, const PlanSettings& settings = {});

struct PartitionResult {
  std::string config_json;  // an ONNX Runtime DeviceBasedPartitioner config, as `memplan partition` writes it
  size_t nodes = 0, streams = 0;
  std::vector<std::string> warnings;
};

// Places the model's nodes on devices and splits them into streams (device, streams, order, placement, op
// properties and shapes from `settings`).
MEMPLAN_API PartitionResult make_partition(const std::string& model_path, const PlanSettings& settings = {});

struct Violation {
  std::string check;  // structure, overlap, release, use-before-definition, model, incomplete, ...
  std::string message;
};

struct ValidateSettings {
  std::string model_path;            // also check the plan against this model: same file, names and sizes
  bool allow_unknown_sizes = false;  // an incomplete plan is valid (else an 'incomplete' violation)
};

struct Validation {
  std::vector<Violation> violations;
  std::string incomplete;  // non-empty: what an incomplete plan leaves out
  size_t values_checked = 0, uses_checked = 0, regions_checked = 0;
  double seconds = 0;
  bool valid() const { return violations.empty(); }
};

// Checks a plan statically (`memplan validate`). `plan_json` is the plan's text; `plan_name` names it in errors.
// A malformed plan throws Error(kBadInput); a well-formed but wrong one is reported in the result.
MEMPLAN_API Validation check_plan(const std::string& plan_json, const std::string& plan_name = "plan",
                                  const ValidateSettings& settings = {});
// The same on a plan file ("-": stdin), read without a copy (a 1M-value plan is 800 MB).
MEMPLAN_API Validation check_plan_file(const std::string& path, const ValidateSettings& settings = {});

// `memplan inspect --json` of a model (format memplan.inspect) or a plan file (memplan.inspect-plan,
// docs/inspect-plan.schema.json): the report's JSON text. `top`: entries per ranked list.
MEMPLAN_API std::string inspect(const std::string& path, const ShapeSettings& shapes = {}, size_t top = 10);

// Writes a document (a plan, a config, a report) to `path` complete or not at all: an exclusive temporary file in the
// same folder, renamed into place when written ("-": stdout). Throws Error(kBadInput) naming the path.
MEMPLAN_API void save(const std::string& path, const std::string& text);

}  // namespace memplan
