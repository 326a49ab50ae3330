// The memplan executable's allocator, tuned for the machines it runs on (allocator.cc).
#pragma once

#include <string>

namespace memplan::cli {

// Sets the allocator up before the first large allocation (call first in main) and returns its name and version
// with the page size it chose ("mimalloc 2.0.9, 2 MiB pages"), or "glibc malloc" in a build without mimalloc.
std::string configure_allocator();

// Whether `p` lies in the region of address space mimalloc takes its memory from, whose commits are made present at
// once (allocator.cc); false in a build without mimalloc, or where the region could not be mapped.
bool in_heap_region(const void* p);

}  // namespace memplan::cli
