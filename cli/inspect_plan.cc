// memplan inspect PLAN.json: where a plan's memory goes, in ten seconds; --svg/--html draw the timeline.
#include <algorithm>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "budget.h"
#include "common.h"
#include "memplan/api/internal.h"
#include "memplan/error.h"
#include "memplan/file_io.h"
#include "memplan/plan_doc/insight.h"
#include "memplan/plan_doc/picture.h"
#include "memplan/stage_times.h"
#include "memplan/text_escape.h"

namespace memplan::cli {
namespace {

std::string inspect_text(const std::string& path, const plan_doc::PlanDoc& plan, const plan_doc::PlanInsight& insight,
                         size_t top) {
  auto value_name = [&](int v) { return plan.values[v].name; };
  std::ostringstream out;
  auto unsized = plan_doc::unsized_allocations(plan);
  if (!unsized.empty()) {
    out << "INCOMPLETE    " << unsized.size() << " values the plan must allocate have no known size (";
    for (size_t i = 0; i < unsized.size() && i < 3; ++i) out << (i ? ", " : "") << value_name(unsized[i]);
    out << (unsized.size() > 3 ? ", ..." : "") << "): every figure below leaves them out and is a lower bound\n";
  }
  out << "plan          " << path << " (model " << plan.model_path << ", " << plan.nodes.size() << " nodes, "
      << plan.streams.size() << " stream(s))\n";
  for (const DeviceTotal& t : plan_doc::device_totals(plan)) {
    out << "device " << std::left << std::setw(7) << t.device << std::right << (t.complete() ? "" : "at least ")
        << human_bytes(t.total()) << " (" << total_breakdown(t) << ")\n";
    if (const DeviceTotal* ort = plan_doc::ort_total(plan, t.device))
      out << "              under ORT's rules " << human_bytes(ort->total())
          << " (memplan plan --like ort: its prediction of ONNX Runtime 1.30; scripts/ort-measure checks it)\n";
  }
  out << "              covers the arenas and the caller's inputs; not kernel workspaces, the CUDA context or ORT's "
         "arena growth (docs/planning.md: What the figures cover)\n";
  for (const auto& ai : insight.arenas) {
    const auto& a = plan.arenas[ai.arena];
    char line[256];
    std::snprintf(line, sizeof line, "arena %-12s %10s  lower bound %10s  efficiency %5.1f%%  %s%s\n", a.name.c_str(),
                  human_bytes(a.bytes).c_str(), human_bytes(a.lower_bound).c_str(),
                  a.bytes ? 100.0 * static_cast<double>(a.lower_bound) / static_cast<double>(a.bytes) : 100.0,
                  a.algorithm.c_str(), a.optimal ? ", optimal" : "");
    out << line;
    if (a.purpose != "activations") continue;
    out << "              no reuse would need " << human_bytes(ai.no_reuse_bytes) << "; this plan's buffers side by "
        << "side " << human_bytes(ai.distinct_buffer_bytes) << "; sharing offsets saves "
        << human_bytes(ai.distinct_buffer_bytes > a.bytes ? ai.distinct_buffer_bytes - a.bytes : 0) << " more\n";
    out << "              peak at step " << ai.peak_step;
    if (ai.peak_step >= 0 && ai.peak_step < static_cast<int>(plan.execution_order.size())) {
      const auto& n = plan.nodes[plan.execution_order[ai.peak_step]];
      out << " (node '" << n.label() << "')";
    }
    out << ", " << human_bytes(ai.peak_live) << " live:\n";
    for (size_t i = 0; i < ai.live_at_peak.size() && i < top; ++i)
      out << "                " << std::setw(12) << human_bytes(*plan.values[ai.live_at_peak[i]].bytes) << "  "
          << value_name(ai.live_at_peak[i]) << "\n";
    for (size_t i = 0; i < ai.workspaces_at_peak.size() && i < top; ++i) {
      const auto& n = plan.nodes[ai.workspaces_at_peak[i].first];
      out << "                " << std::setw(12) << human_bytes(ai.workspaces_at_peak[i].second) << "  the bodies of "
          << n.op_type << " '" << n.name << "' while it runs\n";
    }
    if (ai.live_at_peak.size() > top) out << "                ... " << ai.live_at_peak.size() - top << " more\n";
    auto breakdown = [&](const char* title, const std::vector<std::pair<std::string, uint64_t>>& parts) {
      out << "              by " << title << ":";
      for (size_t i = 0; i < parts.size() && i < 5; ++i)
        out << (i ? ", " : " ") << parts[i].first << " " << human_bytes(parts[i].second);
      out << (parts.size() > 5 ? ", ...\n" : "\n");
    };
    breakdown("op type", ai.peak_by_op);
    breakdown("layer", ai.peak_by_prefix);
  }
  // The bodies: per owner, each body's arenas and what the owner holds for them. Past `top` owners in one graph,
  // those holding the most, and a line for the rest (a graph of 20,000 Ifs would print 20,000 lines).
  std::function<void(const plan_doc::PlanDoc&, int)> bodies = [&](const plan_doc::PlanDoc& parent, int depth) {
    std::map<int, std::vector<size_t>> subs_of;  // owner -> its bodies, in the plan's order
    for (size_t i = 0; i < parent.subgraphs.size(); ++i) subs_of[parent.subgraphs[i].owner].push_back(i);
    auto held = [&](int owner) {
      uint64_t bytes = 0;
      for (const auto& w : parent.nodes[owner].workspace) bytes += w.bytes;
      return bytes;
    };
    std::vector<int> shown;
    for (const auto& entry : subs_of) shown.push_back(entry.first);
    uint64_t rest_bodies = 0, rest_held = 0;
    const size_t owners = shown.size();
    if (owners > top) {
      std::stable_sort(shown.begin(), shown.end(), [&](int a, int b) { return held(a) > held(b); });
      for (size_t i = top; i < owners; ++i) {
        rest_held = std::max(rest_held, held(shown[i]));
        for (size_t s : subs_of[shown[i]])
          for (const auto& a : parent.subgraphs[s].plan.arenas) rest_bodies += a.bytes;
      }
      shown.resize(top);
      std::sort(shown.begin(), shown.end());
    }
    bool first = depth == 0;
    const std::string indent = "              " + std::string(2 * static_cast<size_t>(depth), ' ');
    for (int owner : shown) {
      std::string line;
      for (size_t s : subs_of[owner]) {
        const auto& sub = parent.subgraphs[s];
        uint64_t bytes = 0;
        for (const auto& a : sub.plan.arenas) bytes += a.bytes;
        line += (line.empty() ? "" : ", ") + sub.attribute + " " + human_bytes(bytes) +
                (sub.plan.complete ? "" : " (INCOMPLETE)");
      }
      const auto& n = parent.nodes[owner];
      out << (first ? "bodies        " + std::string(2 * static_cast<size_t>(depth), ' ') : indent) << n.op_type << " '"
          << terminal_text(n.name) << "': " << terminal_text(line) << "; holds " << human_bytes(held(owner))
          << " while it runs\n";
      first = false;
      for (size_t s : subs_of[owner]) bodies(parent.subgraphs[s].plan, depth + 1);
    }
    if (owners > shown.size())
      out << indent << "... " << owners - shown.size()
          << (owners - shown.size() == 1 ? " more owner of bodies (its bodies' arenas "
                                         : " more owners of bodies (their bodies' arenas ")
          << human_bytes(rest_bodies) << " in all; each holds at most " << human_bytes(rest_held)
          << " while it runs; the plan's \"subgraphs\" lists every one)\n";
  };
  bodies(plan, 0);
  out << "largest       ";
  for (size_t i = 0; i < insight.largest.size() && i < top; ++i)
    out << (i ? "              " : "") << std::setw(12) << human_bytes(*plan.values[insight.largest[i]].bytes) << "  "
        << value_name(insight.largest[i]) << " (" << plan.values[insight.largest[i]].kind << ")\n";
  if (insight.largest.empty()) out << "(none)\n";
  return out.str();
}

}  // namespace

void run_inspect_plan(const std::string& path, bool json, size_t top, const std::string& svg, const std::string& html) {
  // Only one thing can go to stdout; the text report steps aside to stderr for a picture.
  if (svg == "-" && html == "-") fail_usage("--svg - and --html - would both write to stdout; give one a file");
  bool picture_on_stdout = svg == "-" || html == "-";
  if (picture_on_stdout && json) fail_usage("--json and --svg -/--html - would both write to stdout; give a file");
  for (const std::string& out : {svg, html})
    if (!out.empty()) check_output_path(out);
  std::optional<TimedStage> stage(std::in_place, "read plan");
  auto plan = plan_doc::read_plan_file(path);
  stage.emplace("analyse plan");
  auto insight = plan_doc::analyse(plan);
  stage.emplace("draw the timeline");
  std::vector<std::pair<std::string, std::string>> files;
  if (!svg.empty()) files.emplace_back(svg, plan_doc::render_svg(plan, insight));
  if (!html.empty()) files.emplace_back(html, plan_doc::render_html(plan, insight));
  write_files_atomically(files);
  stage.reset();  // (before the report: the status line and stdout share the terminal)
  if (json) {
    std::cout << api::inspect_plan_json(path, plan, insight, top);
  } else {
    std::string report = inspect_text(path, plan, insight, top);
    if (!svg.empty() && svg != "-") report += "timeline      " + svg + "\n";
    if (!html.empty() && html != "-") report += "page          " + html + "\n";
    (picture_on_stdout ? std::cerr : std::cout) << report;
  }
  leave_to_exit(plan);
  leave_to_exit(insight);
}

}  // namespace memplan::cli
