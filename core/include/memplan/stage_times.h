// Wall time per stage of a command, for `--timings` and the scale benchmark: each stage adds its seconds under
// its name (a stage run twice, as the ORT view's load, adds up). Stages are timed on the main thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "memplan/progress.h"

namespace memplan {

struct StageTimes {
  std::vector<std::pair<std::string, double>> seconds;  // in the order stages first ran
  // The process's peak memory (max RSS) when each stage last ended, by the same index: where the peak is reached.
  std::vector<uint64_t> peak_bytes;
  void add(const std::string& stage, double s);
};

StageTimes& stage_times();  // the process's

// Adds the time from construction to destruction to stage_times() under `stage`; on a terminal, a stage that runs a
// second or more shows its name and time so far meanwhile (progress.h).
class TimedStage {
 public:
  explicit TimedStage(std::string stage) : stage_(std::move(stage)), start_(std::chrono::steady_clock::now()) {
    progress_stage_began(stage_);  // (shown on a terminal while it runs: progress.h)
  }
  ~TimedStage();
  TimedStage(const TimedStage&) = delete;
  TimedStage& operator=(const TimedStage&) = delete;

 private:
  std::string stage_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace memplan
