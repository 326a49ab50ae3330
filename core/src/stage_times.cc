#include "memplan/stage_times.h"

namespace memplan {

void StageTimes::add(const std::string& stage, double s) {
  for (auto& [name, total] : seconds)
    if (name == stage) {
      total += s;
      return;
    }
  seconds.emplace_back(stage, s);
}

StageTimes& stage_times() {
  static StageTimes times;
  return times;
}

TimedStage::~TimedStage() {
  stage_times().add(stage_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
}

}  // namespace memplan
