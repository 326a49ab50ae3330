// Whole-file reads with a size cap, and atomic writes: an output file is either complete or absent, never
// partial, and a command's outputs appear together or not at all.
#pragma once

#include <cstdint>
#include <string>
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

// Writes every (path, content) pair or none: each goes to an exclusive temporary file (O_EXCL, random name)
// in its target's directory, and only when all are written are they renamed into place. On an error the
// temporaries are removed and Error(kBadInput) names the target; SIGINT and SIGTERM remove them too. "-" writes
// to stdout (after the files).
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);

// One file: write_files_atomically({{path, content}}).
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace memplan
