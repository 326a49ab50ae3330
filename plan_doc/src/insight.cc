#include "memplan/plan_doc/insight.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace memplan::plan_doc {
namespace {

uint64_t align(uint64_t v, uint64_t a) {
  return a ? (v + a - 1) / a * a : v;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

const char* color_of(const std::string& kind, bool inplace) {
  if (kind == "Allocate") return "#4e79a7";
  if (kind == "Reuse") return inplace ? "#59a14f" : "#76b7b2";
  if (kind == "AllocateOutput") return "#f28e2b";
  if (kind == "AllocateStatically") return "#9c755f";
  if (kind == "Share") return "#edc948";
  return "#bab0ac";
}

std::string human(uint64_t b) {
  const char* u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int i = 0;
  while (v >= 1024 && i < 4) v /= 1024, ++i;
  std::ostringstream os;
  os.precision(i ? 3 : 0);
  os << std::fixed << v << " " << u[i];
  return os.str();
}

}  // namespace

PlanInsight analyse(const PlanDoc& p) {
  PlanInsight in;
  std::map<int, ArenaInsight> by_arena;
  for (size_t a = 0; a < p.arenas.size(); ++a) {
    ArenaInsight& ai = by_arena[static_cast<int>(a)];
    ai.arena = static_cast<int>(a);
    ai.bytes = p.arenas[a].bytes;
    ai.lower_bound = p.arenas[a].lower_bound;
  }
  std::map<int, std::set<int>> roots;
  for (const ValueDoc& v : p.values) {
    if (v.graph_input && v.bytes) in.input_bytes += *v.bytes;
    if (v.arena < 0 || !v.bytes) continue;
    ArenaInsight& ai = by_arena[v.arena];
    uint64_t al = p.arenas[v.arena].alignment;
    ai.no_reuse_bytes += align(*v.bytes, al);
    if (roots[v.arena].insert(v.reused_buffer).second && p.values[v.reused_buffer].bytes)
      ai.same_shape_bytes += align(*p.values[v.reused_buffer].bytes, al);
  }
  // The peak: program counter where the bytes of distinct live regions add up most.
  const int steps = static_cast<int>(p.execution_order.size());
  for (auto& [a, ai] : by_arena) {
    std::vector<int64_t> delta(static_cast<size_t>(steps) + 2, 0);
    // One region per in-place chain (its members share memory and follow one another in time).
    std::map<int, std::pair<std::pair<int, int>, uint64_t>> units;  // chain root -> (span, bytes)
    for (const ValueDoc& v : p.values) {
      if (v.arena != a || !v.bytes) continue;
      int root = v.index;
      while (p.values[root].inplace_of >= 0) root = p.values[root].inplace_of;
      auto [it, fresh] = units.emplace(root, std::pair{std::pair{v.first_use, v.last_use}, *v.bytes});
      if (!fresh) {
        it->second.first = {std::min(it->second.first.first, v.first_use),
                            std::max(it->second.first.second, v.last_use)};
        it->second.second = std::max(it->second.second, *v.bytes);
      }
    }
    for (const auto& [root, unit] : units) {
      int f = std::max(0, unit.first.first), l = std::clamp(unit.first.second, f, std::max(steps - 1, 0));
      delta[f] += static_cast<int64_t>(unit.second);
      delta[l + 1] -= static_cast<int64_t>(unit.second);
    }
    int64_t live = 0;
    for (int t = 0; t < std::max(steps, 1); ++t) {
      live += delta[t];
      if (static_cast<uint64_t>(live) > ai.peak_live) ai.peak_live = static_cast<uint64_t>(live), ai.peak_step = t;
    }
    for (const ValueDoc& v : p.values)
      if (v.arena == a && v.bytes && v.first_use <= ai.peak_step && v.last_use >= ai.peak_step)
        ai.live_at_peak.push_back(v.index);
    std::sort(ai.live_at_peak.begin(), ai.live_at_peak.end(),
              [&](int x, int y) { return *p.values[x].bytes > *p.values[y].bytes; });
    in.arenas.push_back(ai);
  }
  for (const ValueDoc& v : p.values)
    if (v.bytes && !v.initializer) in.largest.push_back(v.index);
  std::stable_sort(in.largest.begin(), in.largest.end(),
                   [&](int x, int y) { return *p.values[x].bytes > *p.values[y].bytes; });
  return in;
}

std::string render_svg(const PlanDoc& p, const PlanInsight& insight) {
  const double width = 1200, panel_height = 360, left = 90, right = 20, top = 40, gap = 70;
  std::vector<const ArenaInsight*> panels;
  for (const auto& ai : insight.arenas)
    if (p.arenas[ai.arena].purpose != "weights") panels.push_back(&ai);
  const double height = top + static_cast<double>(panels.size()) * (panel_height + gap) + 20;
  const double steps = std::max<double>(1, static_cast<double>(p.execution_order.size()));
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<title>memplan memory timeline: " << escape(p.graph) << "</title>\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << left << "\" y=\"22\" font-size=\"15\">" << escape(p.model_path)
      << " — memory timeline (x: execution step, y: arena offset)</text>\n";
  double y0 = top;
  for (const ArenaInsight* ai : panels) {
    const ArenaDoc& arena = p.arenas[ai->arena];
    const double scale_y = arena.bytes ? panel_height / static_cast<double>(arena.bytes) : 1;
    const double scale_x = (width - left - right) / steps;
    auto X = [&](double step) { return left + step * scale_x; };
    auto Y = [&](double offset) { return y0 + panel_height - offset * scale_y; };
    svg << "<g class=\"arena\"><text x=\"" << left << "\" y=\"" << y0 - 6 << "\" font-weight=\"bold\">arena "
        << escape(arena.name) << ": " << human(arena.bytes) << ", lower bound " << human(arena.lower_bound) << " ("
        << escape(arena.algorithm) << (arena.optimal ? ", optimal" : "") << ")</text>\n";
    svg << "<rect x=\"" << left << "\" y=\"" << y0 << "\" width=\"" << width - left - right << "\" height=\""
        << panel_height << "\" fill=\"#f7f7f7\" stroke=\"#999\"/>\n";
    for (const ValueDoc& v : p.values) {
      if (v.arena != ai->arena || !v.bytes || *v.bytes == 0) continue;
      double x1 = X(std::max(0, v.first_use)), x2 = X(std::max(v.first_use, v.last_use) + 1);
      double ya = Y(static_cast<double>(v.offset + *v.bytes)), yb = Y(static_cast<double>(v.offset));
      std::string producer =
          v.producer >= 0 ? p.nodes[v.producer].name + " (" + p.nodes[v.producer].op_type + ")" : "(none)";
      svg << "<rect x=\"" << x1 << "\" y=\"" << ya << "\" width=\"" << std::max(0.5, x2 - x1) << "\" height=\""
          << std::max(0.5, yb - ya) << "\" fill=\"" << color_of(v.kind, v.inplace)
          << "\" stroke=\"white\" stroke-width=\"0.3\">"
          << "<title>" << escape(v.name) << " — " << v.kind << ", " << human(*v.bytes) << " at offset " << v.offset
          << ", steps " << v.first_use << "–" << v.last_use << ", produced by " << escape(producer)
          << "</title></rect>\n";
    }
    double lb = Y(static_cast<double>(arena.lower_bound));
    svg << "<line x1=\"" << left << "\" x2=\"" << width - right << "\" y1=\"" << lb << "\" y2=\"" << lb
        << "\" stroke=\"#e15759\" stroke-dasharray=\"6 3\"><title>lower bound " << arena.lower_bound
        << " bytes</title></line>\n";
    if (arena.lower_bound != arena.bytes) svg << "<text x=\"4\" y=\"" << lb + 4 << "\" fill=\"#e15759\">bound</text>\n";
    svg << "<text x=\"4\" y=\"" << Y(static_cast<double>(arena.bytes)) + 10 << "\">" << human(arena.bytes)
        << "</text>\n";
    svg << "<text x=\"4\" y=\"" << y0 + panel_height << "\">0</text>\n";
    if (ai->peak_step >= 0) {
      double px = X(ai->peak_step + 0.5);
      svg << "<line x1=\"" << px << "\" x2=\"" << px << "\" y1=\"" << y0 << "\" y2=\"" << y0 + panel_height
          << "\" stroke=\"black\" stroke-width=\"1\"><title>peak at step " << ai->peak_step << ": " << ai->peak_live
          << " bytes live</title></line>\n";
      svg << "<text x=\"" << px + 3 << "\" y=\"" << y0 + 14 << "\">peak, step " << ai->peak_step << "</text>\n";
    }
    svg << "<text x=\"" << left << "\" y=\"" << y0 + panel_height + 14 << "\">step 0</text>\n";
    svg << "<text x=\"" << width - right - 60 << "\" y=\"" << y0 + panel_height + 14 << "\">step " << steps - 1
        << "</text>\n";
    svg << "</g>\n";
    y0 += panel_height + gap;
  }
  // Legend.
  double lx = left;
  for (auto [label, color] : std::vector<std::pair<const char*, const char*>>{{"Allocate", "#4e79a7"},
                                                                              {"Reuse (freelist)", "#76b7b2"},
                                                                              {"Reuse (in place)", "#59a14f"},
                                                                              {"AllocateOutput", "#f28e2b"},
                                                                              {"Share", "#edc948"}}) {
    svg << "<rect x=\"" << lx << "\" y=\"" << height - 16 << "\" width=\"10\" height=\"10\" fill=\"" << color << "\"/>"
        << "<text x=\"" << lx + 14 << "\" y=\"" << height - 7 << "\">" << label << "</text>\n";
    lx += 150;
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string render_html(const PlanDoc& p, const PlanInsight& insight) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>memplan: " << escape(p.model_path) << "</title>\n"
    << "<style>body{font-family:sans-serif;margin:20px}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
       "padding:2px 6px;font-size:12px}th{cursor:pointer;background:#eee}</style></head><body>\n";
  h << render_svg(p, insight);
  h << "<h2>Values</h2><p>Click a column to sort.</p>\n<table "
       "id=\"values\"><thead><tr><th>index</th><th>name</th><th>kind</th>"
       "<th>location</th><th>bytes</th><th>arena</th><th>offset</th><th>first step</th><th>last "
       "step</th></tr></thead><tbody>\n";
  for (const ValueDoc& v : p.values)
    h << "<tr><td>" << v.index << "</td><td>" << escape(v.name) << "</td><td>" << v.kind << "</td><td>" << v.location
      << "</td><td>" << (v.bytes ? std::to_string(*v.bytes) : "") << "</td><td>"
      << (v.arena >= 0 ? std::to_string(v.arena) : "") << "</td><td>" << (v.arena >= 0 ? std::to_string(v.offset) : "")
      << "</td><td>" << v.first_use << "</td><td>" << v.last_use << "</td></tr>\n";
  h << "</tbody></table>\n<script>\n"
       "document.querySelectorAll('#values th').forEach((th, col) => th.addEventListener('click', () => {\n"
       "  const body = document.querySelector('#values tbody');\n"
       "  const rows = Array.from(body.rows);\n"
       "  const asc = th.dataset.asc !== 'true'; th.dataset.asc = asc;\n"
       "  rows.sort((a, b) => { const x = a.cells[col].textContent, y = b.cells[col].textContent;\n"
       "    const nx = Number(x), ny = Number(y);\n"
       "    const c = (x !== '' && y !== '' && !isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);\n"
       "    return asc ? c : -c; });\n"
       "  rows.forEach(r => body.appendChild(r));\n"
       "}));\n</script></body></html>\n";
  return h.str();
}

}  // namespace memplan::plan_doc
