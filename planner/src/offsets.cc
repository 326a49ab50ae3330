// Offset assignment: heuristics (ORT's best fit in allocation order, greedy by size) and an exact
// branch-and-bound over "gravity-normalised" layouts in the spirit of MiniMalloc (Moffitt, ASPLOS 2024).
#include "memplan/planner/offsets.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "memplan/error.h"
#include "memplan/file_kind.h"
#include "memplan/text_escape.h"
#include "memplan/work_budget.h"

namespace memplan::planner {

using Clock = std::chrono::steady_clock;

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::kBestFit:
      return "best-fit";
    case Algorithm::kGreedySize:
      return "greedy-size";
    case Algorithm::kExact:
      return "exact";
    case Algorithm::kAuto:
      return "auto";
  }
  return "?";
}

bool parse_algorithm(const std::string& text, Algorithm& out) {
  for (Algorithm a : {Algorithm::kBestFit, Algorithm::kGreedySize, Algorithm::kExact, Algorithm::kAuto})
    if (text == algorithm_name(a)) {
      out = a;
      return true;
    }
  return false;
}

uint64_t aligned_size(const Buffer& b) {
  uint64_t a = std::max<uint64_t>(1, b.alignment);
  return (b.size + a - 1) / a * a;
}

static uint64_t align_up(uint64_t v, uint64_t a) {
  a = std::max<uint64_t>(1, a);
  return (v + a - 1) / a * a;
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

uint64_t lower_bound(const Problem& p) {
  check_total_size(p);
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, +size / -size); ends sort before starts
  for (const Buffer& b : p.buffers) {
    if (b.upper <= b.lower || b.size == 0) continue;
    events.push_back({b.lower, static_cast<int64_t>(aligned_size(b))});
    events.push_back({b.upper, -static_cast<int64_t>(aligned_size(b))});
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, best = 0;
  for (auto [t, d] : events) {
    live += d;
    best = std::max(best, live);
  }
  if (p.intervals_only() || p.buffers.size() > 4000) return static_cast<uint64_t>(best);
  // With extra conflicts (several streams) a set of pairwise-conflicting buffers may weigh more than any
  // moment's live set: grow cliques greedily from the largest buffers, by decreasing size.
  std::vector<size_t> by_size(p.buffers.size());
  std::iota(by_size.begin(), by_size.end(), 0);
  std::sort(by_size.begin(), by_size.end(),
            [&](size_t a, size_t b) { return aligned_size(p.buffers[a]) > aligned_size(p.buffers[b]); });
  const size_t seeds = std::min<size_t>(by_size.size(), 64);
  for (size_t s = 0; s < seeds; ++s) {
    std::vector<size_t> clique{by_size[s]};
    uint64_t weight = aligned_size(p.buffers[by_size[s]]);
    for (size_t j : by_size) {
      if (j == by_size[s] || p.buffers[j].size == 0) continue;
      if (std::all_of(clique.begin(), clique.end(), [&](size_t c) { return p.conflict(c, j); })) {
        clique.push_back(j);
        weight += aligned_size(p.buffers[j]);
      }
    }
    best = std::max(best, static_cast<int64_t>(weight));
  }
  return static_cast<uint64_t>(best);
}

std::string check_solution(const Problem& p, const std::vector<uint64_t>& offsets, uint64_t peak) {
  const size_t n = p.buffers.size();
  if (offsets.size() != n)
    return "the solution has " + std::to_string(offsets.size()) + " offsets for " + std::to_string(n) + " buffers";
  for (size_t i = 0; i < n; ++i) {
    const Buffer& b = p.buffers[i];
    if (offsets[i] % std::max<uint64_t>(1, b.alignment)) return "buffer " + b.id + " is misaligned";
    if (offsets[i] + b.size > peak) return "buffer " + b.id + " ends past the arena";
  }
  // Sweep over time; buffers live together must be disjoint in memory (sorted by offset, each must end
  // before the next starts). Extra conflicts are checked pair by pair.
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return p.buffers[a].lower < p.buffers[b].lower; });
  std::multimap<uint64_t, size_t> by_offset;  // live buffers
  std::multimap<int64_t, size_t> by_end;
  for (size_t i : idx) {
    const Buffer& b = p.buffers[i];
    if (b.size == 0 || b.upper <= b.lower) continue;
    while (!by_end.empty() && by_end.begin()->first <= b.lower) {
      size_t gone = by_end.begin()->second;
      by_end.erase(by_end.begin());
      for (auto it = by_offset.lower_bound(offsets[gone]); it != by_offset.end(); ++it)
        if (it->second == gone) {
          by_offset.erase(it);
          break;
        }
    }
    auto it = by_offset.upper_bound(offsets[i]);
    if (it != by_offset.end() && it->first < offsets[i] + b.size)
      return "buffers " + b.id + " and " + p.buffers[it->second].id + " overlap in memory and time";
    if (it != by_offset.begin()) {
      auto prev = std::prev(it);
      if (offsets[prev->second] + p.buffers[prev->second].size > offsets[i])
        return "buffers " + b.id + " and " + p.buffers[prev->second].id + " overlap in memory and time";
    }
    by_offset.emplace(offsets[i], i);
    by_end.emplace(b.upper, i);
  }
  for (size_t i = 0; i < p.extra_conflicts.size(); ++i)
    for (int j : p.extra_conflicts[i]) {
      uint64_t a0 = offsets[i], a1 = a0 + p.buffers[i].size, b0 = offsets[j], b1 = b0 + p.buffers[j].size;
      if (p.buffers[i].size && p.buffers[j].size && a0 < b1 && b0 < a1)
        return "buffers " + p.buffers[i].id + " and " + p.buffers[j].id +
               " are not ordered by synchronisation but overlap in memory";
    }
  return "";
}

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
  void for_each_conflict(size_t i, const std::vector<bool>& placed, Fn&& fn) {
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

// Places buffers in `order`, each in the best-fitting gap among the conflicting placed buffers (the one
// wasting least; ties to the lowest offset), or on top. With `top_gap` the room between the highest conflicting
// buffer and the peak so far is one of the gaps, as in ORT's MemPatternPlanner. ORT's memory pattern is this rule in
// allocation order; TFLite's greedy-by-size is it in decreasing size.
Solution place_in_order(const Problem& p, const std::vector<size_t>& order, const char* name, bool top_gap) {
  const size_t n = p.buffers.size();
  Solution s;
  s.offsets.assign(n, 0);
  std::vector<bool> placed(n, false);
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
  for (size_t i : order) {
    const Buffer& b = p.buffers[i];
    uint64_t size = aligned_size(b), align = std::max<uint64_t>(1, b.alignment);
    ranges.clear();
    const bool lives = b.size > 0 && b.upper > b.lower;
    if (lives)
      index.for_each_conflict(i, placed, [&](size_t j) {
        ranges.push_back({s.offsets[j], s.offsets[j] + aligned_size(p.buffers[j])});
      });
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
    placed[i] = true;
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

// Exact search for a layout within a capacity, in the spirit of MiniMalloc (Moffitt, ASPLOS 2024; our
// own code). Time is cut into sections at lifetime boundaries. Every unplaced buffer has a minimum
// offset: the highest top of the placed buffers it overlaps in time. Buffers are placed in canonical
// order, by non-decreasing (minimum offset, static rank), each at its minimum offset, so every layout
// is reached once. Pruning: (a) dominance: never place a buffer at or above the lowest top any unplaced
// buffer could reach (that leaves a needless gap); (b) inference: in every section, the floor (the
// highest of the placed tops, the lowest minimum offset of the unplaced buffers there, and the current
// offset) plus the sizes still to place there must fit in the capacity.
// The problem's structure for the search, built once per problem: sections, who lives where, who
// overlaps whom (each pair found once by a sweep).
struct Structure {
  std::vector<size_t> first, last;  // sections [first, last) of each buffer
  std::vector<uint64_t> size;       // aligned
  size_t sections = 0;
  std::vector<std::vector<int>> members, overlaps;
  std::vector<uint64_t> total;  // per section, all buffers
  explicit Structure(const Problem& p) {
    std::vector<int64_t> times;
    for (const Buffer& b : p.buffers) times.push_back(b.lower), times.push_back(b.upper);
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    const size_t n = p.buffers.size();
    first.resize(n);
    last.resize(n);
    size.resize(n);
    sections = times.empty() ? 0 : times.size() - 1;
    members.resize(sections);
    total.assign(sections, 0);
    for (size_t i = 0; i < n; ++i) {
      const Buffer& b = p.buffers[i];
      first[i] = static_cast<size_t>(std::lower_bound(times.begin(), times.end(), b.lower) - times.begin());
      last[i] = static_cast<size_t>(std::lower_bound(times.begin(), times.end(), b.upper) - times.begin());
      size[i] = aligned_size(b);
      for (size_t s = first[i]; s < last[i]; ++s) members[s].push_back(static_cast<int>(i)), total[s] += size[i];
    }
    overlaps.resize(n);
    std::vector<size_t> by_start(n);
    std::iota(by_start.begin(), by_start.end(), 0);
    std::sort(by_start.begin(), by_start.end(), [&](size_t a, size_t b) { return first[a] < first[b]; });
    std::vector<int> active;
    for (size_t i : by_start) {
      if (first[i] == last[i]) continue;
      active.erase(std::remove_if(active.begin(), active.end(), [&](int a) { return last[a] <= first[i]; }),
                   active.end());
      for (int a : active) overlaps[a].push_back(static_cast<int>(i)), overlaps[i].push_back(a);
      active.push_back(static_cast<int>(i));
    }
    // Pairs on several streams that no synchronisation orders conflict like overlapping ones: placing one raises
    // the other's minimum offset the same way (placement goes by increasing offset, so the other lands above).
    for (size_t i = 0; i < p.extra_conflicts.size() && i < n; ++i)
      for (int j : p.extra_conflicts[i]) overlaps[i].push_back(j);
  }
};

class Exact {
 public:
  Exact(const Problem& p, const Structure& s, const std::vector<int>& rank, WorkBudget& work, uint64_t node_limit,
        bool progress)
      : p_(p),
        first_(s.first),
        last_(s.last),
        size_(s.size),
        sections_(s.sections),
        members_(s.members),
        overlaps_(s.overlaps),
        rank_(rank),
        total_(s.total),
        work_(work),
        node_limit_(node_limit),
        progress_(progress),
        intervals_only_(p.intervals_only()) {
    const size_t n = p.buffers.size();
    floor_.assign(sections_, 0);
    min_offset_.assign(n, 0);
    offset_.assign(n, kUnplaced);
  }

  // Is there a layout with peak <= capacity? On success, offsets() holds it.
  bool feasible(uint64_t capacity) {
    capacity_ = capacity;
    solution_.assign(offset_.size(), 0);
    std::vector<int> all(offset_.size());
    std::iota(all.begin(), all.end(), 0);
    return search(all, 0, sections_, 0, 0) == kFound;
  }
  bool timed_out() const { return stop_ == kTimeout; }
  bool node_limited() const { return stop_ == kNodeLimit; }
  uint64_t nodes() const { return nodes_; }
  const std::vector<uint64_t>& offsets() const { return solution_; }

 private:
  static constexpr uint64_t kUnplaced = UINT64_MAX;
  enum Result { kFound, kNotFound, kStopped };
  enum Stop { kNone, kTimeout, kNodeLimit };

  // Charges the work done since the last node (pending_) to the budget.
  bool should_stop() {
    if (++nodes_ > node_limit_) stop_ = kNodeLimit;
    if (!work_.spend(pending_)) stop_ = kTimeout;
    pending_ = 0;
    if (progress_ && (nodes_ & 63) == 0) {
      auto now = Clock::now();
      if (now - last_report_ > std::chrono::milliseconds(500)) {
        last_report_ = now;
        std::fprintf(stderr, "\rmemplan: exact search at capacity %llu: %llu nodes   ",
                     static_cast<unsigned long long>(capacity_), static_cast<unsigned long long>(nodes_));
      }
    }
    return stop_ != kNone;
  }

  // Searches the unplaced buffers of `subset`, which live in sections [lo, hi).
  Result search(const std::vector<int>& subset, size_t lo, size_t hi, uint64_t last_offset, int last_rank) {
    pending_ += subset.size() + (hi - lo) + 1;  // a node: its subset and sections
    if (should_stop()) return kStopped;
    // Unplaced buffers by (minimum offset, rank).
    std::vector<std::pair<uint64_t, int>> order;
    for (int i : subset)
      if (offset_[i] == kUnplaced) order.push_back({min_offset_[i], rank_[i]});
    if (order.empty()) {
      for (size_t i = 0; i < offset_.size(); ++i)
        if (offset_[i] != kUnplaced) solution_[i] = offset_[i];
      return kFound;
    }
    std::sort(order.begin(), order.end());
    // The sort and the scans of the subset cost several units per buffer (measured: a large subset's node took
    // about four times its charge without this).
    pending_ += 4 * order.size() * static_cast<uint64_t>(std::bit_width(order.size())) + 2 * subset.size();
    uint64_t min_height = UINT64_MAX;
    for (auto [off, r] : order) min_height = std::min(min_height, off + size_[by_rank(r)]);
    for (auto [off, r] : order) {
      if (off < last_offset || (off == last_offset && r < last_rank)) continue;  // canonical order
      if (off >= min_height) break;                                              // dominance (sorted by offset)
      const size_t b = by_rank(r);
      if (off + size_[b] > capacity_) continue;
      // Place b at off.
      offset_[b] = off;
      const uint64_t top = off + size_[b];
      std::vector<std::pair<int, uint64_t>> offset_changes;
      std::vector<std::pair<size_t, uint64_t>> floor_changes;
      pending_ += overlaps_[b].size() + (last_[b] - first_[b]);
      for (int o : overlaps_[b]) {
        if (offset_[o] != kUnplaced || min_offset_[o] >= top) continue;
        offset_changes.push_back({o, min_offset_[o]});
        min_offset_[o] = align_up(top, p_.buffers[o].alignment);
      }
      for (size_t s = first_[b]; s < last_[b]; ++s) {
        floor_changes.push_back({s, floor_[s]});
        floor_[s] = std::max(floor_[s], top);
        total_[s] -= size_[b];
      }
      Result r2 = check(off, lo, hi) ? decompose(subset, lo, hi, off, r) : kNotFound;
      for (auto it = floor_changes.rbegin(); it != floor_changes.rend(); ++it) floor_[it->first] = it->second;
      for (size_t s = first_[b]; s < last_[b]; ++s) total_[s] += size_[b];
      for (auto it = offset_changes.rbegin(); it != offset_changes.rend(); ++it) min_offset_[it->first] = it->second;
      offset_[b] = kUnplaced;
      if (r2 != kNotFound) return r2;
    }
    return kNotFound;
  }

  // The unplaced buffers of `subset` may fall apart into groups that share no section boundary: those
  // are independent problems (the placed buffers only set their floors), solved one after the other, once the
  // groups that conflicts across streams tie together are merged.
  Result decompose(const std::vector<int>& subset, size_t lo, size_t hi, uint64_t last_offset, int last_rank) {
    std::vector<std::pair<size_t, int>> starts;  // (first section, buffer) of unplaced buffers
    pending_ += subset.size();
    for (int i : subset)
      if (offset_[i] == kUnplaced) starts.push_back({first_[i], i});
    if (starts.empty()) return search(subset, lo, hi, last_offset, last_rank);
    std::sort(starts.begin(), starts.end());
    std::vector<std::vector<int>> groups;
    std::vector<std::pair<size_t, size_t>> ranges;
    size_t reach = 0;
    for (auto [f, i] : starts) {
      if (groups.empty() || f >= reach) {
        groups.push_back({});
        ranges.push_back({f, f});
        reach = 0;
      }
      groups.back().push_back(i);
      reach = std::max(reach, last_[i]);
      ranges.back().second = reach;
    }
    if (!intervals_only_) merge_linked(groups, ranges);
    if (groups.size() == 1) return search(groups[0], ranges[0].first, ranges[0].second, last_offset, last_rank);
    for (size_t g = 0; g < groups.size(); ++g) {
      Result r = search(groups[g], ranges[g].first, ranges[g].second, 0, 0);
      if (r != kFound) return r;
    }
    return kFound;
  }

  // Time groups that a conflict beyond the intervals ties together (two unplaced buffers on streams that no
  // synchronisation orders) constrain each other: each such pair's groups become one, with every group between
  // them, so that a group stays a run of sections (check() reads every section of its range).
  void merge_linked(std::vector<std::vector<int>>& groups, std::vector<std::pair<size_t, size_t>>& ranges) {
    if (groups.size() < 2) return;
    constexpr size_t kNone = SIZE_MAX;
    if (group_of_.empty()) group_of_.assign(offset_.size(), kNone);
    for (size_t g = 0; g < groups.size(); ++g)
      for (int i : groups[g]) group_of_[i] = g;
    std::vector<size_t> far(groups.size());  // the furthest group each one is tied to
    for (size_t g = 0; g < groups.size(); ++g) {
      far[g] = g;
      for (int i : groups[g])
        if (static_cast<size_t>(i) < p_.extra_conflicts.size()) {
          pending_ += p_.extra_conflicts[i].size();
          for (int j : p_.extra_conflicts[i])
            if (offset_[j] == kUnplaced && group_of_[j] != kNone) far[g] = std::max(far[g], group_of_[j]);
        }
    }
    std::vector<std::vector<int>> merged;
    std::vector<std::pair<size_t, size_t>> merged_ranges;
    for (size_t g = 0; g < groups.size();) {
      size_t end = far[g], k = g;
      merged.emplace_back();
      for (; k <= end; ++k) {
        end = std::max(end, far[k]);
        merged.back().insert(merged.back().end(), groups[k].begin(), groups[k].end());
      }
      merged_ranges.push_back({ranges[g].first, ranges[k - 1].second});
      g = k;
    }
    for (const auto& group : groups)
      for (int i : group) group_of_[i] = kNone;
    groups = std::move(merged);
    ranges = std::move(merged_ranges);
  }

  // Inference over the subset's sections: floor + what is left there must fit.
  bool check(uint64_t offset, size_t lo, size_t hi) {
    for (size_t s = lo; s < hi; ++s) {
      if (total_[s] == 0) continue;
      pending_ += members_[s].size();
      uint64_t lowest = UINT64_MAX;
      for (int m : members_[s])
        if (offset_[m] == kUnplaced) lowest = std::min(lowest, min_offset_[m]);
      uint64_t floor = std::max({floor_[s], lowest, offset});
      if (floor + total_[s] > capacity_) return false;
    }
    return true;
  }

  size_t by_rank(int r) {
    if (rank_to_index_.empty()) {
      rank_to_index_.resize(rank_.size());
      for (size_t i = 0; i < rank_.size(); ++i) rank_to_index_[rank_[i]] = i;
    }
    return rank_to_index_[r];
  }

  const Problem& p_;
  const std::vector<size_t>& first_;
  const std::vector<size_t>& last_;
  const std::vector<uint64_t>& size_;
  const size_t sections_;
  const std::vector<std::vector<int>>& members_;
  const std::vector<std::vector<int>>& overlaps_;
  const std::vector<int>& rank_;
  std::vector<size_t> rank_to_index_;
  std::vector<uint64_t> total_, floor_, min_offset_, offset_, solution_;
  uint64_t capacity_ = 0, nodes_ = 0;
  WorkBudget& work_;
  uint64_t pending_ = 0;  // work done since the last node was charged
  Clock::time_point last_report_ = Clock::now();
  uint64_t node_limit_;
  Stop stop_ = kNone;
  bool progress_;
  bool intervals_only_;           // no conflicts beyond the intervals: time groups are independent
  std::vector<size_t> group_of_;  // merge_linked's scratch: each unplaced buffer's time group
};

// Static ranks for the search: several orders, tried in turn with growing node limits (a restart
// strategy, as MiniMalloc does), since one bad early choice can trap a depth-first search.
std::vector<std::vector<int>> static_ranks(const Problem& p) {
  const size_t n = p.buffers.size();
  std::vector<int64_t> times;
  for (const Buffer& b : p.buffers) times.push_back(b.lower), times.push_back(b.upper);
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  std::vector<uint64_t> section_total(times.empty() ? 0 : times.size() - 1, 0);
  std::vector<size_t> f(n), l(n);
  for (size_t i = 0; i < n; ++i) {
    f[i] = static_cast<size_t>(std::lower_bound(times.begin(), times.end(), p.buffers[i].lower) - times.begin());
    l[i] = static_cast<size_t>(std::lower_bound(times.begin(), times.end(), p.buffers[i].upper) - times.begin());
    for (size_t s = f[i]; s < l[i]; ++s) section_total[s] += aligned_size(p.buffers[i]);
  }
  struct Key {
    uint64_t total, area, width, sections;  // width: lifetime length in time
  };
  std::vector<Key> keys(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t t = 0;
    for (size_t s = f[i]; s < l[i]; ++s) t = std::max(t, section_total[s]);
    uint64_t len = static_cast<uint64_t>(p.buffers[i].upper - p.buffers[i].lower);
    keys[i] = {t, aligned_size(p.buffers[i]) * len, len, l[i] - f[i]};
  }
  auto make = [&](auto better) {
    std::vector<size_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), better);
    std::vector<int> rank(n);
    for (size_t r = 0; r < n; ++r) rank[idx[r]] = static_cast<int>(r);
    return rank;
  };
  // Decreasing, compared key by key.
  auto by = [&](uint64_t Key::*first, uint64_t Key::*second, uint64_t Key::*third) {
    return make([&keys, first, second, third](size_t a, size_t b) {
      return std::tie(keys[b].*first, keys[b].*second, keys[b].*third) <
             std::tie(keys[a].*first, keys[a].*second, keys[a].*third);
    });
  };
  return {
      by(&Key::total, &Key::width, &Key::area),    by(&Key::width, &Key::area, &Key::total),
      by(&Key::total, &Key::area, &Key::width),    by(&Key::total, &Key::sections, &Key::area),
      by(&Key::sections, &Key::area, &Key::total),
  };
}

// The exact search's work (Exact::should_stop) per second of --time-budget: measured on one core of the
// development machine on MiniMalloc's problems B, E, I and J (work_budget.h). Instrumented builds (sanitizers,
// fuzzing) get a tenth: they search about ten times slower.
#ifdef MEMPLAN_INSTRUMENTED
constexpr double kExactWorkPerSecond = 1e8;
#else
constexpr double kExactWorkPerSecond = 1e9;
#endif

// Decision at one capacity: round robin over the static ranks with doubling node limits, until found,
// proven infeasible (a search that ran to the end without hitting its node limit), or out of time.
enum class Decision { kFeasible, kInfeasible, kUnknown };
Decision decide(const Problem& p, const Structure& structure, const std::vector<std::vector<int>>& ranks,
                uint64_t capacity, WorkBudget& work, bool progress, std::vector<uint64_t>& offsets, uint64_t& nodes) {
  uint64_t limit = std::max<uint64_t>(1024, p.buffers.size());
  while (!work.exhausted()) {
    for (const auto& rank : ranks) {
      Exact e(p, structure, rank, work, limit, progress);
      bool ok = e.feasible(capacity);
      nodes += e.nodes();
      if (ok) {
        offsets = e.offsets();
        return Decision::kFeasible;
      }
      if (!e.node_limited() && !e.timed_out()) return Decision::kInfeasible;
      if (e.timed_out()) return Decision::kUnknown;
    }
    limit *= 2;
  }
  return Decision::kUnknown;
}

constexpr uint64_t kMaxExactPairs = 4'000'000;
constexpr size_t kMaxAutoExactBuffers = 20'000;

// Whether more than `cap` pairs of buffers overlap in time (a sweep that stops counting at the cap).
bool overlap_pairs_exceed(const Problem& p, uint64_t cap) {
  std::vector<std::pair<int64_t, int>> events;
  for (const Buffer& b : p.buffers)
    if (b.upper > b.lower) events.push_back({b.lower, 1}), events.push_back({b.upper, -1});
  std::sort(events.begin(), events.end(),
            [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second < b.second; });
  uint64_t live = 0, pairs = 0;
  for (const auto& c : p.extra_conflicts) pairs += c.size();
  pairs /= 2;  // each pair is listed on both sides
  if (pairs > cap) return true;
  for (auto [t, d] : events) {
    if (d > 0) {
      pairs += live;
      if (pairs > cap) return true;
      ++live;
    } else {
      --live;
    }
  }
  return false;
}

}  // namespace

Solution solve(const Problem& problem, const SolveOptions& options) {
  check_total_size(problem);
  auto start = Clock::now();
  const uint64_t bound = lower_bound(problem);
  Solution best;
  auto consider = [&](Solution s) {
    if (best.offsets.empty() || s.peak < best.peak) best = std::move(s);
  };
  if (options.algorithm == Algorithm::kBestFit)
    consider(best_fit(problem));
  else if (options.algorithm == Algorithm::kGreedySize)
    consider(greedy_size(problem));
  else {
    consider(best_fit(problem));
    consider(greedy_size(problem));
  }
  best.lower_bound = bound;
  best.optimal = best.peak == bound;
  bool exact = options.algorithm == Algorithm::kExact || options.algorithm == Algorithm::kAuto;
  // The exact search keeps every pair of buffers that overlap in time; past a few million pairs it
  // would spend its budget building them, so such problems keep the best heuristic layout. Under auto it also
  // leaves very large arenas alone: each search node costs time in proportion to the buffers (77,779 buffers:
  // 16k nodes in 20 s, no improvement), so the budget would be spent for nothing.
  if (exact && !best.optimal && options.algorithm == Algorithm::kAuto &&
      problem.buffers.size() > kMaxAutoExactBuffers) {
    exact = false;
    best.note = "exact search skipped: " + std::to_string(problem.buffers.size()) + " buffers (auto searches up to " +
                std::to_string(kMaxAutoExactBuffers) + "; --arena-algorithm exact searches any)";
  }
  if (exact && !best.optimal && overlap_pairs_exceed(problem, kMaxExactPairs)) {
    exact = false;
    best.note = "exact search skipped: more than " + std::to_string(kMaxExactPairs) + " overlapping pairs";
  }
  if (exact && !best.optimal && options.time_budget_s > 0) {
    bool progress = options.show_progress && ::isatty(2);
    WorkBudget work(options.time_budget_s, kExactWorkPerSecond);
    const uint64_t budget = work.left;
    // The decision at the lower bound first (most real problems fit there), then a bisection between
    // the best infeasible capacity known and the best layout.
    std::vector<uint64_t> offsets;
    uint64_t proven_below = bound;  // every capacity below this is proven infeasible
    uint64_t search_from = bound;   // the bisection's floor: proven, or given up on for lack of time
    const Structure structure(problem);
    const auto ranks = static_ranks(problem);
    // Each decision gets a share of what is left; what it does not spend stays for the next.
    auto try_capacity = [&](uint64_t capacity, uint64_t share) {
      WorkBudget part;
      part.left = std::min(share, work.left);
      const uint64_t given = part.left;
      Decision d = decide(problem, structure, ranks, capacity, part, progress, offsets, best.nodes_explored);
      work.spend(given - part.left);
      if (d == Decision::kFeasible) {
        uint64_t peak = 0;
        for (size_t i = 0; i < offsets.size(); ++i)
          peak = std::max(peak, offsets[i] + aligned_size(problem.buffers[i]));
        best.offsets = offsets;
        best.peak = peak;
        best.algorithm = "exact";
      } else {
        // Infeasible at a capacity means infeasible at every smaller one too.
        if (d == Decision::kInfeasible) proven_below = std::max(proven_below, capacity + 1);
        search_from = std::max(search_from, capacity + 1);
      }
      return d;
    };
    try_capacity(bound, work.left / 2);
    while (best.peak > search_from && !work.exhausted()) {
      uint64_t mid = search_from + (best.peak - 1 - search_from) / 2;
      if (try_capacity(mid, std::max<uint64_t>(1, work.left / 3)) == Decision::kUnknown && work.exhausted()) break;
    }
    best.work_seconds = static_cast<double>(budget - work.left) / kExactWorkPerSecond;
    // Optimal when the best peak is the bound, or every capacity below it was proven infeasible.
    best.optimal = best.peak == bound || proven_below >= best.peak;
    if (progress) std::fprintf(stderr, "\r%60s\r", "");
  }
  best.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return best;
}

Problem read_minimalloc_csv(const std::string& text, const std::string& source) {
  expect_file_kind(text, source, FileKind::kText);
  Problem p;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) fail_input(source, "empty file; expected MiniMalloc's CSV header id,lower,upper,size");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::vector<std::string> header;
  {
    std::stringstream hs(line);
    std::string col;
    while (std::getline(hs, col, ',')) header.push_back(col);
  }
  auto col_of = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  };
  int c_id = col_of("id"), c_lo = col_of("lower"), c_up = col_of("upper"), c_size = col_of("size"),
      c_align = col_of("alignment");
  if (c_id < 0 || c_lo < 0 || c_up < 0 || c_size < 0)
    fail_input(source, "the header must name id, lower, upper and size (MiniMalloc's CSV), got '" + line + "'");
  size_t row = 1;
  while (std::getline(in, line)) {
    ++row;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ls(line);
    std::string cell;
    while (std::getline(ls, cell, ',')) cells.push_back(cell);
    auto num = [&](int c, const char* what) -> int64_t {
      if (c >= static_cast<int>(cells.size())) fail_input(source, "line " + std::to_string(row) + ": missing " + what);
      try {
        size_t used = 0;
        long long v = std::stoll(cells[c], &used);
        if (used != cells[c].size()) throw std::invalid_argument("trailing");
        return v;
      } catch (const std::exception&) {
        fail_input(source, "line " + std::to_string(row) + ": " + what + " '" + cells[c] + "' is not an integer");
      }
    };
    Buffer b;
    if (c_id >= static_cast<int>(cells.size()) || cells[c_id].empty())
      fail_input(source, "line " + std::to_string(row) + ": missing id");
    b.id = cells[c_id];
    b.lower = num(c_lo, "lower");
    b.upper = num(c_up, "upper");
    int64_t size = num(c_size, "size");
    if (size < 0) fail_input(source, "line " + std::to_string(row) + ": negative size");
    if (b.upper < b.lower) fail_input(source, "line " + std::to_string(row) + ": upper < lower");
    b.size = static_cast<uint64_t>(size);
    if (c_align >= 0 && c_align < static_cast<int>(cells.size()) && !cells[c_align].empty()) {
      int64_t a = num(c_align, "alignment");
      if (a <= 0) fail_input(source, "line " + std::to_string(row) + ": alignment must be positive");
      b.alignment = static_cast<uint64_t>(a);
    }
    p.buffers.push_back(b);
  }
  return p;
}

std::string write_minimalloc_csv(const Problem& p, const std::vector<uint64_t>* offsets) {
  std::ostringstream out;
  bool aligned = std::any_of(p.buffers.begin(), p.buffers.end(), [](const Buffer& b) { return b.alignment > 1; });
  out << "id,lower,upper,size" << (aligned ? ",alignment" : "") << (offsets ? ",offset" : "") << "\n";
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const Buffer& b = p.buffers[i];
    out << b.id << "," << b.lower << "," << b.upper << "," << b.size;
    if (aligned) out << "," << b.alignment;
    if (offsets) out << "," << (*offsets)[i];
    out << "\n";
  }
  return out.str();
}

}  // namespace memplan::planner
