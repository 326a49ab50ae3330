// The arena problem's own methods, and the size check every algorithm relies on.
#include "memplan/arena/problem.h"

#include <algorithm>

#include "memplan/error.h"
#include "memplan/text_escape.h"

namespace memplan::arena {

uint64_t aligned_size(const Buffer& b) {
  uint64_t a = std::max<uint64_t>(1, b.alignment);
  return (b.size + a - 1) / a * a;
}

bool Problem::intervals_only() const {
  return std::all_of(extra_conflicts.begin(), extra_conflicts.end(), [](const auto& c) { return c.empty(); });
}

bool Problem::conflict(size_t i, size_t j) const {
  const Buffer &a = buffers[i], &b = buffers[j];
  if (a.lower < b.upper && b.lower < a.upper) return true;
  if (i < extra_conflicts.size() &&
      std::binary_search(extra_conflicts[i].begin(), extra_conflicts[i].end(), static_cast<int>(j)))
    return true;
  return false;
}

// Every sum of sizes and every offset below fits in 63 bits when the buffers' aligned sizes together do: checked
// once, here, for the layout's problems and `memplan solve`'s CSV alike.
void check_total_size(const Problem& p) {
  constexpr uint64_t kMax = uint64_t{1} << 62;
  uint64_t total = 0;
  for (const Buffer& b : p.buffers) {
    const uint64_t a = std::max<uint64_t>(1, b.alignment);
    if (b.size > kMax || a > kMax || aligned_size(b) > kMax - total)
      throw Error(ExitCode::kBadInput,
                  "the buffers to place add up to more than 2^62 bytes (4 EiB) at buffer '" + terminal_text(b.id) +
                      "' of " + std::to_string(b.size) +
                      " bytes: no memory is that large, so a size is wrong (a shape computed from hostile or "
                      "mistaken input?)");
    total += aligned_size(b);
  }
}

}  // namespace memplan::arena
