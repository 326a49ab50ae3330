#include "memplan/file_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "memplan/error.h"

namespace memplan {

std::string read_file(const std::string& path) {
  if (path == "-") {
    // stdin can be read once; callers that read their input twice (hash, then parse) get the same bytes.
    static std::optional<std::string> stdin_bytes;
    if (!stdin_bytes) {
      if (isatty(STDIN_FILENO))
        fail_input("-", "stdin is a terminal; pipe a file in (memplan ... - < FILE) or name it");
      std::ostringstream buffer;
      buffer << std::cin.rdbuf();
      stdin_bytes = std::move(buffer).str();
    }
    return *stdin_bytes;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail_input(path, "is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_input(path, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) fail_input(path, "read error");
  return std::move(buffer).str();
}

void write_file_atomically(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::cout << content;
    std::cout.flush();
    return;
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail_input(path, std::string("cannot write: ") + std::strerror(errno));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      fail_input(path, "write failed (disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    fail_input(path, std::string("cannot replace: ") + std::strerror(err));
  }
}

}  // namespace memplan
