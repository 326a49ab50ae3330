// What the executor needs from a device: streams that run work in order, events, memory, and the stamp
// kernels. The CPU twin implements it with worker threads, the CUDA back-end with CUDA streams.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace memplan::replay {

struct Access {
  int value = -1;
  uint32_t* words = nullptr;  // where the value's region starts
  uint64_t count = 0;         // words in the region
};

// One stand-in kernel: write `early` (outputs a real kernel may write while still reading its inputs),
// check `reads`, then write `writes` (outputs that take an input's memory in place).
struct KernelTask {
  int node = -1;
  std::vector<Access> early, reads, writes;
  uint32_t delay_us = 0;  // jitter before it runs
  bool sample = false;
  // Runs once the device stream has reached the task, before it starts (the CPU twin calls it on its worker,
  // the CUDA back-end on a thread of its own while a gate kernel holds the stream): the lagging stream's turn,
  // held until the other streams have run what they can.
  std::function<void()> before;
};

// A mismatch found by a kernel: the first bad word of one read.
struct Mismatch {
  int node = -1, value = -1;
  uint64_t word = 0;
  uint32_t expected = 0, found = 0;
  bool at_release = false;  // found by the written-check of a release, not by a kernel's read
};

class MismatchSink {
 public:
  void add(const Mismatch& m) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (list_.size() < 1000) list_.push_back(m);
    ++count_;
  }
  uint64_t count() {
    std::lock_guard<std::mutex> lock(mutex_);
    return count_;
  }
  std::vector<Mismatch> take(uint64_t& count) {
    std::lock_guard<std::mutex> lock(mutex_);
    count = count_;
    return std::move(list_);
  }

 private:
  std::mutex mutex_;
  std::vector<Mismatch> list_;
  uint64_t count_ = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  virtual double peak_gbps() const { return 0; }
  // Memory the device's kernels read and write (device memory, or host memory the device can reach).
  virtual uint32_t* allocate(uint64_t words, bool host_visible) = 0;
  virtual void fill(uint32_t* words, uint64_t count, uint32_t pattern) = 0;
  virtual void stamp(uint32_t* words, uint64_t count, int value) = 0;  // synchronous, before a run
  virtual int create_stream() = 0;
  virtual int create_event() = 0;
  virtual void launch(int stream, const KernelTask& task) = 0;
  // A copy (offload's MemcpyToHost/MemcpyFromHost): the words of `from` into `to` (the fewer of the two counts),
  // checking nothing; whoever reads `to` checks the stamps it carries. `task` gives the node, the jitter delay and
  // the lagging stream's turn (its accesses are unused). The CUDA back-end uses cudaMemcpyAsync.
  virtual void copy(int stream, const Access& from, const Access& to, const KernelTask& task) = 0;
  // Poison, word by word, what still holds `value`'s stamp (compare-and-swap, so a later owner's words survive).
  virtual void poison(int stream, const Access& region, uint32_t delay_us) = 0;
  // Before a release: report when the buffer's first word was never written in this run (released
  // before its producer ran). Only kUnwritten counts: once written, a word never returns to it.
  virtual void check_written(int stream, const Access& region, int node) = 0;
  virtual void record(int stream, int event) = 0;
  virtual void wait(int stream, int event) = 0;  // on the device; no effect if the event was never recorded
  virtual void host_wait(int event) = 0;         // blocks the host; no effect if never recorded
  virtual void synchronize() = 0;
  // For the slow-stream jitter: whether a stream has nothing it could run now (no queued work, or, where
  // knows_quiet(), held at an event wait), and a count that grows as device work completes (0 where the
  // back-end cannot tell cheaply). Where !knows_quiet(), a stream held at an event looks busy.
  virtual bool quiet(int stream) = 0;
  virtual bool knows_quiet() const { return false; }
  virtual bool event_done(int event) = 0;  // its latest record has completed (or it was never recorded)
  virtual uint64_t progress() { return 0; }
  // Tasks with a `before` queued on a stream whose turn has not come yet (`before` not yet run).
  virtual uint64_t turns_queued(int stream) = 0;
  virtual std::vector<Mismatch> mismatches(uint64_t& count) = 0;  // at the end: takes them
  virtual uint64_t mismatch_count() = 0;                          // so far, between runs
  virtual void reset_events() = 0;
};

std::unique_ptr<Device> make_cpu_device();
std::unique_ptr<Device> make_cuda_device();  // throws when CUDA is unavailable

// Host-side stamp kernels, used by the CPU twin and for host-side accesses on any device.
void check_and_write(const KernelTask& task, MismatchSink& sink);
void poison_region(const Access& region);
void check_region_written(const Access& region, int node, MismatchSink& sink);
void copy_words(const Access& from, const Access& to);  // word by word, as racy accesses (atomic_ref)

}  // namespace memplan::replay
