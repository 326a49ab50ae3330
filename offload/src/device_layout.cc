#include "memplan/offload/device_layout.h"

#include <algorithm>
#include <limits>
#include <string>

namespace memplan::offload {

DeviceLayout lay_out_device(const Problem& problem, const Result& choice, uint64_t alignment,
                            const arena::SolveOptions& solve) {
  DeviceLayout out;
  const auto steps = static_cast<int64_t>(problem.step_us.size());
  auto add = [&](int b, int r, int64_t lower, int64_t upper) {
    arena::Buffer x;
    x.id = r < 0 ? std::to_string(b) : std::to_string(b) + "." + std::to_string(r);
    x.lower = lower;
    x.upper = upper;
    x.size = problem.buffers[b].bytes;
    x.alignment = alignment;
    out.problem.buffers.push_back(std::move(x));
    out.buffer.push_back(b);
    out.residency.push_back(r);
  };
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer& b = problem.buffers[i];
    const int index = static_cast<int>(i);
    if (b.bytes == 0) continue;
    if (i < choice.choices.size() && choice.choices[i].offloaded) {
      const auto& rs = choice.choices[i].residencies;
      for (size_t r = 0; r < rs.size(); ++r) add(index, static_cast<int>(r), rs[r].from, rs[r].until + 1);
    } else if (b.weight) {
      add(index, -1, 0, std::max<int64_t>(steps, 1));
    } else {
      add(index, -1, b.uses.front(), b.uses.back() + 1);
    }
  }
  out.solution = arena::solve(out.problem, solve);
  return out;
}

Fit fit_device(Problem problem, uint64_t alignment, const arena::SolveOptions& solve, int max_rounds) {
  const uint64_t budget = problem.budget;
  Fit fit;
  fit.target = budget;
  for (fit.rounds = 1;; ++fit.rounds) {
    problem.budget = fit.target;
    fit.choice = choose_offload(problem);
    fit.layout = lay_out_device(problem, fit.choice, alignment, solve);
    fit.fits = fit.choice.fits && fit.layout.solution.peak <= budget;
    if (fit.fits || !fit.choice.fits || fit.rounds >= max_rounds) break;
    const uint64_t excess = fit.layout.solution.peak - budget;
    if (excess >= fit.target) break;
    fit.target -= std::max<uint64_t>(excess, alignment);
  }
  fit.choice.fits = fit.fits;  // the budget is the arena's, not the live bytes'
  return fit;
}

uint64_t smallest_fitting_arena(Problem problem, uint64_t alignment, const arena::SolveOptions& solve,
                                uint64_t granularity) {
  granularity = std::max<uint64_t>(granularity, 1);
  problem.budget = std::numeric_limits<uint64_t>::max();
  const Result none = choose_offload(problem);
  uint64_t hi = lay_out_device(problem, none, alignment, solve).solution.peak;
  uint64_t lo = smallest_fitting_budget(problem, granularity);  // live bytes: no arena is smaller
  lo = lo > granularity ? lo - granularity : 0;
  while (hi - lo > granularity) {
    const uint64_t mid = lo + (hi - lo) / 2;
    problem.budget = mid;
    if (fit_device(problem, alignment, solve).fits)
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

}  // namespace memplan::offload
