// Running a step whose code memplan does not control (libonnx's shape inference) in a child process, so that a
// crash, a runaway allocation or a hang in it on a hostile model becomes an error message, not memplan's crash.
#pragma once

#include <functional>
#include <string>

namespace memplan {

struct IsolationLimits {
  double cpu_seconds = 600;             // RLIMIT_CPU of the child
  unsigned long long memory_bytes = 0;  // RLIMIT_AS of the child; 0: the larger of 8 GiB and half the machine's RAM
};

// The machine's RAM in bytes (0 when the system does not say).
unsigned long long physical_memory_bytes();

// The larger of 8 GiB and half the machine's RAM, or MEMPLAN_ISOLATION_MEMORY_MB.
unsigned long long default_isolation_memory();

// Runs `work` in a forked child and returns the bytes it returned. An Error the child throws is rethrown here
// with its code and message. When the child dies (a signal, the memory or CPU limit) this throws
// Error(kBadInput) naming `file` and `what_runs` ("ONNX's shape inference"). With MEMPLAN_NO_ISOLATION=1 in the
// environment, `work` runs in this process (for debugging it).
std::string run_isolated(const std::function<std::string()>& work, const std::string& file,
                         const std::string& what_runs, const IsolationLimits& limits = {});

}  // namespace memplan
