// memplan validate: valid plans pass; every kind of corruption is caught (detection rate per kind).
#include <catch2/catch.hpp>
#include <iostream>
#include <map>

#include "memplan/error.h"
#include "memplan/plan_doc/corrupt.h"
#include "memplan/plan_doc/plan_doc.h"
#include "memplan/validate/validate.h"
#include "plan_fixtures.h"

using namespace memplan;
using namespace memplan::testing;

TEST_CASE("every plan memplan makes is valid", "[validate]") {
  for (const PlanCase& c : standard_plan_cases()) {
    INFO(c.label);
    auto report = validate::validate_plan(plan_doc::read_plan_doc(c.json, c.label));
    for (const auto& v : report.violations) UNSCOPED_INFO(v.check << ": " << v.message);
    CHECK(report.ok());
    CHECK(report.uses_checked > 0);
  }
}

TEST_CASE("mutation tests: each kind of corruption is detected", "[validate][mutation]") {
  constexpr int kSeeds = 6;
  std::map<std::string, std::pair<int, int>> rate;  // kind -> (detected, applied)
  for (const PlanCase& c : standard_plan_cases())
    for (auto kind : plan_doc::all_corruptions())
      for (int seed = 0; seed < kSeeds; ++seed) {
        auto j = nlohmann::ordered_json::parse(c.json);
        std::string what;
        if (!plan_doc::corrupt_plan(j, kind, static_cast<uint64_t>(seed), what)) continue;
        auto& r = rate[plan_doc::corruption_name(kind)];
        ++r.second;
        auto report = validate::validate_plan(plan_doc::read_plan_doc(j.dump(), c.label));
        if (!report.ok())
          ++r.first;
        else
          UNSCOPED_INFO("undetected in " << c.label << ": " << what);
      }
  std::cout << "validate mutation detection:";
  for (const auto& [kind, r] : rate) std::cout << " " << kind << " " << r.first << "/" << r.second;
  std::cout << "\n";
  // Every kind applied somewhere, and caught every time.
  REQUIRE(rate.size() == plan_doc::all_corruptions().size());
  for (const auto& [kind, r] : rate) {
    INFO(kind);
    CHECK(r.second > 0);
    CHECK(r.first == r.second);
  }
}

TEST_CASE("malformed plan files are bad input naming the field", "[validate]") {
  CHECK_THROWS_WITH(plan_doc::read_plan_doc("{", "p.json"), Catch::StartsWith("p.json: not valid JSON"));
  CHECK_THROWS_WITH(plan_doc::read_plan_doc("{\"format\":\"other\"}", "p.json"), Catch::Contains("not a memplan plan"));
  auto j = nlohmann::ordered_json::parse(standard_plan_cases()[0].json);
  j["version"] = 9;
  CHECK_THROWS_WITH(plan_doc::read_plan_doc(j.dump(), "p.json"), Catch::Contains("version 9 is not supported"));
  j = nlohmann::ordered_json::parse(standard_plan_cases()[0].json);
  j["nodes"][0]["inputs"][0] = 99999;
  CHECK_THROWS_WITH(plan_doc::read_plan_doc(j.dump(), "p.json"),
                    Catch::Contains("reads value 99999, which does not exist"));
  j = nlohmann::ordered_json::parse(standard_plan_cases()[0].json);
  j["values"].erase(0);
  CHECK_THROWS_AS(plan_doc::read_plan_doc(j.dump(), "p.json"), Error);
}
