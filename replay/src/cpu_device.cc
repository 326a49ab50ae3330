// The CPU twin of the CUDA back-end: each device stream is a worker thread running its queue in order;
// events follow CUDA's semantics (a wait captures the latest record at the time of the call, and a wait
// on an event never recorded does nothing).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <thread>

#include "device.h"
#include "stamp.h"

namespace memplan::replay {
namespace {

struct Event {
  std::mutex mutex;
  std::condition_variable cv;
  uint64_t recorded = 0;   // host side: how many records were issued
  uint64_t completed = 0;  // device side: the last record reached
  void complete(uint64_t version) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      completed = std::max(completed, version);
    }
    cv.notify_all();
  }
  void wait_for(uint64_t version) {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return completed >= version; });
  }
};

class Worker {
 public:
  Worker() : thread_([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  std::atomic<uint64_t> turns_queued{0};  // tasks with a `before` pushed and not yet past it
  void push(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(task));
    }
    cv_.notify_all();
  }
  // Nothing it could run now: its queue is empty, or it is held at an event not yet reached.
  bool quiet() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.empty() && !busy_) return true;
    if (!held_on_) return false;
    std::lock_guard<std::mutex> event_lock(held_on_->mutex);
    return held_on_->completed < held_version_;
  }
  // Runs on the worker: waits for the event to reach `version`, marked as held meanwhile.
  void wait_held(Event* e, uint64_t version) {
    set_held(e, version);
    e->wait_for(version);
    set_held(nullptr, 0);
  }
  uint64_t finished() const { return finished_; }
  void drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty() && stop_) return;
      auto task = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      task();
      ++finished_;
      lock.lock();
      busy_ = false;
      if (queue_.empty()) idle_cv_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_, idle_cv_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false, busy_ = false;
  std::atomic<uint64_t> finished_{0};
  Event* held_on_ = nullptr;  // the event its running wait is for (guarded by mutex_)
  uint64_t held_version_ = 0;
  std::thread thread_;

  void set_held(Event* e, uint64_t version) {
    std::lock_guard<std::mutex> lock(mutex_);
    held_on_ = e;
    held_version_ = version;
  }
};

void sleep_us(uint32_t us) {
  if (us) std::this_thread::sleep_for(std::chrono::microseconds(us));
}

class CpuDevice : public Device {
  // Queues `work` on the stream behind the task's turn (counted until it has run) and its jitter delay.
  void push_after_turn(int stream, const KernelTask& task, std::function<void()> work) {
    Worker* w = workers_[stream].get();
    if (task.before) ++w->turns_queued;
    w->push([w, before = task.before, delay_us = task.delay_us, work = std::move(work)] {
      if (before) {
        before();
        --w->turns_queued;
      }
      sleep_us(delay_us);
      work();
    });
  }

 public:
  std::string name() const override { return "cpu"; }
  uint32_t* allocate(uint64_t words, bool) override {
    buffers_.emplace_back(std::make_unique<uint32_t[]>(words + 1));
    return buffers_.back().get();
  }
  void fill(uint32_t* words, uint64_t count, uint32_t pattern) override { std::fill(words, words + count, pattern); }
  void stamp(uint32_t* words, uint64_t count, int value) override {
    for (uint64_t i = 0; i < count; ++i) words[i] = stamp_word(value, i);
  }
  int create_stream() override {
    workers_.push_back(std::make_unique<Worker>());
    return static_cast<int>(workers_.size()) - 1;
  }
  int create_event() override {
    events_.push_back(std::make_unique<Event>());
    return static_cast<int>(events_.size()) - 1;
  }
  void launch(int stream, const KernelTask& task) override {
    push_after_turn(stream, task, [this, task] { check_and_write(task, sink_); });
  }
  void copy(int stream, const Access& from, const Access& to, const KernelTask& task) override {
    push_after_turn(stream, task, [from, to] { copy_words(from, to); });
  }
  uint64_t turns_queued(int stream) override { return workers_[stream]->turns_queued; }
  void poison(int stream, const Access& region, uint32_t delay_us) override {
    workers_[stream]->push([region, delay_us] {
      sleep_us(delay_us);
      poison_region(region);
    });
  }
  void check_written(int stream, const Access& region, int node) override {
    workers_[stream]->push([this, region, node] { check_region_written(region, node, sink_); });
  }
  void record(int stream, int event) override {
    Event* e = events_[event].get();
    uint64_t version;
    {
      std::lock_guard<std::mutex> lock(e->mutex);
      version = ++e->recorded;
    }
    if (stream < 0) {
      e->complete(version);  // a host stream: its work is already done
      return;
    }
    workers_[stream]->push([e, version] { e->complete(version); });
  }
  void wait(int stream, int event) override {
    Event* e = events_[event].get();
    uint64_t version;
    {
      std::lock_guard<std::mutex> lock(e->mutex);
      version = e->recorded;
    }
    if (version == 0) return;  // never recorded: CUDA does not wait
    Worker* w = workers_[stream].get();
    w->push([w, e, version] { w->wait_held(e, version); });
  }
  void host_wait(int event) override {
    Event* e = events_[event].get();
    uint64_t version;
    {
      std::lock_guard<std::mutex> lock(e->mutex);
      version = e->recorded;
    }
    if (version) e->wait_for(version);
  }
  void synchronize() override {
    for (auto& w : workers_) w->drain();
  }
  bool quiet(int stream) override { return workers_[stream]->quiet(); }
  bool knows_quiet() const override { return true; }
  bool event_done(int event) override {
    Event* e = events_[event].get();
    std::lock_guard<std::mutex> lock(e->mutex);
    return e->completed >= e->recorded;
  }
  uint64_t progress() override {
    uint64_t n = 0;
    for (auto& w : workers_) n += w->finished();
    return n;
  }
  std::vector<Mismatch> mismatches(uint64_t& count) override { return sink_.take(count); }
  uint64_t mismatch_count() override { return sink_.count(); }
  void reset_events() override {
    for (auto& e : events_) {
      std::lock_guard<std::mutex> lock(e->mutex);
      e->recorded = e->completed = 0;
    }
  }

 private:
  std::list<std::unique_ptr<uint32_t[]>> buffers_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::unique_ptr<Event>> events_;
  MismatchSink sink_;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device() {
  return std::make_unique<CpuDevice>();
}

}  // namespace memplan::replay
