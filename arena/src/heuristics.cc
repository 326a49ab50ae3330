// The heuristics: buffers placed one by one in an order, each in the best-fitting gap (ORT's memory pattern in
// allocation order, TFLite's greedy-by-size in decreasing size).
#include "memplan/arena/heuristics.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>
#include <set>

namespace memplan::arena {

namespace {

// Sorts (start, end) ranges by start. The order of equal starts does not matter to the gap search below (after the
// first, the gap before the others is closed: each range ends after it starts). A buffer conflicting with thousands
// (the iopddl traces) sorts thousands per query: there a radix sort, over the bytes in which the starts differ,
// takes less than half of std::sort's time.
void sort_by_start(std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                   std::vector<std::pair<uint64_t, uint64_t>>& scratch) {
  constexpr size_t kRadixFrom = 256;
  if (ranges.size() < kRadixFrom) {
    std::sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return;
  }
  uint64_t differ = 0;
  for (const auto& r : ranges) differ |= r.first ^ ranges.front().first;
  scratch.resize(ranges.size());
  for (int shift = 0; shift < 64; shift += 8) {
    if (((differ >> shift) & 0xff) == 0) continue;
    size_t at[257] = {};
    for (const auto& r : ranges) ++at[((r.first >> shift) & 0xff) + 1];
    for (size_t d = 1; d < 257; ++d) at[d] += at[d - 1];
    for (const auto& r : ranges) scratch[at[(r.first >> shift) & 0xff]++] = r;
    ranges.swap(scratch);
  }
}

// Buffers placed so far, queryable by time overlap: levels of time buckets, each level's buckets 16 times as wide as
// the one below's, the finest about one per 4 buffers. A buffer sits in the finest level where it spans fewer than 16
// buckets, listed in each; a query visits, on every level, the buckets its own span covers. So a query looks at the
// buffers near it in time, never at all of them: with one level of at most 4,096 buckets (before), each bucket of a
// 1M-node graph's arena held ~200 buffers, every one checked by every query landing there (quadratic in the limit,
// though still only 0.17 s for that arena's best fit).
class PlacedIndex {
 public:
  explicit PlacedIndex(const Problem& p) : p_(p), stamp_(p.buffers.size(), 0) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const Buffer& b : p.buffers) lo = std::min(lo, b.lower), hi = std::max(hi, b.upper);
    if (hi <= lo) lo = 0, hi = 1;  // (no buffer that lives: nothing is added or asked for)
    lo_ = lo;
    const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    const uint64_t count = std::clamp<uint64_t>(p.buffers.size() / 4, 1, kMostBuckets);
    uint64_t width = std::max<uint64_t>(1, range / count + (range % count != 0));
    for (;;) {
      Level& level = levels_.emplace_back();
      level.width = width;
      const uint64_t buckets = range / width + 1;
      level.buckets.resize(buckets);
      if (buckets <= kLongSpan || width > UINT64_MAX / kLongSpan) break;  // any span fits here
      width *= kLongSpan;
    }
  }
  void add(size_t i) {
    const Buffer& b = p_.buffers[i];
    for (size_t l = 0; l < levels_.size(); ++l) {
      Level& level = levels_[l];
      const size_t first = level.bucket(b.lower, lo_), last = level.bucket(b.upper - 1, lo_);
      if (last - first >= kLongSpan && l + 1 < levels_.size()) continue;  // (the top level takes any span)
      for (size_t k = first; k <= last; ++k) {
        if (level.buckets[k].empty()) level.filled.insert(k);
        level.buckets[k].push_back(static_cast<int>(i));
      }
      return;
    }
  }
  // Placed buffers conflicting with i (time overlap or extra conflict), as (offset, end) ranges.
  template <typename Fn>
  void for_each_conflict(size_t i, const std::vector<char>& placed, Fn&& fn) {
    const Buffer& b = p_.buffers[i];
    ++generation_;
    for (const Level& level : levels_) {
      auto visit = [&](size_t k) {
        for (int j : level.buckets[k]) {
          if (stamp_[j] == generation_) continue;  // already reported
          const Buffer& o = p_.buffers[j];
          if (o.lower < b.upper && b.lower < o.upper) {
            stamp_[j] = generation_;
            fn(static_cast<size_t>(j));
          }
        }
      };
      const size_t first = level.bucket(b.lower, lo_), last = level.bucket(b.upper - 1, lo_);
      if (last - first < kLongSpan) {
        for (size_t k = first; k <= last; ++k) visit(k);
      } else {
        // A long query (a weight's whole run) visits only the buckets that hold something: in an arena of weights,
        // none, where walking every empty bucket per weight was most of the layout's time.
        for (auto it = level.filled.lower_bound(first); it != level.filled.end() && *it <= last; ++it) visit(*it);
      }
    }
    if (i < p_.extra_conflicts.size())
      for (int j : p_.extra_conflicts[i])
        if (placed[j] && stamp_[j] != generation_) {
          stamp_[j] = generation_;
          fn(static_cast<size_t>(j));
        }
  }

 private:
  static constexpr uint64_t kLongSpan = 16;
  static constexpr uint64_t kMostBuckets = uint64_t{1} << 22;
  struct Level {
    uint64_t width = 1;
    std::vector<std::vector<int>> buckets;
    std::set<size_t> filled;  // buckets holding a buffer
    size_t bucket(int64_t t, int64_t lo) const {
      return t <= lo ? 0 : static_cast<size_t>((static_cast<uint64_t>(t) - static_cast<uint64_t>(lo)) / width);
    }
  };
  const Problem& p_;
  int64_t lo_ = 0;
  std::vector<Level> levels_;  // finest first
  std::vector<uint64_t> stamp_;
  uint64_t generation_ = 0;
};

}  // namespace

// Places buffers in `order`, each in the best-fitting gap among the conflicting placed buffers (the one
// wasting least; ties to the lowest offset), or on top. With `top_gap` the room between the highest conflicting
// buffer and the peak so far is one of the gaps, as in ORT's MemPatternPlanner. ORT's memory pattern is this rule in
// allocation order; TFLite's greedy-by-size is it in decreasing size.
Solution place_in_order(const Problem& p, const std::vector<size_t>& order, const char* name, bool top_gap) {
  const size_t n = p.buffers.size();
  Solution s;
  s.offsets.assign(n, 0);
  std::vector<char> placed(n, 0);  // char, not bool: read once per extra conflict
  PlacedIndex index(p);
  // Buffers live over the whole run (weights) conflict with every other: rather than visit each of them per
  // query, keep the bytes they occupy as merged ranges (one range for an arena of weights: a prefix sum). Placed by
  // start (best fit; greedy-size on equal sizes), so is every buffer that lives to the end (graph outputs): each
  // later one starts no earlier than it.
  const bool by_lower = std::is_sorted(order.begin(), order.end(),
                                       [&](size_t a, size_t b) { return p.buffers[a].lower < p.buffers[b].lower; });
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const Buffer& b : p.buffers)
    if (b.size > 0 && b.upper > b.lower) first = std::min(first, b.lower), last = std::max(last, b.upper);
  auto whole_run = [&](const Buffer& b) { return b.size > 0 && (by_lower || b.lower <= first) && b.upper >= last; };
  std::map<uint64_t, uint64_t> occupied;  // start -> end, disjoint, touching ranges merged
  std::vector<std::pair<uint64_t, uint64_t>> ranges, scratch;
  std::vector<uint64_t> sizes(n);  // aligned, computed once: read once per conflict
  for (size_t i = 0; i < n; ++i) sizes[i] = aligned_size(p.buffers[i]);
  for (size_t i : order) {
    const Buffer& b = p.buffers[i];
    uint64_t size = sizes[i], align = std::max<uint64_t>(1, b.alignment);
    ranges.clear();
    const bool lives = b.size > 0 && b.upper > b.lower;
    if (lives)
      index.for_each_conflict(i, placed, [&](size_t j) { ranges.push_back({s.offsets[j], s.offsets[j] + sizes[j]}); });
    sort_by_start(ranges, scratch);
    uint64_t current = 0, best_offset = UINT64_MAX, best_waste = UINT64_MAX;
    auto consider = [&](uint64_t start, uint64_t end) {
      uint64_t at = align_up(current, align);
      if (start >= at && start - at >= size && start - at - size < best_waste)
        best_waste = start - at - size, best_offset = at;
      current = std::max(current, end);
    };
    // The conflicting ranges in order of their start: those found, merged with the whole-run ones.
    auto w = lives ? occupied.begin() : occupied.end();
    for (auto [start, end] : ranges) {
      for (; w != occupied.end() && w->first <= start; ++w) consider(w->first, w->second);
      consider(start, end);
    }
    for (; w != occupied.end(); ++w) consider(w->first, w->second);
    // ORT's memory pattern also weighs the room between the top of the live blocks and the peak so far.
    const uint64_t top = align_up(current, align);
    if (top_gap && s.peak >= top && s.peak - top >= size && s.peak - top - size < best_waste) best_offset = top;
    if (best_offset == UINT64_MAX) best_offset = top;
    s.offsets[i] = best_offset;
    s.peak = std::max(s.peak, best_offset + size);
    placed[i] = 1;
    if (lives && whole_run(b)) {
      uint64_t start = best_offset, end = best_offset + size;
      auto next = occupied.lower_bound(start);
      if (next != occupied.begin() && std::prev(next)->second == start) {
        start = std::prev(next)->first;
        occupied.erase(std::prev(next));
      }
      if (next != occupied.end() && next->first == end) {
        end = next->second;
        occupied.erase(next);
      }
      occupied.emplace(start, end);
    } else if (lives) {
      index.add(i);
    }
  }
  s.algorithm = name;
  return s;
}

Solution best_fit(const Problem& p) {
  std::vector<size_t> order(p.buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return p.buffers[a].lower < p.buffers[b].lower; });
  return place_in_order(p, order, "best-fit", /*top_gap=*/true);
}

Solution greedy_size(const Problem& p) {
  // The keys computed once, not in each comparison (a division each: a third of the sort's time at 1M buffers).
  struct Key {
    uint64_t size, length;
    int64_t lower;
  };
  std::vector<Key> keys(p.buffers.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const Buffer& b = p.buffers[i];
    keys[i] = {aligned_size(b), lifetime(b), b.lower};
  }
  std::vector<size_t> order(p.buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Key &ka = keys[a], &kb = keys[b];
    if (ka.size != kb.size) return ka.size > kb.size;
    if (ka.length != kb.length) return ka.length > kb.length;
    return ka.lower < kb.lower;
  });
  return place_in_order(p, order, "greedy-size", /*top_gap=*/false);
}

}  // namespace memplan::arena
