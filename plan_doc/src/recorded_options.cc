#include "memplan/plan_doc/recorded_options.h"

#include <cstdlib>
#include <string_view>

namespace memplan::plan_doc {

namespace {

// Per-name settings are one key each: the prefix, then the name ("dim batch").
constexpr std::string_view kDim = "dim ", kInputShape = "input_shape ", kTripCount = "trip_count ";

void add_named(std::map<std::string, std::string>& out, std::string_view prefix,
               const std::map<std::string, std::string>& named) {
  for (const auto& [name, value] : named) out[std::string(prefix) + name] = value;
}

bool take_named(const std::string& key, const std::string& value, std::string_view prefix,
                std::map<std::string, std::string>& into) {
  if (key.compare(0, prefix.size(), prefix) != 0) return false;
  into[key.substr(prefix.size())] = value;
  return true;
}

}  // namespace

std::map<std::string, std::string> options_object(const RecordedOptions& o) {
  std::map<std::string, std::string> out = {{"device", o.device},
                                            {"order", o.order},
                                            {"streams_per_device", std::to_string(o.streams_per_device)},
                                            {"arena_algorithm", o.arena_algorithm},
                                            {"align", std::to_string(o.alignment)},
                                            {"pack_outputs", o.pack_outputs ? "true" : "false"}};
  if (!o.partition_config.empty()) out["partition"] = o.partition_config;
  add_named(out, kDim, o.dims);
  add_named(out, kInputShape, o.input_shapes);
  add_named(out, kTripCount, o.trip_counts);
  if (o.allow_unknown_sizes) out["allow_unknown_sizes"] = "true";
  if (!o.offload.empty()) {
    out["offload"] = o.offload;
    out["host_bandwidth"] = o.host_bandwidth;
  }
  if (!o.like.empty()) out["like"] = o.like;
  return out;
}

RecordedOptions read_recorded_options(const std::map<std::string, std::string>& options) {
  RecordedOptions o;
  for (const auto& [key, value] : options) {
    if (take_named(key, value, kDim, o.dims) || take_named(key, value, kInputShape, o.input_shapes) ||
        take_named(key, value, kTripCount, o.trip_counts))
      continue;
    if (key == "device") o.device = value;
    if (key == "order") o.order = value;
    if (key == "arena_algorithm") o.arena_algorithm = value;
    if (key == "partition") o.partition_config = value;
    if (key == "like") o.like = value;
    if (key == "offload") o.offload = value;
    if (key == "host_bandwidth") o.host_bandwidth = value;
    if (key == "pack_outputs") o.pack_outputs = value == "true";
    if (key == "allow_unknown_sizes") o.allow_unknown_sizes = value == "true";
    // A number a hand-edited plan spoilt keeps its default rather than throw: nothing plans from it.
    if (key == "streams_per_device" || key == "align") {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
      const bool number = !value.empty() && end && *end == '\0';
      if (number && key == "align") o.alignment = n;
      if (number && key == "streams_per_device" && n <= (1u << 20)) o.streams_per_device = static_cast<int>(n);
    }
  }
  return o;
}

}  // namespace memplan::plan_doc
