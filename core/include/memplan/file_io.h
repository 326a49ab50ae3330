// Whole-file reads with a size cap, and atomic writes: an output file is either complete or absent, never
// partial, and a command's outputs appear together or not at all.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memplan {

// The most bytes read_file() reads from one file (default 2 GiB, the protobuf limit; MEMPLAN_MAX_INPUT_BYTES
// or set_max_input_bytes() change it). Bigger inputs fail at once instead of exhausting memory.
uint64_t max_input_bytes();
void set_max_input_bytes(uint64_t bytes);

// Reads a whole file ("-": stdin, read once and kept); throws Error(kBadInput) naming the file when it
// cannot be read, is not a regular file or pipe, or is larger than max_input_bytes().
std::string read_file(const std::string& path);

// A file opened with read_file()'s checks, for readers that stream it (pull, skip) instead of holding it whole:
// the model reader leaves weight bytes unread, the hash reads in pieces. Not "-" (stdin is read whole, once).
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  int fd() const { return fd_; }
  bool regular() const { return regular_; }  // else a pipe: skipping means reading
  uint64_t size() const { return size_; }    // of a regular file

 private:
  int fd_ = -1;
  bool regular_ = false;
  uint64_t size_ = 0;
};

// A whole input file in memory with at least kInputPadding readable bytes after its end (simdjson reads up to 64
// bytes past what it parses). A regular file is mapped, not copied (a 1M-value plan is 800 MB: reading it into a
// string cost more than parsing it); stdin and pipes are read as read_file() reads them. Same checks and cap as
// read_file(). The file must not shrink while it is open (memplan replaces files by renaming, never in place).
inline constexpr size_t kInputPadding = 64;
class InputText {
 public:
  explicit InputText(const std::string& path);
  ~InputText();
  InputText(const InputText&) = delete;
  InputText& operator=(const InputText&) = delete;
  std::string_view text() const { return {data_, size_}; }
  // The bytes made writable, for a reader that changes a few in place (a private copy: the file never changes).
  char* writable();

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;  // the mapping (file pages, then zero pages), when mapped
  size_t map_bytes_ = 0;
  std::string read_;  // the bytes, when read
};

// The first `n` bytes of a file (or all of it if shorter), to tell what it is before reading it ("-": all of stdin).
std::string read_file_head(const std::string& path, size_t n);

// Calls `piece` with the file's bytes in order, a block at a time, so that hashing a large file does not hold it;
// read_file()'s checks and cap ("-": stdin's bytes as read_file() keeps them).
void read_file_in_pieces(const std::string& path, const std::function<void(const char*, size_t)>& piece);

// Throws Error(kBadInput) naming `target` where no file can be written by that name: a directory (or a path ending in
// '/'), or a path whose directory does not exist. Commands call it before their work for what they will write; the
// writers below call it too. "-" (stdout) and devices pass.
void check_output_path(const std::string& target);

// One output file written as it is produced and given its name only when complete: the bytes go to an unnamed (or
// random-named, O_EXCL) temporary file in the target's directory, which commit() renames over the target; the
// destructor removes it otherwise, and SIGINT and SIGTERM remove it too. A device or pipe target (-o /dev/null) is
// written in place. Errors throw Error(kBadInput) naming the target.
class OutputFile {
 public:
  explicit OutputFile(const std::string& target);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void append(std::string_view bytes);
  // Appends up to `n` bytes of the file open as `from`, from offset `at`, copied inside the kernel (copy_file_range):
  // the bytes handed on from a SpillFile make no trip through this process's memory. Returns how many were copied,
  // fewer (0 included) where the kernel or file system cannot copy them (the caller writes the rest itself).
  uint64_t append_copy(int from, uint64_t at, uint64_t n);
  // Everything is written: the file gets a plain create's permissions and reaches the disk (fsync).
  void finish();
  // Gives the finished file its name, replacing what was there.
  void commit();

 private:
  void appended(uint64_t n);  // (after `n` more bytes reach the file)

  std::string target_, path_;
  bool anonymous_ = false;
  bool direct_ = false;  // the target is a device or pipe, written in place
  int slot_ = 0;
  int fd_ = -1;
  uint64_t written_ = 0, flushing_from_ = 0;  // bytes appended; where the next range handed to the disk starts
};

// Bytes set aside while an output waits for something that goes before them (a plan's values while ORT's estimate,
// which the text puts first, is still being made), kept in an unnamed temporary file in the target's directory
// rather than in memory (a 1M-node plan's values are 700 MB of text), then handed on in order. Errors throw
// Error(kBadInput) naming the target.
class SpillFile {
 public:
  // `ok()` is false where no such file can be made (or the target is a device or pipe): the caller waits instead.
  // `destination`: the file hand_on's `out` writes to, when it is one; the bytes are then copied to it inside the
  // kernel where it can (a 1M-node plan's 700 MB set aside, copied through a buffer, was most of the time after ORT's
  // estimate).
  explicit SpillFile(const std::string& target, OutputFile* destination = nullptr);
  ~SpillFile();
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;
  bool ok() const { return fd_ >= 0; }
  uint64_t size() const { return written_; }
  void append(std::string_view bytes);
  // Calls out() with every byte appended, in order, in blocks of a few MB; the file is empty afterwards.
  void hand_on(const std::function<void(std::string_view)>& out);

 private:
  std::string target_;
  OutputFile* destination_ = nullptr;
  int fd_ = -1;
  uint64_t written_ = 0;
};

// Writes every (path, content) pair or none: each goes to an exclusive temporary file (O_EXCL, random name)
// in its target's directory, and only when all are written are they renamed into place. On an error the
// temporaries are removed and Error(kBadInput) names the target; SIGINT and SIGTERM remove them too. "-" writes
// to stdout (after the files).
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);
// The same, each file's content being its pieces one after the other.
void write_files_atomically(const std::vector<std::pair<std::string, std::vector<std::string_view>>>& files);

// One file: write_files_atomically({{path, content}}).
void write_file_atomically(const std::string& path, const std::string& content);
// One file whose content is the pieces one after the other (a large output made of slices of an input and a few
// new bytes is written without being assembled first).
void write_pieces_atomically(const std::string& path, const std::vector<std::string_view>& pieces);

}  // namespace memplan
