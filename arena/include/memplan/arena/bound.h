// The lower bound: the weight of a set of pairwise-conflicting buffers, which must be disjoint in any valid layout.
#pragma once

#include "memplan/arena/problem.h"

namespace memplan::arena {

// Past this many buffers the bound reads the intervals alone: growing cliques visits every pair of buffers.
constexpr size_t kCliqueBoundMaxBuffers = 4000;

// The largest total (aligned) size live at one moment of the intervals (their intervals come from one legal
// interleaving), and with extra conflicts (on up to kCliqueBoundMaxBuffers buffers) also cliques grown greedily from
// the largest buffers.
uint64_t lower_bound(const Problem& problem);

}  // namespace memplan::arena
