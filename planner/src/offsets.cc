// Offset assignment: heuristics (ORT's best fit in allocation order, greedy by size) and an exact
// branch-and-bound over "gravity-normalised" layouts in the spirit of MiniMalloc (Moffitt, ASPLOS 2024).
#include "memplan/planner/offsets.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

#include "memplan/error.h"

namespace memplan::planner {

using Clock = std::chrono::steady_clock;

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::kBestFit: return "best-fit";
    case Algorithm::kGreedySize: return "greedy-size";
    case Algorithm::kExact: return "exact";
    case Algorithm::kAuto: return "auto";
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
  if (i < extra_conflicts.size() && std::binary_search(extra_conflicts[i].begin(), extra_conflicts[i].end(), static_cast<int>(j)))
    return true;
  return false;
}

uint64_t lower_bound(const Problem& p) {
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
  return static_cast<uint64_t>(best);
}

std::string check_solution(const Problem& p, const std::vector<uint64_t>& offsets, uint64_t peak) {
  const size_t n = p.buffers.size();
  if (offsets.size() != n) return "the solution has " + std::to_string(offsets.size()) + " offsets for " + std::to_string(n) + " buffers";
  for (size_t i = 0; i < n; ++i) {
    const Buffer& b = p.buffers[i];
    if (offsets[i] % std::max<uint64_t>(1, b.alignment)) return "buffer " + std::to_string(b.id) + " is misaligned";
    if (offsets[i] + b.size > peak) return "buffer " + std::to_string(b.id) + " ends past the arena";
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
      return "buffers " + std::to_string(b.id) + " and " + std::to_string(p.buffers[it->second].id) + " overlap in memory and time";
    if (it != by_offset.begin()) {
      auto prev = std::prev(it);
      if (offsets[prev->second] + p.buffers[prev->second].size > offsets[i])
        return "buffers " + std::to_string(b.id) + " and " + std::to_string(p.buffers[prev->second].id) + " overlap in memory and time";
    }
    by_offset.emplace(offsets[i], i);
    by_end.emplace(b.upper, i);
  }
  for (size_t i = 0; i < p.extra_conflicts.size(); ++i)
    for (int j : p.extra_conflicts[i]) {
      uint64_t a0 = offsets[i], a1 = a0 + p.buffers[i].size, b0 = offsets[j], b1 = b0 + p.buffers[j].size;
      if (p.buffers[i].size && p.buffers[j].size && a0 < b1 && b0 < a1)
        return "buffers " + std::to_string(p.buffers[i].id) + " and " + std::to_string(p.buffers[j].id) +
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
    for (size_t k = bucket(b.lower); k <= bucket(b.upper - 1); ++k) buckets_[k].push_back(static_cast<int>(i));
  }
  // Placed buffers conflicting with i (time overlap or extra conflict), as (offset, end) ranges.
  template <typename Fn>
  void for_each_conflict(size_t i, const std::vector<bool>& placed, Fn&& fn) {
    const Buffer& b = p_.buffers[i];
    ++generation_;
    for (size_t k = bucket(b.lower); k <= bucket(b.upper - 1); ++k)
      for (int j : buckets_[k]) {
        if (stamp_[j] == generation_) continue;
        stamp_[j] = generation_;
        const Buffer& o = p_.buffers[j];
        if (o.lower < b.upper && b.lower < o.upper) fn(static_cast<size_t>(j));
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
  const Problem& p_;
  int64_t lo_ = 0, width_ = 1;
  std::vector<std::vector<int>> buckets_;
  std::vector<uint64_t> stamp_;
  uint64_t generation_ = 0;
};

// Places buffers in `order`, each in the best-fitting gap among the conflicting placed buffers (the one
// wasting least; ties to the lowest offset), or on top. ORT's memory pattern is this rule in allocation
// order; TFLite's greedy-by-size is it in decreasing size.
Solution place_in_order(const Problem& p, const std::vector<size_t>& order, const char* name) {
  const size_t n = p.buffers.size();
  Solution s;
  s.offsets.assign(n, 0);
  std::vector<bool> placed(n, false);
  PlacedIndex index(p);
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (size_t i : order) {
    const Buffer& b = p.buffers[i];
    uint64_t size = aligned_size(b), align = std::max<uint64_t>(1, b.alignment);
    ranges.clear();
    if (b.size > 0 && b.upper > b.lower)
      index.for_each_conflict(i, placed, [&](size_t j) {
        ranges.push_back({s.offsets[j], s.offsets[j] + aligned_size(p.buffers[j])});
      });
    std::sort(ranges.begin(), ranges.end());
    uint64_t current = 0, best_offset = UINT64_MAX, best_waste = UINT64_MAX;
    for (auto [start, end] : ranges) {
      uint64_t at = align_up(current, align);
      if (start >= at && start - at >= size && start - at - size < best_waste) best_waste = start - at - size, best_offset = at;
      current = std::max(current, end);
    }
    if (best_offset == UINT64_MAX) best_offset = align_up(current, align);
    s.offsets[i] = best_offset;
    s.peak = std::max(s.peak, best_offset + size);
    placed[i] = true;
    if (b.size > 0 && b.upper > b.lower) index.add(i);
  }
  s.algorithm = name;
  return s;
}

Solution best_fit(const Problem& p) {
  std::vector<size_t> order(p.buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p.buffers[a].lower < p.buffers[b].lower; });
  return place_in_order(p, order, "best-fit");
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
  return place_in_order(p, order, "greedy-size");
}

// Exact search over gravity-normalised layouts. Time is cut into sections at every lifetime boundary;
// each section has a floor (the top of what was placed there). Sorted by offset, any layout can be
// built bottom-up so that each buffer sits exactly on the highest floor under it; so the search takes
// the lowest section with work left and either puts there a buffer that fits exactly at that floor, or
// raises that floor (leaving a hole). A branch dies when some section's floor plus what must still go
// through it reaches the best peak found. Exhausting the search proves the best peak optimal.
class Exact {
 public:
  Exact(const Problem& p, uint64_t incumbent, double budget_s, bool progress)
      : p_(p), best_peak_(incumbent), deadline_(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                                   std::chrono::duration<double>(budget_s))),
        progress_(progress) {
    std::vector<int64_t> times;
    for (const Buffer& b : p.buffers)
      if (b.size > 0 && b.upper > b.lower) times.push_back(b.lower), times.push_back(b.upper);
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    sections_ = times.empty() ? 0 : times.size() - 1;
    floor_.assign(sections_, 0);
    remaining_.assign(sections_, 0);
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      const Buffer& b = p.buffers[i];
      if (b.size == 0 || b.upper <= b.lower) continue;
      Item it;
      it.index = i;
      it.first = static_cast<size_t>(std::lower_bound(times.begin(), times.end(), b.lower) - times.begin());
      it.last = static_cast<size_t>(std::lower_bound(times.begin(), times.end(), b.upper) - times.begin());  // exclusive
      it.size = aligned_size(b);
      items_.push_back(it);
      for (size_t s = it.first; s < it.last; ++s) remaining_[s] += it.size;
    }
    // Candidates by section: buffers starting... any buffer spanning a section may be placed at its floor.
    spanning_.resize(sections_);
    for (size_t k = 0; k < items_.size(); ++k)
      for (size_t s = items_[k].first; s < items_[k].last; ++s) spanning_[s].push_back(static_cast<int>(k));
    // Larger, longer buffers first: they constrain the most.
    for (auto& list : spanning_)
      std::sort(list.begin(), list.end(), [&](int a, int b) {
        uint64_t wa = items_[a].size * (items_[a].last - items_[a].first), wb = items_[b].size * (items_[b].last - items_[b].first);
        return wa != wb ? wa > wb : a < b;
      });
    placed_.assign(items_.size(), false);
    offsets_.assign(items_.size(), 0);
  }

  // Returns true when a layout better than the incumbent was found (in best_offsets()).
  bool run(uint64_t bound) {
    bound_ = bound;
    if (best_peak_ <= bound_) return false;
    search(0, 0);
    return found_;
  }
  bool exhausted() const { return !timed_out_; }
  uint64_t best_peak() const { return best_peak_; }
  uint64_t nodes() const { return nodes_; }
  const std::vector<uint64_t>& best_offsets() const { return best_offsets_; }

 private:
  struct Item {
    size_t index, first, last;
    uint64_t size;
  };

  bool out_of_time() {
    if ((++nodes_ & 1023) != 0) return timed_out_;
    auto now = Clock::now();
    if (now > deadline_) timed_out_ = true;
    if (progress_ && now - last_report_ > std::chrono::milliseconds(500)) {
      last_report_ = now;
      std::fprintf(stderr, "\rmemplan: exact search: %llu nodes, best %llu, bound %llu   ",
                   static_cast<unsigned long long>(nodes_), static_cast<unsigned long long>(best_peak_),
                   static_cast<unsigned long long>(bound_));
    }
    return timed_out_;
  }

  uint64_t fits_at(const Item& it) const {
    uint64_t h = 0;
    for (size_t s = it.first; s < it.last; ++s) h = std::max(h, floor_[s]);
    return h;
  }

  void search(size_t placed_count, uint64_t peak) {
    if (out_of_time() || best_peak_ <= bound_) return;
    if (placed_count == items_.size()) {
      if (peak < best_peak_) {
        best_peak_ = peak;
        found_ = true;
        best_offsets_.assign(p_.buffers.size(), 0);
        for (size_t k = 0; k < items_.size(); ++k) best_offsets_[items_[k].index] = offsets_[k];
      }
      return;
    }
    // The lowest section that still has buffers to place.
    size_t low = SIZE_MAX;
    for (size_t s = 0; s < sections_; ++s)
      if (remaining_[s] > 0 && (low == SIZE_MAX || floor_[s] < floor_[low])) low = s;
    if (low == SIZE_MAX) return;
    const uint64_t h = floor_[low];
    uint64_t next_height = UINT64_MAX;
    for (int k : spanning_[low]) {
      if (placed_[k]) continue;
      const Item& it = items_[k];
      uint64_t at = fits_at(it);
      if (at != h) {
        next_height = std::min(next_height, at);
        continue;
      }
      // Identical buffers are interchangeable: only the lowest-numbered unplaced one is tried.
      if (k > 0 && !placed_[k - 1] && items_[k - 1].first == it.first && items_[k - 1].last == it.last &&
          items_[k - 1].size == it.size)
        continue;
      // Place it: floors rise, remaining work falls; prune on any section's floor + remaining.
      std::vector<uint64_t> saved(floor_.begin() + it.first, floor_.begin() + it.last);
      bool ok = true;
      for (size_t s = it.first; s < it.last; ++s) {
        floor_[s] = h + it.size;
        remaining_[s] -= it.size;
        if (floor_[s] + remaining_[s] >= best_peak_) ok = false;
      }
      if (ok) {
        placed_[k] = true;
        offsets_[k] = h;
        search(placed_count + 1, std::max(peak, h + it.size));
        placed_[k] = false;
      }
      for (size_t s = it.first; s < it.last; ++s) {
        floor_[s] = saved[s - it.first];
        remaining_[s] += it.size;
      }
      if (timed_out_ || best_peak_ <= bound_) return;
    }
    // Or leave a hole: raise this section to the next height something could sit at, or to its neighbours.
    uint64_t raise = next_height;
    if (low > 0 && floor_[low - 1] > h) raise = std::min(raise, floor_[low - 1]);
    if (low + 1 < sections_ && floor_[low + 1] > h) raise = std::min(raise, floor_[low + 1]);
    if (raise == UINT64_MAX || raise + remaining_[low] >= best_peak_) return;
    floor_[low] = raise;
    search(placed_count, peak);
    floor_[low] = h;
  }

  const Problem& p_;
  std::vector<Item> items_;
  std::vector<std::vector<int>> spanning_;
  size_t sections_ = 0;
  std::vector<uint64_t> floor_, remaining_;
  std::vector<bool> placed_;
  std::vector<uint64_t> offsets_, best_offsets_;
  uint64_t best_peak_, bound_ = 0;
  bool found_ = false, timed_out_ = false;
  uint64_t nodes_ = 0;
  Clock::time_point deadline_, last_report_ = Clock::now();
  bool progress_;
};

}  // namespace

Solution solve(const Problem& problem, const SolveOptions& options) {
  auto start = Clock::now();
  const uint64_t bound = lower_bound(problem);
  Solution best;
  auto consider = [&](Solution s) {
    if (best.offsets.empty() || s.peak < best.peak) best = std::move(s);
  };
  if (options.algorithm == Algorithm::kBestFit) consider(best_fit(problem));
  else if (options.algorithm == Algorithm::kGreedySize) consider(greedy_size(problem));
  else {
    consider(best_fit(problem));
    consider(greedy_size(problem));
  }
  best.lower_bound = bound;
  best.optimal = best.peak == bound;
  bool exact = options.algorithm == Algorithm::kExact || options.algorithm == Algorithm::kAuto;
  if (exact && !best.optimal && problem.intervals_only() && options.time_budget_s > 0) {
    bool progress = options.show_progress && ::isatty(2);
    Exact search(problem, best.peak, options.time_budget_s, progress);
    if (search.run(bound)) {
      best.offsets = search.best_offsets();
      best.peak = search.best_peak();
      best.algorithm = "exact";
    }
    best.nodes_explored = search.nodes();
    best.optimal = best.peak == bound || search.exhausted();
    if (progress) std::fprintf(stderr, "\r%60s\r", "");
  }
  best.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return best;
}

Problem read_minimalloc_csv(const std::string& text, const std::string& source) {
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
  int c_id = col_of("id"), c_lo = col_of("lower"), c_up = col_of("upper"), c_size = col_of("size"), c_align = col_of("alignment");
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
    b.id = num(c_id, "id");
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
