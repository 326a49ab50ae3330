#include "memplan/isolated.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <stdexcept>
#include <utility>

#include "memplan/error.h"
#include "memplan/progress.h"

// Provided by the sanitizers' runtime when the build has one; null otherwise.
extern "C" __attribute__((weak)) void __sanitizer_set_death_callback(void (*callback)(void));

namespace memplan {
namespace {

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// The child's reply: one status byte ('O' result, 'E' Error, 'M' out of memory, 'X' other exception), the exit code
// for 'E', then the payload (the result or the message) up to the end of the pipe.
void reply(int fd, char status, int code, const std::string& payload) {
  std::string head(1, status);
  head.append(reinterpret_cast<const char*>(&code), sizeof code);
  (void)(write_all(fd, head.data(), head.size()) && write_all(fd, payload.data(), payload.size()));
}

// A positive number from the environment, or 0.
unsigned long long env_number(const char* name) {
  const char* text = std::getenv(name);
  if (!text) return 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  return end && end != text && *end == '\0' ? v : 0;
}

}  // namespace

namespace {
bool g_in_isolated_child = false;
int g_child_reply_fd = -1;

// The child's new-handler: an allocation that fails under the memory limit ends the child with the out-of-memory
// reply, wherever it happens. Thrown as bad_alloc it would become an abort ("crashed (Aborted)") wherever it meets a
// noexcept function or a destructor, as it does inside libonnx. Nothing here allocates.
void out_of_memory_in_child() {
  char head[1 + sizeof(int)] = {'M'};  // (exit code 0)
  (void)write_all(g_child_reply_fd, head, sizeof head);
  ::_exit(0);
}
}  // namespace

bool in_isolated_child() {
  return g_in_isolated_child;
}

unsigned long long physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<unsigned long long>(pages) * static_cast<unsigned long long>(page) : 0;
}

unsigned long long default_isolation_memory() {
  if (const unsigned long long mb = env_number("MEMPLAN_ISOLATION_MEMORY_MB")) return mb << 20;
  return std::max(physical_memory_bytes() / 2, 8ULL << 30);
}

namespace {

unsigned long long memory_limit(const IsolationLimits& limits) {
  if (const unsigned long long mb = env_number("MEMPLAN_ISOLATION_MEMORY_MB")) return mb << 20;
  return limits.memory_bytes ? limits.memory_bytes : default_isolation_memory();
}

double cpu_limit(const IsolationLimits& limits) {
  const unsigned long long s = env_number("MEMPLAN_ISOLATION_CPU_SECONDS");
  return s ? static_cast<double>(s) : limits.cpu_seconds;
}

// The address space the child has already mapped (its share of the parent's, and under AddressSanitizer the
// shadow memory's reservation): the memory limit comes on top of it.
unsigned long long mapped_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  if (f) {
    if (std::fscanf(f, "%llu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return pages * static_cast<unsigned long long>(::sysconf(_SC_PAGE_SIZE));
}

}  // namespace

bool isolation_off() {
  const char* off = std::getenv("MEMPLAN_NO_ISOLATION");
  return off && std::string(off) == "1";
}

IsolatedRun start_isolated(const std::function<std::string()>& work, const std::string& file,
                           const std::string& what_runs, const IsolationLimits& limits) {
  IsolatedRun run;
  run.file_ = file;
  run.what_runs_ = what_runs;
  run.limits_ = limits;
  auto in_process = [&] {
    run.result_ = work();
    return std::move(run);
  };
  if (isolation_off()) return in_process();
  int fds[2];
  if (::pipe(fds) != 0) return in_process();  // (no pipe: run it here rather than not at all)
  std::cout.flush();
  std::cerr.flush();
  // No thread of this process is writing the status line (progress.h) as it forks: the child gets stderr unlocked.
  std::unique_lock<std::mutex> status_line = pause_progress_line();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0 && status_line.owns_lock()) status_line.unlock();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return in_process();
  }
  if (pid == 0) {
    // The child ends with the thread that started it: a memplan stopped by a signal, or one that exits without
    // collecting ORT's view, leaves no inference running on (up to its CPU limit, on a hostile model).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // (gone before the line above)
    ::close(fds[0]);
    g_in_isolated_child = true;
    // A crash in the child ends the child, reported by the parent: no handler of this process (a sanitizer's, a
    // fuzzer's) runs for it.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGXCPU}) std::signal(sig, SIG_DFL);
    // A sanitizer's own report (its allocator out of memory under the limit below) ends in its death callbacks, not
    // a signal: libFuzzer's would save the input as a crash of the fuzz target, which the parent survives.
    if (&__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(nullptr);
    struct rlimit cpu {};
    cpu.rlim_cur = static_cast<rlim_t>(cpu_limit(limits));  // SIGXCPU then, SIGKILL 5 s later
    cpu.rlim_max = cpu.rlim_cur + 5;
    ::setrlimit(RLIMIT_CPU, &cpu);
    struct rlimit as {};
    as.rlim_cur = as.rlim_max = mapped_bytes() + memory_limit(limits);
    ::setrlimit(RLIMIT_AS, &as);
    g_child_reply_fd = fds[1];
    std::set_new_handler(out_of_memory_in_child);
    try {
      reply(fds[1], 'O', 0, work());
    } catch (const Error& e) {
      reply(fds[1], 'E', static_cast<int>(e.code()), e.what());
    } catch (const std::bad_alloc&) {
      reply(fds[1], 'M', 0, "");
    } catch (const std::exception& e) {
      reply(fds[1], 'X', 0, e.what());
    }
    ::_exit(0);  // no atexit handlers, no flushing of the parent's buffers
  }
  ::close(fds[1]);
  run.pid_ = pid;
  run.fd_ = fds[0];
  return run;
}

IsolatedRun::IsolatedRun(IsolatedRun&& other) noexcept {
  *this = std::move(other);
}

IsolatedRun& IsolatedRun::operator=(IsolatedRun&& other) noexcept {
  std::swap(pid_, other.pid_);
  std::swap(fd_, other.fd_);
  std::swap(file_, other.file_);
  std::swap(what_runs_, other.what_runs_);
  std::swap(limits_, other.limits_);
  std::swap(received_, other.received_);
  std::swap(result_, other.result_);
  return *this;
}

IsolatedRun::~IsolatedRun() {
  kill_and_reap();
}

void IsolatedRun::kill_and_reap() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

std::string run_isolated(const std::function<std::string()>& work, const std::string& file,
                         const std::string& what_runs, const IsolationLimits& limits) {
  return start_isolated(work, file, what_runs, limits).finish();
}

bool IsolatedRun::read_more(const std::atomic<bool>* cancel) {
  char buf[1 << 16];
  for (;;) {
    if (cancel) {
      if (cancel->load()) return false;
      pollfd ready{fd_, POLLIN, 0};
      const int r = ::poll(&ready, 1, 20);
      if (r < 0 && errno != EINTR) return false;
      if (r <= 0) continue;
    }
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    received_.append(buf, static_cast<size_t>(n));
    return true;
  }
}

std::string IsolatedRun::finish(const std::atomic<bool>* cancel) {
  if (pid_ <= 0) return std::move(result_);
  while (read_more(cancel)) {
  }
  if (cancel && cancel->load()) {
    kill_and_reap();
    throw std::runtime_error(what_runs_ + " was cancelled");
  }
  const pid_t pid = pid_;
  const std::string& file = file_;
  const std::string& what_runs = what_runs_;
  const IsolationLimits& limits = limits_;
  ::close(fd_);
  fd_ = -1;
  pid_ = -1;
  std::string bytes = std::move(received_);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const size_t head = 1 + sizeof(int);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && bytes.size() >= head) {
    int code = 0;
    std::memcpy(&code, bytes.data() + 1, sizeof code);
    const char status_byte = bytes[0];
    // The payload where the bytes are (at 1M nodes a reply is ~30 MB: a copy would be fresh memory).
    std::string payload = std::move(bytes.erase(0, head));
    switch (status_byte) {
      case 'O':
        return payload;
      case 'E':
        throw Error(static_cast<ExitCode>(code), payload);
      case 'M':
        fail_input(file, what_runs + " ran out of memory on this model (more than " +
                             std::to_string(memory_limit(limits) >> 20) +
                             " MiB); the model is malformed or hostile (a huge dim or step in a shape computation)");
      default:
        throw std::runtime_error(payload);
    }
  }
  std::string how;
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    how = sig == SIGXCPU
              ? "ran past its CPU-time limit (" + std::to_string(static_cast<long>(cpu_limit(limits))) + " s)"
          : sig == SIGKILL ? "was killed (by the system's out-of-memory killer, or past its CPU-time limit)"
                           : std::string("crashed (") + strsignal(sig) + ")";
  } else {
    how = "stopped without a result (exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
  }
  fail_input(file, what_runs + " " + how +
                       " on this model: the model is malformed in a way memplan does not check before handing it to "
                       "libonnx. Check it with onnx.checker.check_model(model, full_check=True)");
}

}  // namespace memplan
