// The memplan command line as a function, for main() and the fuzz targets (fuzz/).
#pragma once

#include <string>
#include <vector>

namespace memplan::cli {

// Runs one command (`args` without the program name) and returns its exit code (see ExitCode); messages go to
// stdout and stderr as the executable prints them.
// `allocator` names the allocator the executable was linked with, for --version.
int run(const std::vector<std::string>& args, const std::string& allocator = "glibc malloc");

// Says that the process ends when run() returns (main() says so; the fuzz targets, which call run() again and again,
// do not): a command may then leave its large results for the exit to reclaim (leave_to_exit, cli/common.h).
void set_process_ends_after_run(bool ends);

// How many commands run() has ended with "internal error" (a bug in memplan, whatever the input): the fuzz
// targets' oracle.
int internal_errors();

}  // namespace memplan::cli
