// The CUDA back-end: one CUDA stream per device stream, cudaEvent per notification, stamp kernels that
// check and write every word, poison kernels with atomicCAS, spin kernels for jitter.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
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

struct DeviceMismatches {
  unsigned long long count;
  Mismatch first[1024];
};

__global__ void spin_kernel(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

__global__ void fill_kernel(uint32_t* words, unsigned long long count, uint32_t pattern, int value, bool stamp) {
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    words[i] = stamp ? stamp_word(value, i) : pattern;
}

// Checks all reads (recording the first bad word of each), then, after a grid-wide handshake through
// the launch boundary, the writes are done by write_kernel in the same stream.
__global__ void check_kernel(const DeviceAccess* reads, int n_reads, int node, bool sample, DeviceMismatches* out) {
  for (int r = 0; r < n_reads; ++r) {
    const DeviceAccess a = reads[r];
    unsigned long long stride = sample && a.count > 256 ? a.count / 256 : 1;
    unsigned long long n = (a.count + stride - 1) / stride;
    for (unsigned long long k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
      unsigned long long i = k * stride;
      uint32_t want = stamp_word(a.value, i);
      uint32_t got = reinterpret_cast<volatile uint32_t*>(a.words)[i];
      if (got != want) {
        unsigned long long slot = atomicAdd(&out->count, 1ull);
        if (slot < 1024) out->first[slot] = Mismatch{node, a.value, i, want, got};
      }
    }
  }
}

__global__ void write_kernel(const DeviceAccess* writes, int n_writes) {
  for (int w = 0; w < n_writes; ++w) {
    const DeviceAccess a = writes[w];
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < a.count; i += gridDim.x * blockDim.x)
      a.words[i] = stamp_word(a.value, i);
  }
}

__global__ void poison_kernel(uint32_t* words, unsigned long long count, int value) {
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    atomicCAS(&words[i], stamp_word(value, i), kPoison);
}

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
    check(cudaHostAlloc(&mismatches_, sizeof(DeviceMismatches), cudaHostAllocMapped), "cudaHostAlloc");
    mismatches_->count = 0;
    check(cudaStreamCreateWithFlags(&setup_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~CudaDevice() override {
    cudaDeviceSynchronize();
    for (auto s : streams_) cudaStreamDestroy(s);
    for (auto e : events_) cudaEventDestroy(e);
    for (auto p : device_buffers_) cudaFree(p);
    for (auto p : host_buffers_) cudaFreeHost(p);
    for (auto p : args_) cudaFree(p);
    cudaFreeHost(mismatches_);
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
    if (task.delay_us) spin_kernel<<<1, 1, 0, s>>>(static_cast<long long>(task.delay_us) * clock_rate_khz_ / 1000);
    std::vector<DeviceAccess> host;
    uint64_t words = 1;
    for (const auto* list : {&task.early, &task.reads, &task.writes})
      for (const Access& a : *list) {
        host.push_back({a.value, a.words, a.count});
        words = std::max(words, a.count);
      }
    DeviceAccess* d = upload(host, s);
    const int n_early = static_cast<int>(task.early.size()), n_reads = static_cast<int>(task.reads.size());
    if (n_early) write_kernel<<<grid(words), 256, 0, s>>>(d, n_early);
    if (n_reads) check_kernel<<<grid(words), 256, 0, s>>>(d + n_early, n_reads, task.node, task.sample, mismatches_);
    if (!task.writes.empty()) write_kernel<<<grid(words), 256, 0, s>>>(d + n_early + n_reads, static_cast<int>(task.writes.size()));
    check(cudaGetLastError(), "kernel launch");
  }
  void poison(int stream, const Access& region, uint32_t delay_us) override {
    cudaStream_t s = streams_[stream];
    if (delay_us) spin_kernel<<<1, 1, 0, s>>>(static_cast<long long>(delay_us) * clock_rate_khz_ / 1000);
    poison_kernel<<<grid(region.count), 256, 0, s>>>(region.words, region.count, region.value);
  }
  void record(int stream, int event) override {
    if (stream < 0) {
      // A host stream's work is done: record on an idle stream so the event completes at once.
      check(cudaEventRecord(events_[event], setup_), "cudaEventRecord");
    } else {
      check(cudaEventRecord(events_[event], streams_[stream]), "cudaEventRecord");
    }
  }
  void wait(int stream, int event) override { check(cudaStreamWaitEvent(streams_[stream], events_[event], 0), "cudaStreamWaitEvent"); }
  void host_wait(int event) override { check(cudaEventSynchronize(events_[event]), "cudaEventSynchronize"); }
  void synchronize() override { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }
  std::vector<Mismatch> mismatches(uint64_t& count) override {
    synchronize();
    count = mismatches_->count;
    std::vector<Mismatch> out(mismatches_->first, mismatches_->first + std::min<unsigned long long>(count, 1024));
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
  // Kernel arguments live in device memory for the whole run (freed at the end).
  DeviceAccess* upload(const std::vector<DeviceAccess>& host, cudaStream_t s) {
    void* d = nullptr;
    size_t bytes = std::max<size_t>(1, host.size()) * sizeof(DeviceAccess);
    check(cudaMalloc(&d, bytes), "cudaMalloc");
    args_.push_back(d);
    check(cudaMemcpyAsync(d, host.data(), host.size() * sizeof(DeviceAccess), cudaMemcpyHostToDevice, s), "cudaMemcpyAsync");
    return static_cast<DeviceAccess*>(d);
  }

  std::string name_;
  int sms_ = 1, clock_rate_khz_ = 1000000;
  double peak_ = 0;
  cudaStream_t setup_;
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> events_;
  std::vector<void*> device_buffers_, host_buffers_, args_;
  DeviceMismatches* mismatches_ = nullptr;
};

}  // namespace

bool cuda_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

std::unique_ptr<Device> make_cuda_device() { return std::make_unique<CudaDevice>(); }

}  // namespace memplan::replay
