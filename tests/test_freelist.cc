// The freelist's per-stream parking (planner/src/freelist.h) finds the same first fit as a scan of every freed
// buffer with the happens-before test inside the check, on random sequences of frees and allocations on several
// streams whose knowledge of each other only grows.
#include <array>
#include <catch2/catch.hpp>
#include <random>

#include "freelist.h"

using namespace memplan;
using namespace memplan::planner;

TEST_CASE("the freelist parks candidates per stream and still takes the first fit", "[planner][freelist]") {
  constexpr size_t kValues = 400, kStreams = 3;
  for (unsigned seed = 0; seed < 20; ++seed) {
    std::mt19937 rng(seed);
    std::vector<Value> values(kValues);
    for (size_t v = 0; v < kValues; ++v) {
      values[v].index = static_cast<ValueId>(v);
      values[v].type_kind = TypeKind::kTensor;
      values[v].dtype = 1;
      values[v].has_shape = true;
      values[v].dims = {{static_cast<int64_t>(1 + v % 3), ""}};  // three shapes: three buckets
      values[v].bytes = 4 * (1 + v % 3);
    }
    // users[v][t]: the last position on stream t that used v (-1: none); known[s][t]: what stream s knows of t.
    std::vector<std::array<int, kStreams>> users(kValues);
    std::array<std::array<int, kStreams>, kStreams> known{};
    auto seen = [](const Value& v) { return SeenValue{v, v.has_shape, v.dims}; };  // with its own shape
    Freelist parking(kValues, true), scanning(kValues, true);
    parking.clear(kStreams);
    scanning.clear();
    std::vector<bool> listed(kValues, false);
    size_t taken = 0, refused = 0;
    for (int step = 0; step < 4000; ++step) {
      const size_t s = rng() % kStreams;
      for (size_t t = 0; t < kStreams; ++t)  // knowledge only grows, faster of itself
        known[s][t] += static_cast<int>(rng() % (t == s ? 3 : 2));
      const ValueId v = static_cast<ValueId>(rng() % kValues);
      if (!listed[v] && rng() % 2) {
        for (size_t t = 0; t < kStreams; ++t)
          users[v][t] = rng() % 3 ? -1 : known[t][t] + static_cast<int>(rng() % 4) - 2;
        parking.push(v, seen(values[v]), partition::Device{});
        scanning.push(v, seen(values[v]), partition::Device{});
        listed[v] = true;
        continue;
      }
      const SeenValue want = seen(values[rng() % kValues]);
      auto waits = [&](ValueId c) -> std::optional<std::pair<int, int>> {
        for (size_t t = 0; t < kStreams; ++t)
          if (users[c][t] >= 0 && known[s][t] <= users[c][t]) return std::make_pair(static_cast<int>(t), users[c][t]);
        return std::nullopt;
      };
      auto fits = [&](ValueId c) { return c % 5 != 0; };
      const auto a = parking.take_on_stream(
          want, partition::Device{}, s, waits, [&](size_t t) { return known[s][t]; }, fits);
      const auto b = scanning.take(want, partition::Device{}, [&](ValueId c) { return !waits(c) && fits(c); });
      REQUIRE(a == b);
      if (a) {
        listed[*a] = false;
        ++taken;
      } else {
        ++refused;
      }
    }
    CHECK(taken > 100);  // the sequences exercise both outcomes
    CHECK(refused > 100);
  }
}
