// What every fuzz target shares: a scratch directory of its own, and the memplan command line run in-process
// with the oracle every input must satisfy (a documented exit code, never "internal error").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace memplan::fuzz {

struct CliResult {
  int rc = 0;
  std::string out, err;
};

// This process's own directory under $TMPDIR (made once, removed at exit).
const std::string& scratch_dir();

// Writes `bytes` as scratch_dir()/name and returns the path.
std::string write_scratch(const std::string& name, const std::string& bytes);
std::string write_scratch(const std::string& name, const uint8_t* data, size_t size);

// Runs `memplan ARGS...` in this process, its stdout and stderr captured. Aborts (a finding) when the exit code
// is not one the README documents (0-4) or stderr says "internal error".
CliResult run_cli(const std::vector<std::string>& args);

// Aborts with a report: what the oracle saw and the command's output.
[[noreturn]] void finding(const std::string& what, const CliResult& result);

// The oracle for SVG and HTML that memplan wrote from a plan: no C0 control characters, every '<' opens a
// tag memplan itself writes (a plan string cannot add an element), and one <script> at most (the page's own).
void check_markup(const std::string& path, const CliResult& result);

// A file of the source tree (samples/...), read once.
const std::string& source_file(const std::string& relative);

}  // namespace memplan::fuzz
