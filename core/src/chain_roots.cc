#include "memplan/chain_roots.h"

namespace memplan {

std::vector<int32_t> chain_roots(const std::vector<int32_t>& parent) {
  constexpr int32_t kUnknown = -3, kOnPath = -4;
  const auto n = static_cast<int32_t>(parent.size());
  std::vector<int32_t> roots(parent.size(), kUnknown);
  std::vector<int32_t> path;
  for (int32_t start = 0; start < n; ++start) {
    if (roots[start] != kUnknown) continue;
    // Walk up to a known root, a chain end, or an index already on this walk (a cycle).
    path.clear();
    int32_t v = start, root = kOnCycle;
    while (true) {
      if (roots[v] == kOnPath) break;  // a cycle: everything on the walk leads into it
      if (roots[v] != kUnknown) {
        root = roots[v];
        break;
      }
      roots[v] = kOnPath;
      path.push_back(v);
      const int32_t p = parent[v];
      if (p < 0 || p >= n) {
        root = v;
        break;
      }
      v = p;
    }
    for (int32_t u : path) roots[u] = root;
  }
  return roots;
}

}  // namespace memplan
