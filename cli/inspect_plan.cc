// memplan inspect PLAN.json: where a plan's memory goes, in ten seconds; --svg/--html draw the timeline.
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common.h"
#include "memplan/file_io.h"
#include "memplan/plan_doc/insight.h"

namespace memplan::cli {

void run_inspect_plan(const std::string& path, const std::string& text, bool json, size_t top, const std::string& svg,
                      const std::string& html) {
  auto plan = plan_doc::read_plan_doc(text, path);
  auto insight = plan_doc::analyse(plan);
  if (!svg.empty()) write_file_atomically(svg, plan_doc::render_svg(plan, insight));
  if (!html.empty()) write_file_atomically(html, plan_doc::render_html(plan, insight));
  auto value_name = [&](int v) { return plan.values[v].name; };
  if (json) {
    nlohmann::ordered_json j;
    j["format"] = "memplan.inspect-plan";
    j["version"] = 1;
    j["plan"] = path;
    j["model"] = plan.model_path;
    j["input_bytes"] = insight.input_bytes;
    j["arenas"] = nlohmann::ordered_json::array();
    for (const auto& ai : insight.arenas) {
      const auto& a = plan.arenas[ai.arena];
      nlohmann::ordered_json live = nlohmann::ordered_json::array();
      for (size_t i = 0; i < ai.live_at_peak.size() && i < top; ++i)
        live.push_back({{"value", value_name(ai.live_at_peak[i])}, {"bytes", *plan.values[ai.live_at_peak[i]].bytes}});
      j["arenas"].push_back(
          {{"name", a.name},
           {"purpose", a.purpose},
           {"bytes", a.bytes},
           {"lower_bound", a.lower_bound},
           {"efficiency", a.bytes ? static_cast<double>(a.lower_bound) / static_cast<double>(a.bytes) : 1.0},
           {"peak_step", ai.peak_step},
           {"live_at_peak", live},
           {"no_reuse_bytes", ai.no_reuse_bytes},
           {"same_shape_reuse_bytes", ai.same_shape_bytes}});
    }
    j["largest"] = nlohmann::ordered_json::array();
    for (size_t i = 0; i < insight.largest.size() && i < top; ++i)
      j["largest"].push_back({{"value", value_name(insight.largest[i])},
                              {"bytes", *plan.values[insight.largest[i]].bytes},
                              {"kind", plan.values[insight.largest[i]].kind}});
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::ostringstream out;
  out << "plan          " << path << " (model " << plan.model_path << ", " << plan.nodes.size() << " nodes, "
      << plan.streams.size() << " streams)\n";
  out << "inputs        " << human_bytes(insight.input_bytes) << " provided by the caller\n";
  for (const auto& ai : insight.arenas) {
    const auto& a = plan.arenas[ai.arena];
    char line[256];
    std::snprintf(line, sizeof line, "arena %-12s %10s  lower bound %10s  efficiency %5.1f%%  %s%s\n", a.name.c_str(),
                  human_bytes(a.bytes).c_str(), human_bytes(a.lower_bound).c_str(),
                  a.bytes ? 100.0 * static_cast<double>(a.lower_bound) / static_cast<double>(a.bytes) : 100.0,
                  a.algorithm.c_str(), a.optimal ? ", optimal" : "");
    out << line;
    if (a.purpose != "activations") continue;
    out << "              no reuse would need " << human_bytes(ai.no_reuse_bytes) << ", ORT's same-shape reuse "
        << human_bytes(ai.same_shape_bytes) << "; memplan saves "
        << human_bytes(ai.same_shape_bytes > a.bytes ? ai.same_shape_bytes - a.bytes : 0) << " more\n";
    out << "              peak at step " << ai.peak_step;
    if (ai.peak_step >= 0 && ai.peak_step < static_cast<int>(plan.execution_order.size())) {
      const auto& n = plan.nodes[plan.execution_order[ai.peak_step]];
      out << " (node '" << (n.name.empty() ? n.op_type : n.name) << "')";
    }
    out << ", " << human_bytes(ai.peak_live) << " live:\n";
    for (size_t i = 0; i < ai.live_at_peak.size() && i < top; ++i)
      out << "                " << std::setw(12) << human_bytes(*plan.values[ai.live_at_peak[i]].bytes) << "  "
          << value_name(ai.live_at_peak[i]) << "\n";
    if (ai.live_at_peak.size() > top) out << "                ... " << ai.live_at_peak.size() - top << " more\n";
  }
  out << "largest       ";
  for (size_t i = 0; i < insight.largest.size() && i < top; ++i)
    out << (i ? "              " : "") << std::setw(12) << human_bytes(*plan.values[insight.largest[i]].bytes) << "  "
        << value_name(insight.largest[i]) << " (" << plan.values[insight.largest[i]].kind << ")\n";
  if (insight.largest.empty()) out << "(none)\n";
  if (!svg.empty()) out << "timeline      " << svg << "\n";
  if (!html.empty()) out << "page          " << html << "\n";
  std::cout << out.str();
}

}  // namespace memplan::cli
