// MiniMalloc's CSV: header "id,lower,upper,size" (an optional alignment column); `memplan solve` reads it and
// `memplan plan --export-problem` writes it.
#pragma once

#include <string>
#include <vector>

#include "memplan/arena/problem.h"

namespace memplan::arena {

// Throws Error(kBadInput) naming `source` and the line.
Problem read_minimalloc_csv(const std::string& text, const std::string& source);
// With `offsets`, an offset column too.
std::string write_minimalloc_csv(const Problem& problem, const std::vector<uint64_t>* offsets);

}  // namespace memplan::arena
