// The exact search: a branch and bound over "gravity-normalised" layouts in the spirit of MiniMalloc (Moffitt,
// ASPLOS 2024; our own code), and the bisection over capacities that drives it.
#include "memplan/arena/exact.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <tuple>

#include "memplan/progress.h"
#include "memplan/work_budget.h"

namespace memplan::arena {

namespace {

using Clock = std::chrono::steady_clock;

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
        show_progress_text("memplan: exact search at capacity " + std::to_string(capacity_) + ": " +
                           std::to_string(nodes_) + " nodes");
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
    uint64_t len = lifetime(p.buffers[i]);
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

std::string exact_skip_reason(const Problem& problem, bool automatic) {
  // The search keeps every pair of buffers that overlap in time; past a few million pairs it would spend its budget
  // building them. Under auto it also leaves very large arenas alone: each search node costs time in proportion to
  // the buffers (77,779 buffers: 16k nodes in 20 s, no improvement), so the budget would be spent for nothing.
  if (automatic && problem.buffers.size() > kMaxAutoExactBuffers)
    return "exact search skipped: " + std::to_string(problem.buffers.size()) + " buffers (auto searches up to " +
           std::to_string(kMaxAutoExactBuffers) + "; --arena-algorithm exact searches any)";
  if (overlap_pairs_exceed(problem, kMaxExactPairs))
    return "exact search skipped: more than " + std::to_string(kMaxExactPairs) + " overlapping pairs";
  return "";
}

void search_exact(const Problem& problem, uint64_t bound, double time_budget_s, bool show_progress, Solution& best) {
  if (time_budget_s <= 0 || best.peak == bound) return;
  const bool progress = show_progress;  // (drawn on a terminal only: progress.h)
  WorkBudget work(time_budget_s, kExactWorkPerSecond);
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
      for (size_t i = 0; i < offsets.size(); ++i) peak = std::max(peak, offsets[i] + aligned_size(problem.buffers[i]));
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
  if (progress) (void)pause_progress_line();  // (cleared)
}

}  // namespace memplan::arena
