#include "memplan/stage_times.h"

#include <sys/resource.h>

namespace memplan {
namespace {

uint64_t peak_rss_bytes() {
  struct rusage usage {};
  return ::getrusage(RUSAGE_SELF, &usage) == 0 ? static_cast<uint64_t>(usage.ru_maxrss) * 1024 : 0;
}

}  // namespace

void StageTimes::add(const std::string& stage, double s) {
  const uint64_t peak = peak_rss_bytes();
  for (size_t i = 0; i < seconds.size(); ++i)
    if (seconds[i].first == stage) {
      seconds[i].second += s;
      peak_bytes[i] = peak;
      return;
    }
  seconds.emplace_back(stage, s);
  peak_bytes.push_back(peak);
}

StageTimes& stage_times() {
  static StageTimes times;
  return times;
}

TimedStage::~TimedStage() {
  progress_stage_ended();
  stage_times().add(stage_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
}

}  // namespace memplan
