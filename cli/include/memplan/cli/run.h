// The memplan command line as a function, for main() and the fuzz targets (fuzz/).
#pragma once

#include <string>
#include <vector>

namespace memplan::cli {

// Runs one command (`args` without the program name) and returns its exit code (see ExitCode); messages go to
// stdout and stderr as the executable prints them.
// `allocator` names the allocator the executable was linked with, for --version.
int run(const std::vector<std::string>& args, const std::string& allocator = "glibc malloc");

// How many commands run() has ended with "internal error" (a bug in memplan, whatever the input): the fuzz
// targets' oracle.
int internal_errors();

}  // namespace memplan::cli
