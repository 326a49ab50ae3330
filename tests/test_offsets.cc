// The arena module: every algorithm gives valid layouts; exact matches brute force; the registry; MiniMalloc's CSV.
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <random>

#include "memplan/arena/bound.h"
#include "memplan/arena/check.h"
#include "memplan/arena/csv.h"
#include "memplan/arena/solve.h"
#include "memplan/error.h"
#include "memplan/file_io.h"

using namespace memplan;
using namespace memplan::arena;

namespace {

Problem random_problem(std::mt19937& rng, int n, int horizon, int max_size, bool aligned) {
  Problem p;
  for (int i = 0; i < n; ++i) {
    Buffer b;
    b.id = std::to_string(i);
    b.lower = rng() % horizon;
    b.upper = b.lower + 1 + rng() % (horizon / 2 + 1);
    b.size = 1 + rng() % max_size;
    b.alignment = aligned ? (1u << (rng() % 4)) : 1;
    p.buffers.push_back(b);
  }
  return p;
}

// The optimum by brute force: an optimal layout sorted by offset can be rebuilt by placing each buffer,
// in that order, at its lowest feasible offset; so the best over all orders of that rule is optimal.
uint64_t brute_force(const Problem& p) {
  std::vector<size_t> order(p.buffers.size());
  std::iota(order.begin(), order.end(), 0);
  uint64_t best = UINT64_MAX;
  do {
    std::vector<uint64_t> off(p.buffers.size());
    uint64_t peak = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      size_t i = order[k];
      uint64_t size = aligned_size(p.buffers[i]), a = std::max<uint64_t>(1, p.buffers[i].alignment);
      for (uint64_t at = 0;; at += a) {
        bool clash = false;
        for (size_t q = 0; q < k && !clash; ++q) {
          size_t j = order[q];
          clash = p.conflict(i, j) && at < off[j] + aligned_size(p.buffers[j]) && off[j] < at + size;
        }
        if (!clash) {
          off[i] = at;
          break;
        }
      }
      peak = std::max(peak, off[i] + size);
    }
    best = std::min(best, peak);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

}  // namespace

TEST_CASE("every algorithm gives a valid layout at or above the lower bound", "[offsets]") {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 60; ++trial) {
    Problem p = random_problem(rng, 5 + trial % 40, 50, 1000, trial % 2 == 1);
    for (Algorithm a : {Algorithm::kBestFit, Algorithm::kGreedySize, Algorithm::kExact, Algorithm::kAuto}) {
      INFO("trial " << trial << " " << algorithm_name(a));
      Solution s = solve(p, {a, 0.2, false});
      CHECK(check_solution(p, s.offsets, s.peak) == "");
      CHECK(s.peak >= s.lower_bound);
      CHECK(s.lower_bound == lower_bound(p));
      for (size_t i = 0; i < p.buffers.size(); ++i) CHECK(s.offsets[i] % p.buffers[i].alignment == 0);
    }
  }
}

TEST_CASE("exact equals brute force on small problems", "[offsets]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    Problem p = random_problem(rng, 3 + trial % 5, 12, 9, trial % 3 == 0);
    INFO("trial " << trial);
    Solution s = solve(p, {Algorithm::kExact, 5.0, false});
    CHECK(check_solution(p, s.offsets, s.peak) == "");
    CHECK(s.peak == brute_force(p));
    CHECK(s.optimal);
  }
}

TEST_CASE("exact equals brute force on small problems with conflicts beyond the intervals (several streams)",
          "[offsets]") {
  // Pairs no synchronisation orders conflict whatever their intervals: the search must respect them, and may
  // claim optimality only when it is (brute force over all placement orders says what the optimum is).
  std::mt19937 rng(11);
  int above_interval_bound = 0;
  for (int trial = 0; trial < 120; ++trial) {
    // Dense and sparse ties: sparse ones leave time groups that are independent, and groups that are not.
    Problem p = random_problem(rng, 3 + trial % 6, 16, 9, trial % 3 == 0);
    p.extra_conflicts.assign(p.buffers.size(), {});
    for (size_t i = 0; i < p.buffers.size(); ++i)
      for (size_t j = i + 1; j < p.buffers.size(); ++j)
        if (rng() % (trial % 2 ? 3 : 12) == 0) {
          p.extra_conflicts[i].push_back(static_cast<int>(j));
          p.extra_conflicts[j].push_back(static_cast<int>(i));
        }
    for (auto& list : p.extra_conflicts) std::sort(list.begin(), list.end());
    INFO("trial " << trial);
    const uint64_t optimum = brute_force(p);
    const Solution s = solve(p, {Algorithm::kExact, 5.0, false});
    CHECK(check_solution(p, s.offsets, s.peak) == "");
    CHECK(s.peak == optimum);
    CHECK(s.optimal);
    if (optimum > lower_bound(p)) ++above_interval_bound;
  }
  CHECK(above_interval_bound > 0);  // some optimum is only proven by exhausting the search, not by the bound
}

TEST_CASE("extra conflicts (multi-stream) are respected by the heuristics", "[offsets]") {
  Problem p;
  p.buffers = {{"a", 0, 2, 100, 1}, {"b", 3, 5, 100, 1}, {"c", 6, 8, 100, 1}};
  p.extra_conflicts = {{1}, {0}, {}};  // a and b are not ordered by any synchronisation
  for (Algorithm a : {Algorithm::kBestFit, Algorithm::kGreedySize, Algorithm::kAuto}) {
    Solution s = solve(p, {a, 0.1, false});
    CHECK(check_solution(p, s.offsets, s.peak) == "");
    CHECK(s.peak == 200);  // a and b apart; c may share with either
  }
}

TEST_CASE("best fit weighs the room between the live blocks' top and the peak, as ORT's memory pattern does",
          "[offsets]") {
  // a, c live throughout; b and e die at 2, leaving a 3-byte hole at 4 and 2 bytes at 8 under the peak of 10.
  // x (2) fits the top room exactly, so y (3) fills the hole: 10. A best fit over holes alone needs 11.
  Problem p;
  p.buffers = {{"a", 0, 10, 4, 1}, {"b", 0, 2, 3, 1},  {"c", 0, 10, 1, 1},
               {"e", 0, 2, 2, 1},  {"x", 2, 10, 2, 1}, {"y", 3, 10, 3, 1}};
  Solution s = solve(p, {Algorithm::kBestFit, 0, false});
  CHECK(check_solution(p, s.offsets, s.peak) == "");
  CHECK(s.offsets == std::vector<uint64_t>{0, 4, 7, 8, 8, 4});
  CHECK(s.peak == 10);
}

TEST_CASE(
    "best fit's and greedy size's indexes give the same layout as the plain rule, weights and extra "
    "conflicts included",
    "[offsets]") {
  // The rule written plainly: each buffer, in the algorithm's order, in the gap among all placed conflicting
  // buffers that wastes least (best fit: the room under the peak included).
  auto plain = [](const Problem& p, const std::vector<size_t>& order, bool top_gap) {
    std::vector<uint64_t> off(p.buffers.size(), 0);
    std::vector<bool> placed(p.buffers.size(), false);
    uint64_t peak = 0;
    for (size_t i : order) {
      const Buffer& b = p.buffers[i];
      uint64_t size = aligned_size(b), align = std::max<uint64_t>(1, b.alignment);
      std::vector<std::pair<uint64_t, uint64_t>> ranges;
      for (size_t j = 0; j < p.buffers.size(); ++j)
        if (placed[j] && b.size > 0 && b.upper > b.lower && p.buffers[j].size > 0 &&
            p.buffers[j].upper > p.buffers[j].lower && p.conflict(i, j))
          ranges.push_back({off[j], off[j] + aligned_size(p.buffers[j])});
      std::sort(ranges.begin(), ranges.end());
      uint64_t current = 0, best = UINT64_MAX, waste = UINT64_MAX;
      for (auto [start, end] : ranges) {
        uint64_t at = (current + align - 1) / align * align;
        if (start >= at && start - at >= size && start - at - size < waste) waste = start - at - size, best = at;
        current = std::max(current, end);
      }
      uint64_t top = (current + align - 1) / align * align;
      if (top_gap && peak >= top && peak - top >= size && peak - top - size < waste) best = top;
      if (best == UINT64_MAX) best = top;
      off[i] = best;
      peak = std::max(peak, best + size);
      placed[i] = true;
    }
    return off;
  };
  auto by_start = [](const Problem& p) {
    std::vector<size_t> order(p.buffers.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return p.buffers[a].lower < p.buffers[b].lower; });
    return order;
  };
  auto by_size = [](const Problem& p) {  // largest first, then longest, then earliest
    std::vector<size_t> order(p.buffers.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const Buffer &x = p.buffers[a], &y = p.buffers[b];
      if (aligned_size(x) != aligned_size(y)) return aligned_size(x) > aligned_size(y);
      if (x.upper - x.lower != y.upper - y.lower) return x.upper - x.lower > y.upper - y.lower;
      return x.lower < y.lower;
    });
    return order;
  };
  auto check_both = [&](const Problem& p) {
    Solution fit = solve(p, {Algorithm::kBestFit, 0, false});
    CHECK(check_solution(p, fit.offsets, fit.peak) == "");
    CHECK(fit.offsets == plain(p, by_start(p), true));
    Solution greedy = solve(p, {Algorithm::kGreedySize, 0, false});
    CHECK(check_solution(p, greedy.offsets, greedy.peak) == "");
    CHECK(greedy.offsets == plain(p, by_size(p), false));
  };
  std::mt19937 rng(11);
  for (int trial = 0; trial < 80; ++trial) {
    Problem p = random_problem(rng, 10 + trial % 60, 40, 500, trial % 2 == 1);
    int64_t end = 0;
    for (const Buffer& b : p.buffers) end = std::max(end, b.upper);
    for (size_t i = 0; i < p.buffers.size(); i += 3) p.buffers[i].lower = 0, p.buffers[i].upper = end;  // weights
    if (trial % 4 == 0) {
      p.extra_conflicts.assign(p.buffers.size(), {});
      for (int k = 0; k < 5; ++k) {
        int a = static_cast<int>(rng() % p.buffers.size()), b = static_cast<int>(rng() % p.buffers.size());
        if (a == b) continue;
        p.extra_conflicts[a].push_back(b);
        p.extra_conflicts[b].push_back(a);
      }
    }
    INFO("trial " << trial);
    check_both(p);
  }
  // Larger: spans from one step to the whole run (the index's levels, from buckets of a few steps to a few of the
  // whole run), hundreds of conflicts per buffer (their sort by radix), sizes up to 2^40 and a negative start.
  for (int trial = 0; trial < 4; ++trial) {
    Problem p;
    const int n = 1500, horizon = 20000;
    for (int i = 0; i < n; ++i) {
      Buffer b;
      b.id = std::to_string(i);
      const int scale = static_cast<int>(rng() % 5);  // span up to 1, 10, 100, 1,000 or 10,000 steps
      int span = 1;
      for (int k = 0; k < scale; ++k) span *= 10;
      b.lower = static_cast<int64_t>(rng() % horizon) - (trial == 3 ? 5000 : 0);
      b.upper = b.lower + 1 + static_cast<int64_t>(rng() % static_cast<unsigned>(span));
      b.size = 1 + (uint64_t{rng()} << (trial * 4)) % (uint64_t{1} << (16 + trial * 8));
      b.alignment = uint64_t{1} << (rng() % 9);
      if (i % 97 == 0) b.size = 0;         // (never placed among the others)
      if (i % 50 == 1) b.upper = b.lower;  // (lives nowhere)
      p.buffers.push_back(b);
    }
    INFO("large trial " << trial);
    check_both(p);
  }
}

TEST_CASE("lifetimes across the whole 64-bit range are placed (the index's span computed without overflow)",
          "[offsets]") {
  // (Before, the index took upper - lower of the whole problem in signed arithmetic: these were an internal error.)
  Problem p;
  auto add = [&](const char* id, int64_t lower, int64_t upper, uint64_t size) {
    Buffer b;
    b.id = id;
    b.lower = lower;
    b.upper = upper;
    b.size = size;
    p.buffers.push_back(b);
  };
  add("a", INT64_MIN / 2, INT64_MAX / 2, 10);
  add("b", 0, 1, 5);
  add("c", INT64_MIN + 1, INT64_MAX, 7);
  add("d", 5, INT64_MAX, 3);
  add("e", 100, 100, 4);  // (lives nowhere)
  for (Algorithm a : {Algorithm::kBestFit, Algorithm::kGreedySize, Algorithm::kAuto}) {
    Solution s = solve(p, {a, 0, false});
    CHECK(check_solution(p, s.offsets, s.peak) == "");
    CHECK(s.peak == 22);
  }
}

TEST_CASE("the checker finds overlaps, misalignment and overflow", "[offsets]") {
  Problem p;
  p.buffers = {{"a", 0, 4, 8, 4}, {"b", 2, 6, 8, 4}, {"c", 6, 9, 8, 4}};
  CHECK(check_solution(p, {0, 8, 0}, 16) == "");
  CHECK_THAT(check_solution(p, {0, 4, 0}, 16), Catch::Contains("overlap"));
  CHECK_THAT(check_solution(p, {0, 10, 0}, 18), Catch::Contains("misaligned"));
  CHECK_THAT(check_solution(p, {0, 8, 12}, 16), Catch::Contains("past the arena"));
}

TEST_CASE("MiniMalloc's benchmark problems: C, F and G reach their optimum", "[offsets]") {
  // The three the search settles in well under a second (a few thousand nodes at most), so that the
  // budget is no limit even under the sanitizers; the others are in the benchmark.
  for (auto [name, best] : {std::pair{"C", 1039360ull}, {"F", 1048576ull}, {"G", 1048576ull}}) {
    INFO(name);
    std::string path = std::string(MEMPLAN_SHARED_DIR "/anchors/minimalloc/challenging/") + name + ".1048576.csv";
    Problem p = read_minimalloc_csv(read_file(path), path);
    Solution s = solve(p, {Algorithm::kAuto, 120.0, false});
    CHECK(check_solution(p, s.offsets, s.peak) == "");
    CHECK(s.peak == best);
    CHECK(s.optimal);
  }
}

TEST_CASE("MiniMalloc CSV: ids as names, alignment column, round trip, errors", "[offsets]") {
  Problem p = read_minimalloc_csv("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\n", "x.csv");
  REQUIRE(p.buffers.size() == 2);
  CHECK(p.buffers[0].id == "b1");
  Problem a = read_minimalloc_csv("id,lower,upper,size,alignment\n1,0,3,5,8\n", "a.csv");
  CHECK(a.buffers[0].alignment == 8);
  CHECK(aligned_size(a.buffers[0]) == 8);
  std::vector<uint64_t> off{0, 4};
  CHECK(write_minimalloc_csv(p, &off) == "id,lower,upper,size,offset\nb1,0,3,4,0\nb2,3,9,4,4\n");
  CHECK_THROWS_WITH(read_minimalloc_csv("", "e.csv"), Catch::Contains("e.csv: the file is empty"));
  CHECK_THROWS_WITH(read_minimalloc_csv("a,b\n", "h.csv"), Catch::Contains("header"));
  CHECK_THROWS_WITH(read_minimalloc_csv("id,lower,upper,size\n1,0,x,4\n", "n.csv"),
                    Catch::Contains("line 2: upper 'x'"));
  CHECK_THROWS_WITH(read_minimalloc_csv("id,lower,upper,size\n1,5,2,4\n", "o.csv"), Catch::Contains("upper < lower"));
}

TEST_CASE("auto says why its exact search did not run", "[offsets]") {
  // A very large arena: MiniMalloc's C, where both heuristics miss the optimum, a hundred times one after another.
  const std::string path = std::string(MEMPLAN_SHARED_DIR "/anchors/minimalloc/challenging/C.1048576.csv");
  const Problem c = read_minimalloc_csv(read_file(path), path);
  int64_t span = 0;
  for (const Buffer& b : c.buffers) span = std::max(span, b.upper);
  Problem big;
  for (int k = 0; k < 100; ++k)
    for (Buffer b : c.buffers) {
      b.id += "/" + std::to_string(k);
      b.lower += k * span;
      b.upper += k * span;
      big.buffers.push_back(b);
    }
  REQUIRE(big.buffers.size() > 20'000);
  const Solution heuristic = solve(big, {Algorithm::kGreedySize, 0, false});
  REQUIRE(heuristic.peak > lower_bound(big));
  const Solution s = solve(big, {Algorithm::kAuto, 1.0, false});
  CHECK(check_solution(big, s.offsets, s.peak) == "");
  CHECK(s.algorithm != "exact");
  CHECK(s.nodes_explored == 0);
  CHECK_THAT(s.note, Catch::Contains("exact search skipped") && Catch::Contains(std::to_string(big.buffers.size())));
  // Asked for by name, the search runs whatever the size. (Its budget counts its set-up too, which under the
  // sanitizers on a busy machine took most of the 2 s this test gave it: 8 s.)
  const Solution e = solve(big, {Algorithm::kExact, 8.0, false});
  CHECK(e.note.empty());
  CHECK(e.nodes_explored > 0);
}

TEST_CASE("the algorithm registry names each algorithm once and each name parses back", "[offsets][arena]") {
  std::vector<std::string> names;
  for (const Packer& p : packers()) {
    Algorithm parsed{};
    REQUIRE(parse_algorithm(p.name, parsed));
    CHECK(parsed == p.algorithm);
    CHECK(std::string(algorithm_name(p.algorithm)) == p.name);
    CHECK(std::string(p.help).size() > 10);
    CHECK(algorithm_names().find(p.name) != std::string::npos);
    CHECK(algorithm_help().find(p.help) != std::string::npos);
    names.push_back(p.name);
  }
  CHECK(names == std::vector<std::string>{"best-fit", "greedy-size", "exact", "auto"});
  Algorithm unused{};
  CHECK_FALSE(parse_algorithm("bestfit", unused));
  // Each algorithm, run through solve, says which one produced the layout (exact only when it improved on both
  // heuristics; here the heuristics already reach the bound).
  Problem p;
  p.buffers = {{"a", 0, 2, 100}, {"b", 1, 3, 50}, {"c", 2, 4, 100}};
  for (const Packer& packer : packers()) {
    const Solution s = solve(p, {packer.algorithm, 1.0, false});
    CHECK(check_solution(p, s.offsets, s.peak).empty());
    CHECK(s.peak == 150);
    CHECK(s.optimal);
  }
  CHECK(solve(p, {Algorithm::kGreedySize, 1.0, false}).algorithm == "greedy-size");
  CHECK(solve(p, {Algorithm::kBestFit, 1.0, false}).algorithm == "best-fit");
}
