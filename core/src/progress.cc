#include "memplan/progress.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "memplan/isolated.h"

namespace memplan {
namespace {

using Clock = std::chrono::steady_clock;
std::atomic<bool> requested{false};  // enable_progress_line()
constexpr auto kRedraw = std::chrono::milliseconds(250);
constexpr auto kExplicitHold = std::chrono::seconds(1);  // how long a line drawn by show_progress_text stays

// The status line of the process: the stages running, what is drawn, and the thread that redraws it.
class StatusLine {
 public:
  static StatusLine& instance() {
    static StatusLine line;
    return line;
  }

  void began(const std::string& stage) {
    if (!active()) return;
    std::lock_guard<std::mutex> lock(mutex_);
    stages_.emplace_back(stage, Clock::now());
    if (!ticker_.joinable()) ticker_ = std::thread([this] { run(); });
    if (show_after_ <= 0) draw_stage(Clock::now());
  }

  void ended() {
    if (!active()) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stages_.empty()) stages_.pop_back();
    erase();
  }

  void show(const std::string& text) {
    if (!active()) return;
    std::lock_guard<std::mutex> lock(mutex_);
    draw(text);
    explicit_until_ = Clock::now() + kExplicitHold;
  }

  std::unique_lock<std::mutex> pause() {
    if (!active()) return {};
    std::unique_lock<std::mutex> lock(mutex_);
    erase();
    return lock;
  }

  ~StatusLine() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      erase();
    }
    wake_.notify_all();
    if (ticker_.joinable()) ticker_.join();
  }

 private:
  StatusLine() {
    const char* forced = std::getenv("MEMPLAN_PROGRESS");
    enabled_ = forced && *forced ? std::string(forced) != "0" : ::isatty(STDERR_FILENO) == 1;
    if (const char* after = std::getenv("MEMPLAN_PROGRESS_AFTER")) show_after_ = std::strtod(after, nullptr);
  }

  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, kRedraw);
      if (!stopping_) draw_stage(Clock::now());
    }
  }

  // Not in a child forked while the line was in use: its lock may be held there by a thread the child does not have
  // (children end with _exit: this object is never destroyed in one).
  bool active() const { return enabled_ && requested && !in_isolated_child(); }

  // (with mutex_ held)
  void draw_stage(Clock::time_point now) {
    if (stages_.empty() || now < explicit_until_) return;
    const auto& [stage, since] = stages_.back();
    // Once a line has been shown, each later stage is shown at once: the line stays up while the command works.
    const std::string text = stage_progress_text(stage, std::chrono::duration<double>(now - since).count(),
                                                 shown_before_ ? 0.0 : show_after_);
    if (!text.empty()) draw(text);
  }
  void draw(const std::string& text) {
    std::fprintf(stderr, "\r%s\033[K", text.c_str());
    std::fflush(stderr);
    drawn_ = shown_before_ = true;
  }
  void erase() {
    if (!drawn_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
    explicit_until_ = {};
  }

  bool enabled_ = false;
  double show_after_ = 1.0;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread ticker_;
  bool stopping_ = false;
  bool drawn_ = false;
  bool shown_before_ = false;
  Clock::time_point explicit_until_{};
  std::vector<std::pair<std::string, Clock::time_point>> stages_;
};

}  // namespace

std::string stage_progress_text(const std::string& stage, double seconds, double show_after_seconds) {
  if (seconds < show_after_seconds) return "";
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, "%.1f s", seconds);
  return "memplan: " + stage + "... " + elapsed;
}

void enable_progress_line() {
  requested = true;
}

void progress_stage_began(const std::string& stage) {
  StatusLine::instance().began(stage);
}

void progress_stage_ended() {
  StatusLine::instance().ended();
}

void show_progress_text(const std::string& text) {
  StatusLine::instance().show(text);
}

std::unique_lock<std::mutex> pause_progress_line() {
  return StatusLine::instance().pause();
}

}  // namespace memplan
