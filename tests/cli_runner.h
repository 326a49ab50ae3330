// Running the memplan executable from a test: its exit code and what it printed.
#pragma once

#include <sys/wait.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

namespace memplan::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr together (or as the command line redirects them)
};

// Runs a shell command line as it is (for pipes and wrappers such as script(1)).
inline RunResult run_shell(const std::string& cmd) {
  RunResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `memplan ARGS` (ARGS as shell text), stderr with stdout unless with_stderr is false.
inline RunResult run(const std::string& args, bool with_stderr = true) {
  return run_shell(std::string(MEMPLAN_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

inline RunResult run_stdout(const std::string& args) {
  return run(args, false);
}

}  // namespace memplan::testing
