#include "memplan/ordered_parts.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace memplan {

void make_parts_in_order(size_t count, int threads, size_t ahead, const std::function<std::string(size_t)>& make,
                         const std::function<void(std::string&)>& out, const std::function<bool()>& helpers_pause) {
  std::mutex mutex;
  std::condition_variable changed;
  size_t next_part = 0, next_out = 0;
  bool handing_on = false;  // a thread is calling out(): the others leave what they made for it
  std::exception_ptr error;
  std::vector<std::optional<std::string>> made(count);
  ahead = std::max<size_t>(ahead, 1);
  auto work = [&](bool helper) {
    for (;;) {
      size_t i = 0;
      {
        std::unique_lock<std::mutex> lock(mutex);
        auto may_take = [&] { return error || next_part >= count || next_part < next_out + ahead; };
        if (helper && helpers_pause)
          while (!(error || next_part >= count) && (helpers_pause() || !may_take()))
            changed.wait_for(lock, std::chrono::milliseconds(5));
        else
          changed.wait(lock, may_take);
        if (error || next_part >= count) return;
        i = next_part++;
      }
      std::string text;
      try {
        text = make(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
        changed.notify_all();
        return;
      }
      std::unique_lock<std::mutex> lock(mutex);
      made[i] = std::move(text);
      if (handing_on) continue;  // (the thread handing on takes it when its turn comes)
      handing_on = true;
      while (!error && next_out < count && made[next_out]) {
        std::string part = std::move(*made[next_out]);
        made[next_out].reset();
        lock.unlock();
        try {
          out(part);
        } catch (...) {
          lock.lock();
          if (!error) error = std::current_exception();
          break;
        }
        lock.lock();
        ++next_out;
        changed.notify_all();
      }
      handing_on = false;
      changed.notify_all();
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) helpers.emplace_back(work, true);
  work(false);
  for (std::thread& t : helpers) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace memplan
