// The replay harness: executes a plan the way a runtime would — one worker per logical stream, real
// synchronisation, every buffer at its planned offset in one allocation per arena — with stand-in kernels
// that make any mistake in the plan visible. Each kernel first checks that every input region holds the
// exact stamp its producer wrote, then writes its outputs' stamps; a released buffer is poisoned, so a
// premature release shows up as a bad stamp at the next read.
//
// Two back-ends share the executor: CUDA (one CUDA stream per device stream, events for notifications)
// and its CPU twin (a host thread per stream, plus a device worker thread per device stream that follows
// CUDA's semantics, waits on unrecorded events included). Needs only the plan JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memplan/plan_doc/plan_doc.h"

namespace memplan::replay {

struct ReplayOptions {
  std::string backend = "cpu";  // cpu | cuda
  bool jitter = false;          // runs alternate: random delays everywhere, then each stream in turn lagging
  int iterations = 1;
  uint64_t seed = 1;
  bool sample = false;         // check a dense sample of each region instead of every word
  double timeout_s = 60;       // a stream stuck at a Barrier this long is reported, and the run ends
  bool show_progress = false;  // a run counter on stderr, when stderr is a terminal
};

struct ReplayReport {
  std::string backend;
  std::vector<std::string> errors;  // the first ones, each naming value, producer, consumer, streams, steps, stamps
  uint64_t error_count = 0;
  uint64_t bytes_verified = 0;
  uint64_t bytes_written = 0;
  double seconds = 0;
  int iterations = 0;
  double peak_gbps = 0;  // the device's peak memory bandwidth, when known (CUDA)
  int streams = 0;       // logical streams in the plan
  int lagged = 0;        // with jitter: how many of them had a run in which they lagged
  bool ok() const { return error_count == 0; }
};

bool cuda_available();
ReplayReport replay(const plan_doc::PlanDoc& plan, const ReplayOptions& options);

}  // namespace memplan::replay

namespace memplan::replay {
// The report as printed: errors first, then one summary line.
std::string format_report(const ReplayReport& report, const std::string& plan_path, size_t show);
}  // namespace memplan::replay
