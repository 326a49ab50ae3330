// The replay harness on its CPU twin: every plan replays clean (with jitter), and corrupted plans are
// caught; prints the detection rate per kind of corruption.
#include <catch2/catch.hpp>
#include <iostream>
#include <map>

#include "memplan/plan_doc/corrupt.h"
#include "memplan/plan_doc/plan_doc.h"
#include "memplan/replay/replay.h"
#include "plan_fixtures.h"

using namespace memplan;
using namespace memplan::testing;

namespace {
const std::vector<PlanCase>& cases() { return standard_plan_cases(); }
}  // namespace

TEST_CASE("every plan replays clean on CPU threads, with jitter over several seeds", "[replay]") {
  for (const PlanCase& c : cases()) {
    INFO(c.label);
    replay::ReplayOptions o;
    o.jitter = true;
    o.iterations = 3;
    o.seed = 11;
    o.sample = c.label.find("bert") != std::string::npos;  // keep the big one quick
    auto report = replay::replay(plan_doc::read_plan_doc(c.json, c.label), o);
    for (const auto& e : report.errors) UNSCOPED_INFO(e);
    CHECK(report.ok());
    CHECK(report.bytes_verified > 0);
    CHECK(report.iterations == 3);
  }
}

TEST_CASE("replay catches corrupted plans", "[replay][mutation]") {
  // Deterministic kinds must be caught every time; dropped synchronisation shows up only when the race
  // materialises, so those runs use jitter and several iterations.
  std::map<std::string, std::pair<int, int>> rate;
  for (const PlanCase& c : cases()) {
    // The big models take long under jitter; the samples and three shared models cover every kind.
    if (c.label.find("bert") != std::string::npos || c.label.find("inception") != std::string::npos ||
        c.label.find("resnet50") != std::string::npos)
      continue;
    for (auto kind : plan_doc::all_corruptions())
      for (uint64_t seed = 0; seed < 3; ++seed) {
        auto j = nlohmann::ordered_json::parse(c.json);
        std::string what;
        if (!plan_doc::corrupt_plan(j, kind, seed, what)) continue;
        replay::ReplayOptions o;
        o.jitter = true;
        o.iterations = 4;
        o.seed = 100 + seed;
        o.timeout_s = 10;
        auto report = replay::replay(plan_doc::read_plan_doc(j.dump(), c.label), o);
        auto& r = rate[plan_doc::corruption_name(kind)];
        ++r.second;
        if (!report.ok()) ++r.first;
        else UNSCOPED_INFO("not caught in " << c.label << ": " << what);
      }
  }
  std::cout << "replay mutation detection (CPU threads, jitter, 4 iterations):";
  for (const auto& [kind, r] : rate) std::cout << " " << kind << " " << r.first << "/" << r.second;
  std::cout << "\n";
  REQUIRE(rate.size() == plan_doc::all_corruptions().size());
  for (const char* kind : {"offset", "shrink", "misalign", "kind"}) {
    INFO(kind);
    CHECK(rate[kind].first == rate[kind].second);
  }
  // A release moved onto a node whose kernel ends after the last read, or a dropped sync whose race does
  // not materialise in 4 jittered runs, goes unseen at run time; `validate` catches all of them statically.
  CHECK(rate["release"].first * 10 >= rate["release"].second * 8);
  for (const char* kind : {"wait", "barrier"}) {
    INFO(kind);
    CHECK(rate[kind].second > 0);
    CHECK(rate[kind].first > 0);
  }
}
