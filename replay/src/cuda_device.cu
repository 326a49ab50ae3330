// The CUDA back-end: one CUDA stream per device stream, cudaEvent per notification, stamp kernels that
// check and write every word, poison kernels with atomicCAS, spin kernels for jitter, and gates that hold the
// lagging stream's work on the device until the host has let the other streams run.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "device.h"
#include "stamp.h"

namespace memplan::replay {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}

struct DeviceAccess {
  int value;
  uint32_t* words;
  unsigned long long count;
};

// Kernel arguments travel by value (well under the 4 KB parameter limit), so a launch needs no
// allocation or copy of its own: cudaMalloc between launches could serialise the streams and hide races.
constexpr int kAccessesPerLaunch = 32;
struct AccessList {
  int n;
  DeviceAccess a[kAccessesPerLaunch];
};

// In device memory, copied back at the end: atomics on mapped host memory are not guaranteed over PCIe.
struct DeviceMismatches {
  unsigned long long count;
  Mismatch first[1024];
};

__device__ void report(DeviceMismatches* out, const Mismatch& m) {
  unsigned long long slot = atomicAdd(&out->count, 1ull);
  if (slot < 1024) out->first[slot] = m;
}

__global__ void spin_kernel(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Where a gate lives: in mapped host memory, which both sides read and write while kernels run.
struct GateWords {
  unsigned reached;  // the last ticket whose gate kernel has started (written by the device)
  unsigned opened;   // the last ticket the host has let through (written by the host)
};

// The head of a gated task: says it has been reached, then holds its stream until the host opens its ticket
// (or `cap` cycles pass: a safety net against a host that never answers, not a rule).
__global__ void gate_kernel(GateWords* gate, unsigned ticket, long long cap) {
  volatile GateWords* g = gate;
  g->reached = ticket;
  __threadfence_system();
  const long long start = clock64();
  while (g->opened < ticket && clock64() - start < cap) {
  }
}

__global__ void fill_kernel(uint32_t* words, unsigned long long count, uint32_t pattern, int value, bool stamp) {
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    words[i] = stamp ? stamp_word(value, i) : pattern;
}

// Checks reads (recording every bad word, the first 1024 kept); the writes that follow run as
// write_kernel in the same stream, so they start only after every read is checked.
__global__ void check_kernel(AccessList reads, int node, bool sample, DeviceMismatches* out) {
  for (int r = 0; r < reads.n; ++r) {
    const DeviceAccess a = reads.a[r];
    unsigned long long stride = sample && a.count > 256 ? a.count / 256 : 1;
    unsigned long long n = (a.count + stride - 1) / stride;
    for (unsigned long long k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
      unsigned long long i = k * stride;
      uint32_t want = stamp_word(a.value, i);
      uint32_t got = reinterpret_cast<volatile uint32_t*>(a.words)[i];
      if (got != want) report(out, Mismatch{node, a.value, i, want, got});
    }
  }
}

__global__ void write_kernel(AccessList writes) {
  for (int w = 0; w < writes.n; ++w) {
    const DeviceAccess a = writes.a[w];
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < a.count; i += gridDim.x * blockDim.x)
      a.words[i] = stamp_word(a.value, i);
  }
}

__global__ void poison_kernel(uint32_t* words, unsigned long long count, int value) {
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    atomicCAS(&words[i], stamp_word(value, i), kPoison);
}

__global__ void written_kernel(uint32_t* words, int value, int node, DeviceMismatches* out) {
  uint32_t got = reinterpret_cast<volatile uint32_t*>(words)[0];
  if (got == kUnwritten) report(out, Mismatch{node, value, 0, stamp_word(value, 0), got, true});
}

// The lagging stream's turn on CUDA (KernelTask::before). The CPU twin runs `before` on its device worker just
// before the kernel; a CUDA stream cannot run host code that calls CUDA, so each gated task starts with a
// gate_kernel and a worker thread, once the gate is reached, runs `before` and then opens it.
class Gate {
 public:
  Gate() {
    check(cudaHostAlloc(reinterpret_cast<void**>(&words_), sizeof(GateWords), cudaHostAllocMapped), "cudaHostAlloc");
    words_->reached = words_->opened = 0;
    check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_words_), words_, 0), "cudaHostGetDevicePointer");
    worker_ = std::thread([this] { work(); });
  }
  ~Gate() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
    cudaFreeHost(words_);
  }
  // Gates enqueued and not yet opened.
  uint64_t queued() const {
    volatile GateWords* g = words_;
    return tickets_ - g->opened;
  }
  // Enqueues the gate on `stream`; `before` runs on the worker once the stream reaches it.
  void hold(cudaStream_t stream, std::function<void()> before, long long cap) {
    const unsigned ticket = ++tickets_;
    gate_kernel<<<1, 1, 0, stream>>>(device_words_, ticket, cap);
    check(cudaGetLastError(), "gate launch");
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.emplace_back(ticket, std::move(before));
    }
    cv_.notify_all();
  }

 private:
  void work() {
    for (;;) {
      std::pair<unsigned, std::function<void()>> item;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left to open
        item = std::move(queue_.front());
        queue_.pop_front();
      }
      // Until the stream has reached the gate (what is before it has run); a few seconds at most.
      volatile GateWords* g = words_;
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (g->reached < item.first && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::microseconds(10));
      std::atomic_thread_fence(std::memory_order_acquire);
      if (item.second) item.second();
      std::atomic_thread_fence(std::memory_order_release);
      g->opened = item.first;
    }
  }

  GateWords* words_ = nullptr;
  GateWords* device_words_ = nullptr;
  unsigned tickets_ = 0;  // the host thread of the gate's stream is the only one that enqueues
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<unsigned, std::function<void()>>> queue_;
  bool stop_ = false;
};

class CudaDevice : public Device {
 public:
  CudaDevice() {
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (count == 0) throw std::runtime_error("no CUDA device");
    check(cudaSetDevice(0), "cudaSetDevice");
    cudaDeviceProp prop;
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    name_ = std::string("cuda (") + prop.name + ")";
    sms_ = prop.multiProcessorCount;
    int clock_khz = 0, bus_bits = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, 0);
    cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0);
    peak_ = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    cudaDeviceGetAttribute(&clock_rate_khz_, cudaDevAttrClockRate, 0);
    check(cudaMalloc(&mismatches_, sizeof(DeviceMismatches)), "cudaMalloc");
    check(cudaMemset(mismatches_, 0, sizeof(DeviceMismatches)), "cudaMemset");
    check(cudaStreamCreateWithFlags(&setup_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~CudaDevice() override {
    cudaDeviceSynchronize();
    gates_.clear();
    for (auto s : streams_) cudaStreamDestroy(s);
    for (auto e : events_) cudaEventDestroy(e);
    for (auto p : device_buffers_) cudaFree(p);
    for (auto p : host_buffers_) cudaFreeHost(p);
    cudaFree(mismatches_);
    cudaStreamDestroy(setup_);
  }
  std::string name() const override { return name_; }
  double peak_gbps() const override { return peak_; }
  uint32_t* allocate(uint64_t words, bool host_visible) override {
    void* p = nullptr;
    if (host_visible) {
      check(cudaHostAlloc(&p, (words + 1) * 4, cudaHostAllocMapped), "cudaHostAlloc");
      host_buffers_.push_back(p);
    } else {
      check(cudaMalloc(&p, (words + 1) * 4), "cudaMalloc");
      device_buffers_.push_back(p);
    }
    return static_cast<uint32_t*>(p);
  }
  void fill(uint32_t* words, uint64_t count, uint32_t pattern) override {
    fill_kernel<<<grid(count), 256, 0, setup_>>>(words, count, pattern, 0, false);
    check(cudaStreamSynchronize(setup_), "fill");
  }
  void stamp(uint32_t* words, uint64_t count, int value) override {
    fill_kernel<<<grid(count), 256, 0, setup_>>>(words, count, 0, value, true);
    check(cudaStreamSynchronize(setup_), "stamp");
  }
  int create_stream() override {
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    streams_.push_back(s);
    gates_.emplace_back();  // made on the stream's first gated task
    return static_cast<int>(streams_.size()) - 1;
  }
  int create_event() override {
    cudaEvent_t e;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    events_.push_back(e);
    return static_cast<int>(events_.size()) - 1;
  }
  void launch(int stream, const KernelTask& task) override {
    cudaStream_t s = streams_[stream];
    hold(stream, task);
    if (task.delay_us) spin_kernel<<<1, 1, 0, s>>>(cycles(task.delay_us));
    // Early writes, then reads, then in-place writes, each in launches of up to kAccessesPerLaunch.
    for (const auto* list : {&task.early, &task.reads, &task.writes})
      for (size_t first = 0; first < list->size(); first += kAccessesPerLaunch) {
        AccessList args{};
        uint64_t words = 1;
        for (size_t k = first; k < list->size() && args.n < kAccessesPerLaunch; ++k) {
          const Access& a = (*list)[k];
          args.a[args.n++] = {a.value, a.words, a.count};
          words = std::max(words, a.count);
        }
        if (list == &task.reads)
          check_kernel<<<grid(words), 256, 0, s>>>(args, task.node, task.sample, mismatches_);
        else
          write_kernel<<<grid(words), 256, 0, s>>>(args);
      }
    check(cudaGetLastError(), "kernel launch");
  }
  void copy(int stream, const Access& from, const Access& to, const KernelTask& task) override {
    cudaStream_t s = streams_[stream];
    hold(stream, task);
    if (task.delay_us) spin_kernel<<<1, 1, 0, s>>>(cycles(task.delay_us));
    const uint64_t words = from.count < to.count ? from.count : to.count;
    check(cudaMemcpyAsync(to.words, from.words, words * sizeof(uint32_t), cudaMemcpyDefault, s), "cudaMemcpyAsync");
  }
  void poison(int stream, const Access& region, uint32_t delay_us) override {
    cudaStream_t s = streams_[stream];
    if (delay_us) spin_kernel<<<1, 1, 0, s>>>(cycles(delay_us));
    poison_kernel<<<grid(region.count), 256, 0, s>>>(region.words, region.count, region.value);
    check(cudaGetLastError(), "poison launch");
  }
  void check_written(int stream, const Access& region, int node) override {
    if (!region.count) return;
    written_kernel<<<1, 1, 0, streams_[stream]>>>(region.words, region.value, node, mismatches_);
    check(cudaGetLastError(), "check launch");
  }
  void record(int stream, int event) override {
    if (stream < 0) {
      // A host stream's work is done: record on an idle stream so the event completes at once.
      check(cudaEventRecord(events_[event], setup_), "cudaEventRecord");
    } else {
      check(cudaEventRecord(events_[event], streams_[stream]), "cudaEventRecord");
    }
  }
  void wait(int stream, int event) override {
    check(cudaStreamWaitEvent(streams_[stream], events_[event], 0), "cudaStreamWaitEvent");
  }
  void host_wait(int event) override { check(cudaEventSynchronize(events_[event]), "cudaEventSynchronize"); }
  void synchronize() override { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }
  uint64_t turns_queued(int stream) override { return gates_[stream] ? gates_[stream]->queued() : 0; }
  bool quiet(int stream) override { return settled(cudaStreamQuery(streams_[stream])); }
  bool event_done(int event) override { return settled(cudaEventQuery(events_[event])); }
  uint64_t mismatch_count() override {
    synchronize();
    unsigned long long n = 0;
    check(cudaMemcpy(&n, &mismatches_->count, sizeof n, cudaMemcpyDeviceToHost), "cudaMemcpy");
    return n;
  }
  std::vector<Mismatch> mismatches(uint64_t& count) override {
    const unsigned long long n = mismatch_count();
    count = n;
    std::vector<Mismatch> out(std::min<unsigned long long>(n, 1024));
    if (!out.empty())
      check(cudaMemcpy(out.data(), mismatches_->first, out.size() * sizeof(Mismatch), cudaMemcpyDeviceToHost),
            "cudaMemcpy");
    return out;
  }
  void reset_events() override {
    // Fresh events: a wait on one not yet recorded in this run must not see the last run's record.
    for (auto& e : events_) {
      cudaEventDestroy(e);
      check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    }
  }

 private:
  unsigned grid(uint64_t words) const {
    uint64_t blocks = (words + 255) / 256;
    return static_cast<unsigned>(std::max<uint64_t>(1, std::min<uint64_t>(blocks, static_cast<uint64_t>(sms_) * 8)));
  }
  // A query's "not ready" is an answer, not a failure: keep it out of the thread's last error, which
  // the launch checks read.
  static bool settled(cudaError_t e) {
    if (e == cudaErrorNotReady) {
      if (cudaPeekAtLastError() == cudaErrorNotReady) cudaGetLastError();
      return false;
    }
    check(e, "query");
    return true;
  }
  // The lagging stream's turn, where the task has one: its work waits on the device behind a gate.
  void hold(int stream, const KernelTask& task) {
    if (!task.before) return;
    if (!gates_[stream]) gates_[stream] = std::make_unique<Gate>();
    gates_[stream]->hold(streams_[stream], task.before, cycles(10'000'000));  // 10 s: longer than any turn
  }
  long long cycles(uint32_t us) const { return static_cast<long long>(us) * clock_rate_khz_ / 1000; }

  std::string name_;
  int sms_ = 1, clock_rate_khz_ = 1000000;
  double peak_ = 0;
  cudaStream_t setup_;
  std::vector<cudaStream_t> streams_;
  std::vector<std::unique_ptr<Gate>> gates_;  // by stream, made when first needed
  std::vector<cudaEvent_t> events_;
  std::vector<void*> device_buffers_, host_buffers_;
  DeviceMismatches* mismatches_ = nullptr;
};

}  // namespace

bool cuda_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

std::unique_ptr<Device> make_cuda_device() {
  return std::make_unique<CudaDevice>();
}

}  // namespace memplan::replay
