// Whole-file reads and atomic writes: an output file is either complete or absent, never partial.
#pragma once

#include <string>

namespace memplan {

// Reads a whole file ("-": stdin, read once and kept); throws Error(kBadInput) naming the file when it
// cannot be read.
std::string read_file(const std::string& path);

// Writes to a temporary file beside `path`, then renames it over `path`. "-" writes to stdout.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace memplan
