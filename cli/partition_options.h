// The options that choose devices and streams, shared by `partition` and `plan`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "memplan/partition/pipeline.h"

namespace memplan::cli {

struct PartitionOptions {
  std::string device = "cpu";
  std::string placement;
  std::string op_properties;
  std::string config;
  int streams_per_device = 1;
  std::string order = "default";
  void add_to(CLI::App& app, bool with_config);
  partition::PartitionRequest request() const;
};

}  // namespace memplan::cli
