// A search's budget counted in work done instead of seconds: the same input and budget give the same result on
// any machine and under any load (a wall-clock budget made plans differ from run to run). Budgets are given in
// seconds (--time-budget) and converted at a rate measured on one core of the development machine, so a second
// of budget is about a second of search there.
#pragma once

#include <algorithm>
#include <cstdint>

namespace memplan {

struct WorkBudget {
  uint64_t left = 0;  // units still to spend

  WorkBudget() = default;
  WorkBudget(double seconds, double units_per_second)
      : left(static_cast<uint64_t>(std::max(0.0, seconds) * units_per_second)) {}

  // Spends `units` if that many are left; otherwise spends what is left and says no.
  bool spend(uint64_t units) {
    if (units > left) {
      left = 0;
      return false;
    }
    left -= units;
    return true;
  }
  bool exhausted() const { return left == 0; }
};

}  // namespace memplan
