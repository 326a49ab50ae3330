// Offload planning over plain problems (offload/): small cases worked by hand, and random problems checked
// against an independent recount of what the choices leave on the device.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <sstream>

#include "memplan/arena/check.h"
#include "memplan/error.h"
#include "memplan/offload/device_layout.h"
#include "memplan/offload/from_plan.h"
#include "memplan/offload/offload.h"
#include "memplan/onnx_io/load.h"

using namespace memplan::offload;

namespace {

Buffer weight(uint64_t bytes, std::vector<int> uses) {
  return {bytes, true, true, std::move(uses)};
}
Buffer activation(uint64_t bytes, std::vector<int> uses) {
  return {bytes, false, true, std::move(uses)};
}

// Everything the result promises, recounted from the choices alone. Returns what is wrong, empty if nothing.
std::string check(const Problem& p, const Result& r) {
  std::ostringstream bad;
  const int steps = static_cast<int>(p.step_us.size());
  std::vector<uint64_t> live(steps, 0);
  uint64_t moved = 0;
  size_t copies = 0;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const Buffer& b = p.buffers[i];
    const Choice& c = r.choices[i];
    if (!c.offloaded) {
      const int from = b.weight ? 0 : b.uses.front(), to = b.weight ? steps - 1 : b.uses.back();
      for (int t = from; t <= to; ++t) live[t] += b.bytes;
      continue;
    }
    if (!b.offloadable || (p.scope == Scope::kWeights && !b.weight)) bad << "buffer " << i << " may not move\n";
    int previous_until = -1;
    size_t covered_uses = 0;
    for (size_t k = 0; k < c.residencies.size(); ++k) {
      const Residency& s = c.residencies[k];
      if (!(previous_until < s.from && s.from <= s.first_use && s.first_use <= s.last_use && s.last_use <= s.until &&
            s.until < steps))
        bad << "buffer " << i << " residency " << k << " out of order\n";
      previous_until = s.until;
      // The producer writes the first residency of an activation; every other one is copied in.
      if (s.copy_in != (b.weight || k > 0)) bad << "buffer " << i << " residency " << k << " copy_in wrong\n";
      if (s.copy_in) moved += b.bytes, ++copies;
      for (int t = s.from; t <= s.until; ++t) live[t] += b.bytes;
      for (int u : b.uses) covered_uses += s.first_use <= u && u <= s.last_use;
      if (!std::binary_search(b.uses.begin(), b.uses.end(), s.first_use) ||
          !std::binary_search(b.uses.begin(), b.uses.end(), s.last_use))
        bad << "buffer " << i << " residency " << k << " does not start and end at uses\n";
    }
    if (covered_uses != b.uses.size()) bad << "buffer " << i << ": a use is not on the device\n";
    if (!b.weight) {
      if (c.copy_out_after != b.uses.front()) bad << "buffer " << i << ": copy-out not after its producer\n";
      moved += b.bytes, ++copies;
    }
  }
  if (live != r.live) bad << "live bytes differ from the recount\n";
  const uint64_t peak = live.empty() ? 0 : *std::max_element(live.begin(), live.end());
  if (peak != r.peak) bad << "peak " << r.peak << " but the recount says " << peak << "\n";
  if (r.fits != (peak <= p.budget)) bad << "fits is wrong\n";
  if (moved != r.bytes_moved || copies != r.transfers.size()) bad << "transfers do not match the residencies\n";
  if (r.estimated_us + 1e-9 < r.compute_us) bad << "the estimate is faster than the compute alone\n";
  return bad.str();
}

Problem random_problem(std::mt19937& rng) {
  Problem p;
  const int steps = std::uniform_int_distribution<int>(1, 40)(rng);
  for (int t = 0; t < steps; ++t) p.step_us.push_back(std::uniform_int_distribution<int>(0, 50)(rng));
  const int n = std::uniform_int_distribution<int>(0, 30)(rng);
  for (int i = 0; i < n; ++i) {
    Buffer b;
    b.weight = rng() % 3 == 0;
    b.offloadable = rng() % 8 != 0;
    b.bytes = std::uniform_int_distribution<uint64_t>(0, 1 << 20)(rng);
    const int count = std::uniform_int_distribution<int>(b.weight ? 0 : 1, 5)(rng);
    for (int k = 0; k < count; ++k) b.uses.push_back(std::uniform_int_distribution<int>(0, steps - 1)(rng));
    std::sort(b.uses.begin(), b.uses.end());
    b.uses.erase(std::unique(b.uses.begin(), b.uses.end()), b.uses.end());
    p.buffers.push_back(b);
  }
  p.bytes_per_us = std::uniform_real_distribution<double>(1e2, 1e5)(rng);
  p.scope = rng() % 4 == 0 ? Scope::kWeights : Scope::kAll;
  return p;
}

}  // namespace

TEST_CASE("offload: nothing moves when the device holds everything", "[offload]") {
  Problem p;
  p.step_us = {10, 10, 10};
  p.buffers = {weight(100, {1}), activation(50, {0, 2})};
  p.budget = 150;
  const Result r = choose_offload(p);
  CHECK(check(p, r).empty());
  CHECK(r.fits);
  CHECK(r.peak == 150);
  CHECK(r.peak_without == 150);
  CHECK(r.transfers.empty());
  CHECK(r.estimated_us == r.compute_us);
  CHECK(r.compute_us == 30);
}

TEST_CASE("offload: a weight read late is brought in just in time, hidden by the compute before it", "[offload]") {
  Problem p;
  p.step_us = {10, 10, 10, 10, 10, 10};
  // The weight (1000 bytes at 100 bytes/us: 10 us) is read at step 5; an activation peaks at steps 0-2.
  p.buffers = {weight(1000, {5}), activation(800, {0, 2})};
  p.bytes_per_us = 100;
  p.budget = 1000;
  const Result r = choose_offload(p);
  INFO(check(p, r));
  CHECK(check(p, r).empty());
  REQUIRE(r.fits);
  REQUIRE(r.choices[0].offloaded);
  CHECK_FALSE(r.choices[1].offloaded);
  // Issued at step 4: its 10 us of compute covers the copy, so no step waits.
  REQUIRE(r.choices[0].residencies.size() == 1);
  CHECK(r.choices[0].residencies[0].from == 4);
  CHECK(r.choices[0].residencies[0].first_use == 5);
  REQUIRE(r.transfers.size() == 1);
  CHECK(r.transfers[0].to_device);
  CHECK(r.bytes_moved == 1000);
  CHECK(r.estimated_us == Approx(60));
  CHECK(r.live == std::vector<uint64_t>{800, 800, 800, 0, 1000, 1000});
}

TEST_CASE("offload: an activation idle across a peak goes out after its producer and comes back", "[offload]") {
  Problem p;
  p.step_us = std::vector<double>(10, 10);
  // A (400 bytes) is produced at 0 and read at 9; B (700 bytes) lives from 3 to 6.
  p.buffers = {activation(400, {0, 9}), activation(700, {3, 6})};
  p.bytes_per_us = 100;  // 4 us each way
  p.budget = 800;
  const Result r = choose_offload(p);
  INFO(check(p, r));
  CHECK(check(p, r).empty());
  REQUIRE(r.fits);
  const Choice& a = r.choices[0];
  REQUIRE(a.offloaded);
  CHECK(a.copy_out_after == 0);
  REQUIRE(a.residencies.size() == 2);
  CHECK_FALSE(a.residencies[0].copy_in);
  CHECK(a.residencies[0].until == 1);  // the copy-out (4 us, from 10 us) is done during step 1: held through it
  CHECK(a.residencies[1].first_use == 9);
  CHECK(a.residencies[1].from == 8);
  CHECK(r.bytes_moved == 800);
  CHECK(r.peak == 700);
  CHECK(r.estimated_us == Approx(100));
}

TEST_CASE("offload: a copy-out slower than the steps it overlaps makes the next step wait", "[offload]") {
  Problem p;
  p.step_us = std::vector<double>(10, 1);
  // A copy of 40 us behind 1 us steps: held until it is done, A would stay past its next use and free nothing. So
  // the step after A's producer waits for the copy-out, and the copy-in starts as late as the budget needs.
  p.buffers = {activation(4000, {0, 5}), activation(100, {2, 3})};
  p.bytes_per_us = 100;
  p.budget = 4000;
  const Result r = choose_offload(p);
  INFO(check(p, r));
  CHECK(check(p, r).empty());
  REQUIRE(r.fits);
  const Choice& a = r.choices[0];
  REQUIRE(a.offloaded);
  REQUIRE(a.residencies.size() == 2);
  CHECK(a.residencies[0].until == 0);  // no hold: step 1 waits for the copy-out
  CHECK(a.residencies[1].from == 4);   // issued after B is gone
  CHECK(r.live == std::vector<uint64_t>{4000, 0, 100, 100, 4000, 4000, 0, 0, 0, 0});
  // Step 1 waits 40 us for the copy-out, step 5 for the copy-in issued at step 4.
  CHECK(r.estimated_us == Approx(1 + 40 + 3 + 40 + 5));
}

TEST_CASE("offload: what no choice can fit is reported, with where", "[offload]") {
  Problem p;
  p.step_us = {1, 1, 1};
  p.buffers = {activation(600, {0, 1}), weight(600, {1})};
  p.budget = 1000;  // step 1 reads both
  const Result r = choose_offload(p);
  CHECK(check(p, r).empty());
  CHECK_FALSE(r.fits);
  CHECK(r.peak_at == 1);
  CHECK(r.peak == 1200);
  CHECK_FALSE(r.why.empty());
  SECTION("weights only: an activation never moves") {
    p.buffers = {activation(600, {0, 2}), weight(600, {2}), activation(500, {1, 2})};
    p.step_us = {1, 1, 1};
    p.budget = 1800;
    p.scope = Scope::kWeights;
    const Result w = choose_offload(p);
    CHECK(check(p, w).empty());
    CHECK_FALSE(w.choices[0].offloaded);
    CHECK_FALSE(w.choices[2].offloaded);
  }
}

TEST_CASE("offload: a weight nobody reads leaves the device for free", "[offload]") {
  Problem p;
  p.step_us = {1, 1};
  p.buffers = {weight(500, {}), weight(300, {0, 1})};
  p.budget = 300;
  const Result r = choose_offload(p);
  CHECK(check(p, r).empty());
  CHECK(r.fits);
  CHECK(r.choices[0].offloaded);
  CHECK(r.choices[0].residencies.empty());
  CHECK(r.bytes_moved == 0);
}

TEST_CASE("offload: a late copy-in makes its reader wait, and the estimate says so", "[offload]") {
  Problem p;
  p.step_us = {1, 1, 1};
  p.buffers = {weight(1000, {2}), activation(10, {0, 1})};
  p.bytes_per_us = 10;  // 100 us, and only 2 us of compute before its use
  p.budget = 10;
  const Result r = choose_offload(p);
  CHECK(check(p, r).empty());
  REQUIRE(r.fits == false);  // at step 2 the weight must be there: 1000 > 10
  p.budget = 1000;
  const Result r2 = choose_offload(p);
  CHECK(check(p, r2).empty());
  REQUIRE(r2.choices[0].offloaded);
  CHECK(r2.choices[0].residencies[0].from == 2);  // cannot start before step 1's activation is gone
  CHECK(r2.estimated_us == Approx(2 + 100 + 1));
}

TEST_CASE("offload: bad problems are refused with what is wrong", "[offload]") {
  Problem p;
  p.step_us = {1, 1};
  p.buffers = {activation(10, {1, 0})};
  CHECK_THROWS_WITH(choose_offload(p), Catch::Contains("buffer 0: uses must be distinct program counters in order"));
  p.buffers = {activation(10, {})};
  CHECK_THROWS_WITH(choose_offload(p), Catch::Contains("no producer"));
  p.buffers = {weight(10, {2})};
  CHECK_THROWS_AS(choose_offload(p), memplan::Error);
  p.buffers = {};
  p.bytes_per_us = 0;
  CHECK_THROWS_WITH(choose_offload(p), Catch::Contains("bandwidth"));
  p.bytes_per_us = 1;
  p.step_us = {-1};
  CHECK_THROWS_AS(choose_offload(p), memplan::Error);
}

TEST_CASE("offload: random problems keep every promise, at every budget", "[offload]") {
  std::mt19937 rng(21);
  int fitted = 0, moved = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Problem p = random_problem(rng);
    p.budget = std::numeric_limits<uint64_t>::max();
    const uint64_t full = choose_offload(p).peak;
    for (double fraction : {1.0, 0.75, 0.5, 0.25, 0.0}) {
      p.budget = static_cast<uint64_t>(static_cast<double>(full) * fraction);
      const Result r = choose_offload(p);
      INFO("trial " << trial << " budget " << p.budget << "\n" << check(p, r));
      REQUIRE(check(p, r).empty());
      CHECK(r.peak <= r.peak_without);
      CHECK(r.peak_without == full);
      if (!r.fits) {
        CHECK(r.peak_at >= 0);
        CHECK(r.peak > p.budget);
        CHECK_FALSE(r.why.empty());
      }
      fitted += r.fits && fraction < 1;
      moved += !r.transfers.empty();
      // The same problem, the same result.
      const Result again = choose_offload(p);
      CHECK(again.live == r.live);
      CHECK(again.bytes_moved == r.bytes_moved);
      CHECK(again.estimated_us == r.estimated_us);
    }
  }
  // The cases are not all trivial: many budgets below the peak are met by moving something.
  CHECK(fitted > 300);
  CHECK(moved > 500);
}

TEST_CASE("offload: the smallest fitting budget fits, and is bounded by what one step uses", "[offload]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    Problem p = random_problem(rng);
    const uint64_t smallest = smallest_fitting_budget(p, 1024);
    p.budget = smallest;
    const Result r = choose_offload(p);
    INFO("trial " << trial);
    CHECK(r.fits);
    CHECK(smallest <= r.peak_without);
    std::vector<uint64_t> used(p.step_us.size(), 0);
    for (const auto& b : p.buffers)
      for (int u : b.uses) used[u] += b.bytes;
    CHECK(smallest >= (used.empty() ? 0 : *std::max_element(used.begin(), used.end())));
  }
}

TEST_CASE("offload: the problem of a planned model agrees with its plan and layout", "[offload]") {
  using namespace memplan;
  onnx_io::LoadOptions load;
  load.overrides.dims = {{"batch", 1}, {"seq", 128}};
  const Model m = onnx_io::load_model(MEMPLAN_SHARED_DIR "/models/gpt_like.onnx", load);
  planner::PlanRequest request;
  request.partition.device = {partition::DeviceType::kGpu, 0};
  request.ort_rules_estimate = false;
  const planner::PlannedModel planned = planner::plan_model(m, request);
  PlanProblem pp = offload_problem(planned, request.partition.device);
  REQUIRE(pp.problem.buffers.size() == pp.buffer_value.size());
  CHECK(pp.problem.step_us.size() == planned.plan.execution_order.size());
  // The GPU's arenas by purpose.
  uint64_t weights = 0, activation_bound = 0, arenas = 0;
  for (const auto& a : planned.layout.arenas) {
    if (!(a.location == request.partition.device)) continue;
    arenas += a.bytes;
    if (a.purpose == "weights") weights = a.bytes;
    if (a.purpose == "activations") activation_bound = a.lower_bound;
  }
  // Weights are placed back to back at 256-byte alignment, so the arena is their sum up to the padding.
  CHECK(pp.weight_bytes <= weights);
  CHECK(weights - pp.weight_bytes < 256 * pp.problem.buffers.size());
  pp.problem.budget = std::numeric_limits<uint64_t>::max();
  const Result none = choose_offload(pp.problem);
  // Live bytes: at least the weights and the activations' lower bound, at most the arenas laid out.
  CHECK(none.peak >= pp.weight_bytes + activation_bound);
  CHECK(none.peak <= arenas);
  CHECK(none.transfers.empty());
  // Half the device: it fits by moving weights and activations, and the recount agrees.
  pp.problem.budget = none.peak / 2;
  const Result half = choose_offload(pp.problem);
  INFO(check(pp.problem, half));
  CHECK(check(pp.problem, half).empty());
  CHECK(half.fits);
  CHECK(half.bytes_moved > none.peak / 2);
  CHECK(half.estimated_us > half.compute_us);
  // Outputs stay: no buffer holding a graph output moves.
  for (size_t i = 0; i < pp.problem.buffers.size(); ++i)
    if (pp.buffer_value[i] != kNoId && planned.graph().values[pp.buffer_value[i]].is_graph_output)
      CHECK_FALSE(half.choices[i].offloaded);
}

TEST_CASE("offload: the arena with staging regions is checked, and the fit loop meets the budget it claims",
          "[offload]") {
  std::mt19937 rng(1234);
  memplan::arena::SolveOptions solve;
  solve.algorithm = memplan::arena::Algorithm::kBestFit;
  int fitted = 0, lowered = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Problem p = random_problem(rng);
    p.budget = std::numeric_limits<uint64_t>::max();
    const Result none = choose_offload(p);
    const uint64_t full = lay_out_device(p, none, 64, solve).solution.peak;
    for (double fraction : {0.9, 0.6, 0.3}) {
      p.budget = static_cast<uint64_t>(static_cast<double>(full) * fraction);
      const Fit f = fit_device(p, 64, solve);
      INFO("trial " << trial << " budget " << p.budget);
      const DeviceLayout& l = f.layout;
      CHECK(memplan::arena::check_solution(l.problem, l.solution.offsets, l.solution.peak).empty());
      CHECK(f.fits == (f.choice.fits && l.solution.peak <= p.budget));
      // Every residency of every moved buffer has its staging region, and nothing else of it is placed.
      size_t residencies = 0, placed_moved = 0;
      for (const auto& c : f.choice.choices) residencies += c.residencies.size();
      for (size_t k = 0; k < l.buffer.size(); ++k) placed_moved += l.residency[k] >= 0;
      CHECK(placed_moved == residencies);
      for (size_t k = 0; k < l.buffer.size(); ++k)
        CHECK((l.residency[k] >= 0) == f.choice.choices[l.buffer[k]].offloaded);
      fitted += f.fits;
      lowered += f.fits && f.rounds > 1;
    }
  }
  CHECK(fitted > 150);
  CHECK(lowered > 0);  // fragmentation made the loop lower its target at least once, and it then fit
}
