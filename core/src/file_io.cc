#include "memplan/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <random>

#include "memplan/error.h"

namespace memplan {
namespace {

std::atomic<uint64_t> max_bytes{[] {
  const char* env = std::getenv("MEMPLAN_MAX_INPUT_BYTES");
  char* end = nullptr;
  const unsigned long long v = env ? std::strtoull(env, &end, 10) : 0;
  return env && end && *end == '\0' && v > 0 ? static_cast<uint64_t>(v) : uint64_t{2} << 30;
}()};

std::string too_big(uint64_t limit) {
  return "is larger than " + std::to_string(limit) +
         " bytes, the most memplan reads from one file (set MEMPLAN_MAX_INPUT_BYTES to raise it)";
}

// Reads everything from `fd`, at most max_input_bytes().
// Reads to the end. `size_hint` (a regular file's size) lets the bytes go straight into their final string; its
// capacity keeps kReadPadding spare bytes, which lets a JSON parser read past the end without a copy (simdjson).
constexpr size_t kReadPadding = kInputPadding;
std::string read_all(int fd, const std::string& path, uint64_t size_hint = 0) {
  const uint64_t limit = max_input_bytes();
  std::string out;
  out.reserve(static_cast<size_t>(std::min(size_hint, limit)) + kReadPadding);
  out.resize(out.capacity() - kReadPadding);
  size_t got = 0;
  char probe[4096];
  for (;;) {
    // When the string is full, a small read tells the end of the file from more bytes before anything grows.
    const bool full = got == out.size();
    const ssize_t n = full ? ::read(fd, probe, sizeof probe) : ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_input(path, std::string("read error: ") + std::strerror(errno));
    if (n == 0) break;
    if (got + static_cast<uint64_t>(n) > limit) fail_input(path, too_big(limit));
    if (full) {
      out.reserve(std::max(2 * out.capacity(), got + static_cast<size_t>(n) + kReadPadding));
      out.resize(out.capacity() - kReadPadding);
      std::memcpy(out.data() + got, probe, static_cast<size_t>(n));
    }
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

// Temporary files of writes in progress, for the signal handler: fixed storage, no allocation in the handler.
constexpr int kMaxPending = 16;
char pending[kMaxPending][4096];
volatile std::sig_atomic_t pending_used[kMaxPending];

void remove_pending_and_reraise(int sig) {
  for (int i = 0; i < kMaxPending; ++i)
    if (pending_used[i]) ::unlink(pending[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_handlers_once() {
  static const bool installed = [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      sigaction(sig, nullptr, &old);
      if (old.sa_handler == SIG_DFL) std::signal(sig, remove_pending_and_reraise);
    }
    return true;
  }();
  (void)installed;
}

// Writes all of `bytes` to `fd` (a short write goes on where it stopped); errors name `target`.
void write_all(int fd, std::string_view bytes, const std::string& target, const char* failed) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail_input(target, std::string(failed) + ": " + std::strerror(errno));
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// A device or pipe (-o /dev/null, -o >(gzip > f)): written to in place, never replaced or written beside.
bool written_in_place(const std::string& target) {
  struct stat st {};
  return ::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

// The directory an output's temporary files go to: the target's own.
std::string directory_of(const std::filesystem::path& target) {
  return target.has_parent_path() ? target.parent_path().string() : ".";
}

}  // namespace

void check_output_path(const std::string& target) {
  if (target == "-" || written_in_place(target)) return;
  std::error_code ec;
  if (target.empty() || target.back() == '/' || std::filesystem::is_directory(target, ec))
    fail_input(target, "is a directory; name a file to write (a path inside it)");
  const std::string dir = directory_of(std::filesystem::path(target));
  if (!std::filesystem::is_directory(dir, ec))
    fail_input(target, "cannot write: the directory '" + dir + "' does not exist");
}

OutputFile::OutputFile(const std::string& target) : target_(target) {
  check_output_path(target);
  // (Renaming over a device or pipe would put a regular file where it was.)
  if (written_in_place(target)) {
    direct_ = true;
    slot_ = kMaxPending;
    fd_ = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0) fail_input(target, std::string("cannot write: ") + std::strerror(errno));
    return;
  }
  install_handlers_once();
  std::filesystem::path p(target);
  const std::string dir = directory_of(p);
  std::string pattern = dir + "/." + p.filename().string() + ".tmp-XXXXXX";
  if (pattern.size() >= sizeof pending[0]) fail_input(target, "path too long");
  for (slot_ = 0; slot_ < kMaxPending && pending_used[slot_]; ++slot_) {
  }
  if (slot_ == kMaxPending) fail_input(target, "too many outputs at once");
  std::memcpy(pending[slot_], pattern.c_str(), pattern.size() + 1);
  // An unnamed file in the target's directory: nothing is left behind if the process dies while writing
  // (even by SIGKILL); it gets a name only when complete (commit).
  path_ = pattern;
  fd_ = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd_ >= 0) {
    anonymous_ = true;
    pending[slot_][0] = '\0';  // the slot is taken; nothing to remove yet
    pending_used[slot_] = 1;
    return;
  }
  // Where the file system has no unnamed files: O_CREAT | O_EXCL with a random name, so no planted file or
  // link is followed, removed on errors and signals.
  fd_ = ::mkstemp(pending[slot_]);
  if (fd_ < 0) {
    const int err = errno;
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      fail_input(target, "cannot write: the directory '" + dir + "' does not exist");
    fail_input(target, std::string("cannot write: ") + std::strerror(err));
  }
  pending_used[slot_] = 1;
  path_ = pending[slot_];
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (slot_ < kMaxPending && pending_used[slot_]) {
    if (pending[slot_][0]) ::unlink(pending[slot_]);
    pending_used[slot_] = 0;
  }
}

void OutputFile::append(std::string_view bytes) {
  write_all(fd_, bytes, target_, "write failed");
  appended(bytes.size());
}

void OutputFile::appended(uint64_t n) {
  written_ += n;
  // The disk starts writing what is here while more comes, so that finish()'s fsync waits for the last pieces only
  // (a 100k-node plan is 80 MB; its fsync alone took 20-25 ms). Only a hint: fsync still decides and reports.
#ifdef SYNC_FILE_RANGE_WRITE
  constexpr uint64_t kFlushBytes = 8 << 20;
  if (!direct_ && written_ - flushing_from_ >= kFlushBytes) {
    (void)::sync_file_range(fd_, static_cast<off_t>(flushing_from_), static_cast<off_t>(written_ - flushing_from_),
                            SYNC_FILE_RANGE_WRITE);
    flushing_from_ = written_;
  }
#endif
}

uint64_t OutputFile::append_copy(int from, uint64_t at, uint64_t n) {
  uint64_t copied = 0;
  while (copied < n) {
    loff_t in = static_cast<loff_t>(at + copied);
    const ssize_t k = ::copy_file_range(from, &in, fd_, nullptr, n - copied, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;  // (EXDEV, ENOSYS, EINVAL...: the caller writes the rest)
    copied += static_cast<uint64_t>(k);
    appended(static_cast<uint64_t>(k));
  }
  return copied;
}

SpillFile::SpillFile(const std::string& target, OutputFile* destination) : target_(target), destination_(destination) {
  if (written_in_place(target)) return;  // (nothing set aside: the caller waits)
  std::filesystem::path p(target);
  const std::string dir = directory_of(p);
  fd_ = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd_ >= 0) return;
  // Where the file system has no unnamed files: a random name, removed at once (the open file stays).
  std::string name = dir + "/." + p.filename().string() + ".spill-XXXXXX";
  fd_ = ::mkstemp(name.data());
  if (fd_ >= 0) ::unlink(name.c_str());
}

SpillFile::~SpillFile() {
  if (fd_ >= 0) ::close(fd_);
}

void SpillFile::append(std::string_view bytes) {
  write_all(fd_, bytes, target_, "write failed (setting text aside)");
  written_ += bytes.size();
}

void SpillFile::hand_on(const std::function<void(std::string_view)>& out) {
  constexpr uint64_t kBlock = 4 << 20;
  std::string block;
  bool in_kernel = destination_ != nullptr;
  for (uint64_t at = 0; at < written_;) {
    const uint64_t want = std::min<uint64_t>(kBlock, written_ - at);
    uint64_t n = in_kernel ? destination_->append_copy(fd_, at, want) : 0;
    if (n == 0) {  // (where the kernel cannot copy, this block and the rest go through a buffer)
      in_kernel = false;
      if (block.empty()) block.resize(static_cast<size_t>(std::min<uint64_t>(written_, kBlock)));
      const ssize_t k = ::pread(fd_, block.data(), static_cast<size_t>(want), static_cast<off_t>(at));
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) fail_input(target_, std::string("read failed (text set aside): ") + std::strerror(errno));
      out(std::string_view(block.data(), static_cast<size_t>(k)));
      n = static_cast<uint64_t>(k);
    }
#ifdef FALLOC_FL_PUNCH_HOLE
    // The pages handed on are given back as the copy goes: the target's pages, written next, take them instead of
    // fresh memory (a 1M-node plan sets 700 MB aside, and fresh memory is dear on a VM). Only a hint.
    (void)::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(at), static_cast<off_t>(n));
#endif
    at += n;
  }
  if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0)
    fail_input(target_, std::string("write failed (setting text aside): ") + std::strerror(errno));
  written_ = 0;
}

void OutputFile::finish() {
  if (direct_) return;
  // The file gets the permissions a plain create would give (mkstemp makes it 0600).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
  if (::fsync(fd_) != 0 && errno != EINVAL) fail_input(target_, std::string("write failed: ") + std::strerror(errno));
}

void OutputFile::commit() {
  if (direct_) {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail_input(target_, std::string("write failed: ") + std::strerror(errno));
    return;
  }
  if (anonymous_) {
    // Link the unnamed file under a fresh random name, then rename that over the target.
    const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
    std::random_device random;
    for (int attempt = 0;; ++attempt) {
      std::string name = path_;
      name.replace(name.size() - 6, 6, std::to_string(random() % 900000 + 100000));
      if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
        std::memcpy(pending[slot_], name.c_str(), name.size() + 1);
        path_ = name;
        break;
      }
      if (errno != EEXIST || attempt > 100) fail_input(target_, std::string("cannot write: ") + std::strerror(errno));
    }
  }
  if (::close(fd_) != 0) {
    fd_ = -1;
    fail_input(target_, std::string("write failed: ") + std::strerror(errno));
  }
  fd_ = -1;
  if (std::rename(path_.c_str(), target_.c_str()) != 0)
    fail_input(target_, std::string("cannot replace: ") + std::strerror(errno));
  pending_used[slot_] = 0;
}

uint64_t max_input_bytes() {
  return max_bytes.load();
}
void set_max_input_bytes(uint64_t bytes) {
  max_bytes.store(bytes);
}

InputFile::InputFile(const std::string& path) {
  if (path.empty()) fail_input("''", "an empty path; name a file (an unset variable in a script?)");
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd_ < 0) fail_input(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    fail_input(path, std::string("cannot open: ") + std::strerror(err));
  }
  std::string fault;
  if (S_ISDIR(st.st_mode)) fault = "is a directory, not a file";
  // Regular files and pipes (<(...), /dev/stdin); not devices: /dev/zero would never end.
  else if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    fault = "is not a regular file (a device or socket); give a file";
  else if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_input_bytes())
    fault = too_big(max_input_bytes());
  if (!fault.empty()) {
    ::close(fd_);
    fail_input(path, fault);
  }
  regular_ = S_ISREG(st.st_mode);
  size_ = regular_ ? static_cast<uint64_t>(st.st_size) : 0;
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
}

InputFile::~InputFile() {
  ::close(fd_);
}

std::string read_file(const std::string& path) {
  if (path == "-") {
    // stdin can be read once; callers that read their input twice (hash, then parse) get the same bytes.
    static std::optional<std::string> stdin_bytes;
    if (!stdin_bytes) {
      if (isatty(STDIN_FILENO))
        fail_input("-", "stdin is a terminal; pipe a file in (memplan ... - < FILE) or name it");
      stdin_bytes = read_all(STDIN_FILENO, "-");
    }
    return *stdin_bytes;
  }
  InputFile file(path);
  return read_all(file.fd(), path, file.size());
}

InputText::InputText(const std::string& path) {
  if (path != "-") {
    InputFile file(path);
    if (file.regular() && file.size() > 0) {
      // Zero pages first, then the file over their start: the bytes past its end read as zeros.
      const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
      const size_t size = static_cast<size_t>(file.size());
      map_bytes_ = (size + kInputPadding + page - 1) / page * page;
      map_ = ::mmap(nullptr, map_bytes_, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (map_ == MAP_FAILED) fail_input(path, std::string("cannot map: ") + std::strerror(errno));
      if (::mmap(map_, size, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, file.fd(), 0) == MAP_FAILED) {
        const int err = errno;
        ::munmap(map_, map_bytes_);
        map_ = nullptr;
        fail_input(path, std::string("cannot map: ") + std::strerror(err));
      }
      data_ = static_cast<const char*>(map_);
      size_ = size;
      return;
    }
  }
  read_ = read_file(path);
  if (read_.capacity() - read_.size() < kInputPadding) read_.reserve(read_.size() + kInputPadding);
  data_ = read_.data();
  size_ = read_.size();
}

char* InputText::writable() {
  if (map_ && ::mprotect(map_, map_bytes_, PROT_READ | PROT_WRITE) != 0)
    fail_input("(input)", std::string("cannot make a private copy writable: ") + std::strerror(errno));
  return map_ ? static_cast<char*>(map_) : read_.data();
}

InputText::~InputText() {
  if (map_) ::munmap(map_, map_bytes_);
}

std::string read_file_head(const std::string& path, size_t n) {
  if (path == "-") return read_file(path);
  InputFile file(path);
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(file.fd(), out.data() + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail_input(path, std::string("read error: ") + std::strerror(errno));
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return out;
}

void read_file_in_pieces(const std::string& path, const std::function<void(const char*, size_t)>& piece) {
  if (path == "-") {
    const std::string bytes = read_file(path);
    piece(bytes.data(), bytes.size());
    return;
  }
  InputFile file(path);
  const uint64_t limit = max_input_bytes();
  std::vector<char> buf(1 << 20);
  uint64_t total = 0;
  for (;;) {
    const ssize_t n = ::read(file.fd(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_input(path, std::string("read error: ") + std::strerror(errno));
    if (n == 0) return;
    total += static_cast<uint64_t>(n);
    if (total > limit) fail_input(path, too_big(limit));
    piece(buf.data(), static_cast<size_t>(n));
  }
}

void write_files_atomically(const std::vector<std::pair<std::string, std::vector<std::string_view>>>& files) {
  std::vector<std::unique_ptr<OutputFile>> temps;
  const std::vector<std::string_view>* to_stdout = nullptr;
  for (const auto& [path, pieces] : files) {
    if (path == "-") {
      to_stdout = &pieces;
      continue;
    }
    temps.push_back(std::make_unique<OutputFile>(path));
    // Small pieces are gathered into one write: corrupt's edits of a 40k-value in-place chain are 80k pieces, and a
    // write each took 0.6 s.
    constexpr size_t kSmall = 64 << 10;
    std::string gathered;
    for (std::string_view piece : pieces) {
      if (piece.size() < kSmall && gathered.size() + piece.size() <= 16 * kSmall) {
        gathered += piece;
        continue;
      }
      temps.back()->append(gathered);
      gathered.clear();
      if (piece.size() < kSmall)
        gathered += piece;
      else
        temps.back()->append(piece);
    }
    temps.back()->append(gathered);
    temps.back()->finish();
  }
  for (auto& t : temps) t->commit();
  if (to_stdout) {
    // Around any filter on std::cout: this is file content, byte for byte.
    std::cout.flush();
    for (std::string_view piece : *to_stdout) std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
  }
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::pair<std::string, std::vector<std::string_view>>> pieces;
  for (const auto& [path, content] : files) pieces.push_back({path, {content}});
  write_files_atomically(pieces);
}

void write_file_atomically(const std::string& path, const std::string& content) {
  write_files_atomically({{path, content}});
}

void write_pieces_atomically(const std::string& path, const std::vector<std::string_view>& pieces) {
  write_files_atomically({{path, pieces}});
}

}  // namespace memplan
