// Sizes on the command line ("512MiB", "2GB", "1000") and the --max-arena budget check.
#pragma once

#include <cstdint>
#include <string>

namespace memplan::cli {

// Bytes from "1234", "64KiB", "512MiB", "2GiB", "1.5GB" (KB/MB/GB are powers of 1000). Throws Error(kUsage).
uint64_t parse_size(const std::string& text);

}  // namespace memplan::cli
