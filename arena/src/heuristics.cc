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

// Buffers placed so far, queryable by time overlap: time buckets, each listing the buffers spanning it.
class PlacedIndex {
 public:
  explicit PlacedIndex(const Problem& p) : p_(p), stamp_(p.buffers.size(), 0) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const Buffer& b : p.buffers) lo = std::min(lo, b.lower), hi = std::max(hi, b.upper);
    if (p.buffers.empty()) lo = 0, hi = 1;
    lo_ = lo;
    size_t count = std::clamp<size_t>(p.buffers.size() / 4, 1, 4096);
    width_ = std::max<int64_t>(1, (hi - lo + static_cast<int64_t>(count) - 1) / static_cast<int64_t>(count));
    buckets_.resize(static_cast<size_t>((hi - lo) / width_ + 1));
  }
  void add(size_t i) {
    const Buffer& b = p_.buffers[i];
    // A buffer spanning many buckets (weights live for the whole run) would sit in all of them and be visited
    // once per bucket by every query: keep those in one list, scanned once per query.
    if (bucket(b.upper - 1) - bucket(b.lower) >= kLongSpan) {
      long_.push_back(static_cast<int>(i));
      return;
    }
    for (size_t k = bucket(b.lower); k <= bucket(b.upper - 1); ++k) {
      if (buckets_[k].empty()) filled_.insert(k);
      buckets_[k].push_back(static_cast<int>(i));
    }
  }
  // Placed buffers conflicting with i (time overlap or extra conflict), as (offset, end) ranges.
  template <typename Fn>
  void for_each_conflict(size_t i, const std::vector<char>& placed, Fn&& fn) {
    const Buffer& b = p_.buffers[i];
    ++generation_;
    auto visit = [&](size_t k) {
      for (int j : buckets_[k]) {
        if (stamp_[j] == generation_) continue;  // already reported
        const Buffer& o = p_.buffers[j];
        if (o.lower < b.upper && b.lower < o.upper) {
          stamp_[j] = generation_;
          fn(static_cast<size_t>(j));
        }
      }
    };
    const size_t first = bucket(b.lower), last = bucket(b.upper - 1);
    if (last - first < kLongSpan) {
      for (size_t k = first; k <= last; ++k) visit(k);
    } else {
      // A long query (a weight's whole run) visits only the buckets that hold something: in an arena of weights,
      // none, where walking all 4,096 empty buckets per weight was most of the layout's time.
      for (auto it = filled_.lower_bound(first); it != filled_.end() && *it <= last; ++it) visit(*it);
    }
    for (int j : long_) {
      const Buffer& o = p_.buffers[j];
      if (o.lower < b.upper && b.lower < o.upper) {
        stamp_[j] = generation_;
        fn(static_cast<size_t>(j));
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
  size_t bucket(int64_t t) const { return static_cast<size_t>(std::max<int64_t>(0, t - lo_) / width_); }
  static constexpr size_t kLongSpan = 16;
  const Problem& p_;
  int64_t lo_ = 0, width_ = 1;
  std::vector<std::vector<int>> buckets_;
  std::set<size_t> filled_;  // buckets holding a buffer
  std::vector<int> long_;    // buffers spanning kLongSpan buckets or more
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
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  std::vector<uint64_t> sizes(n);  // aligned, computed once: read once per conflict
  for (size_t i = 0; i < n; ++i) sizes[i] = aligned_size(p.buffers[i]);
  for (size_t i : order) {
    const Buffer& b = p.buffers[i];
    uint64_t size = sizes[i], align = std::max<uint64_t>(1, b.alignment);
    ranges.clear();
    const bool lives = b.size > 0 && b.upper > b.lower;
    if (lives)
      index.for_each_conflict(i, placed, [&](size_t j) { ranges.push_back({s.offsets[j], s.offsets[j] + sizes[j]}); });
    std::sort(ranges.begin(), ranges.end());
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
  std::vector<size_t> order(p.buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    uint64_t sa = aligned_size(p.buffers[a]), sb = aligned_size(p.buffers[b]);
    if (sa != sb) return sa > sb;
    int64_t la = p.buffers[a].upper - p.buffers[a].lower, lb = p.buffers[b].upper - p.buffers[b].lower;
    if (la != lb) return la > lb;
    return p.buffers[a].lower < p.buffers[b].lower;
  });
  return place_in_order(p, order, "greedy-size", /*top_gap=*/false);
}

}  // namespace memplan::arena
