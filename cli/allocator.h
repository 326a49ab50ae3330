// The memplan executable's allocator, tuned for the machines it runs on (allocator.cc).
#pragma once

#include <string>

namespace memplan::cli {

// Sets the allocator up before the first large allocation (call first in main) and returns its name and version
// ("mimalloc 2.0.9", or "glibc malloc" in a build without mimalloc).
std::string configure_allocator();

}  // namespace memplan::cli
