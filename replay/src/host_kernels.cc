// The stand-in kernels on the host: used by the CPU twin, and for host-side accesses on any device.
// Arena words are touched through atomic_ref so that a racy plan is a detected error, not undefined
// behaviour.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "device.h"
#include "stamp.h"

namespace memplan::replay {

namespace {
uint32_t load(uint32_t* w) {
  return std::atomic_ref<uint32_t>(*w).load(std::memory_order_relaxed);
}
void store(uint32_t* w, uint32_t v) {
  std::atomic_ref<uint32_t>(*w).store(v, std::memory_order_relaxed);
}
}  // namespace

void check_and_write(const KernelTask& task, MismatchSink& sink) {
  for (const Access& w : task.early)
    for (uint64_t i = 0; i < w.count; ++i) store(w.words + i, stamp_word(w.value, i));
  std::atomic_thread_fence(std::memory_order_acq_rel);
  for (const Access& r : task.reads) {
    const uint64_t stride = task.sample && r.count > 256 ? r.count / 256 : 1;
    for (uint64_t i = 0; i < r.count; i += stride) {
      uint32_t want = stamp_word(r.value, i), got = load(r.words + i);
      if (got != want) {
        sink.add({task.node, r.value, i, want, got});
        break;
      }
      if (stride > 1 && i + stride >= r.count && i != r.count - 1) i = r.count - 1 - stride;  // and the last word
    }
  }
  std::atomic_thread_fence(std::memory_order_acq_rel);
  for (const Access& w : task.writes)
    for (uint64_t i = 0; i < w.count; ++i) store(w.words + i, stamp_word(w.value, i));
}

void copy_words(const Access& from, const Access& to) {
  const uint64_t n = std::min(from.count, to.count);
  std::atomic_thread_fence(std::memory_order_acq_rel);
  for (uint64_t i = 0; i < n; ++i) store(to.words + i, load(from.words + i));
  std::atomic_thread_fence(std::memory_order_acq_rel);
}

void poison_region(const Access& region) {
  for (uint64_t i = 0; i < region.count; ++i) {
    uint32_t expected = stamp_word(region.value, i);
    std::atomic_ref<uint32_t>(region.words[i]).compare_exchange_strong(expected, kPoison, std::memory_order_relaxed);
  }
}

void check_region_written(const Access& region, int node, MismatchSink& sink) {
  if (!region.count) return;
  uint32_t got = load(region.words);
  if (got == kUnwritten) sink.add({node, region.value, 0, stamp_word(region.value, 0), got, true});
}

}  // namespace memplan::replay
