// Running a step whose code memplan does not control (libonnx's shape inference) in a child process, so that a
// crash, a runaway allocation or a hang in it on a hostile model becomes an error message, not memplan's crash.
#pragma once

#include <atomic>
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

// Whether MEMPLAN_NO_ISOLATION=1 asks for isolated work to run in this process.
bool isolation_off();

// Whether this process is a child started by run_isolated/start_isolated: work there may leave large structures to
// the child's exit to free.
bool in_isolated_child();

// The same in two halves, so that two children can run side by side: start_isolated forks and returns at once;
// finish() waits for the child and returns (or throws) what run_isolated would. A run dropped unfinished kills
// and reaps its child. A child also ends when the thread that started it does (the process killed, or exiting
// without collecting it).
class IsolatedRun {
 public:
  IsolatedRun() = default;
  IsolatedRun(IsolatedRun&& other) noexcept;
  IsolatedRun& operator=(IsolatedRun&& other) noexcept;
  IsolatedRun(const IsolatedRun&) = delete;
  IsolatedRun& operator=(const IsolatedRun&) = delete;
  ~IsolatedRun();
  // With `cancel`, checked every 20 ms while waiting: once it is true the child is killed and this throws.
  std::string finish(const std::atomic<bool>* cancel = nullptr);

 private:
  friend IsolatedRun start_isolated(const std::function<std::string()>&, const std::string&, const std::string&,
                                    const IsolationLimits&);
  int pid_ = -1;  // the child, until finished
  int fd_ = -1;   // its end of the pipe
  std::string file_, what_runs_;
  IsolationLimits limits_;
  std::string received_;  // read from the pipe, not yet taken
  std::string result_;    // when `work` ran in this process instead (no isolation)

  bool read_more(const std::atomic<bool>* cancel);  // false at the end of the pipe, or once `cancel` is set
  void kill_and_reap();  // a run dropped unfinished: its pipe closed, its child killed and collected
};
IsolatedRun start_isolated(const std::function<std::string()>& work, const std::string& file,
                           const std::string& what_runs, const IsolationLimits& limits = {});

}  // namespace memplan
