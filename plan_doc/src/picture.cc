#include "memplan/plan_doc/picture.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>

#include "memplan/text_escape.h"

namespace memplan::plan_doc {
namespace {

// Every string from the plan file goes through this: no plan can add markup or break the XML.
std::string escape(const std::string& s) {
  return markup_text(s);
}

std::string human(uint64_t b) {
  return human_bytes(b, true);
}

// A name cut to about `chars` characters, keeping its end (the distinctive part of "/a/b/c/Conv_output_0").
std::string fit(const std::string& name, double chars) {
  size_t n = chars < 4 ? 0 : static_cast<size_t>(chars);
  if (name.size() <= n) return name;
  if (n < 4) return "";
  return "…" + name.substr(name.size() - (n - 1));
}

// What to print on a block: torch/TF names end in a generic "_output_0" and start with a long scope; the
// last two scope parts ("Mixed_5b/Concat") say which tensor it is.
std::string short_name(std::string name) {
  const std::string suffix = "_output_0";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name.resize(name.size() - suffix.size());
  size_t last = name.rfind('/');
  if (last != std::string::npos && last > 0) {
    size_t before = name.rfind('/', last - 1);
    if (before != std::string::npos) name = name.substr(before + 1);
  }
  return name;
}

const char* color_of(const std::string& kind, bool inplace) {
  if (kind == "Allocate") return "#4e79a7";
  if (kind == "Reuse") return inplace ? "#59a14f" : "#76b7b2";
  if (kind == "AllocateOutput") return "#f28e2b";
  if (kind == "AllocateStatically") return "#9c755f";
  if (kind == "Share") return "#edc948";
  return "#bab0ac";
}

const char* stream_color(size_t s) {
  static const char* colors[] = {"#4e79a7", "#e15759", "#59a14f", "#b07aa1",
                                 "#f28e2b", "#76b7b2", "#edc948", "#ff9da7"};
  return colors[s % 8];
}

std::string node_label(const PlanDoc& p, int step) {
  if (step < 0 || step >= static_cast<int>(p.execution_order.size())) return "";
  const NodeDoc& n = p.nodes[p.execution_order[step]];
  return n.label();
}

// The values too small to draw one by one (narrower than a pixel or thinner than a quarter of one: at 100k steps,
// nearly all of them), drawn together: the bytes they hold at each step, one bar per pixel column up to the most
// held within its steps. An in-place chain's values share memory: they count once, for the span of all of them
// (as the arena's peak is computed, insight.h). The arena's use over time stays visible, in about a thousand rects
// instead of one per value.
class SmallValues {
 public:
  // `root`: the value's in-place chain root (inplace_roots), whose memory it shares.
  void add(const ValueDoc& v, int root) { add(root, v.first_use, v.last_use, *v.bytes); }
  // Memory held from step `first` to `last` under `key` (what shares one key counts once, at its largest).
  void add(int key, int first, int last, uint64_t bytes) {
    Held& h = held_[key];
    if (h.bytes == 0) h.first = first, h.last = last;
    h.first = std::min(h.first, first);
    h.last = std::max(h.last, last);
    h.bytes = std::max(h.bytes, bytes);
    ++count_;
  }
  size_t count() const { return count_; }
  // x(step) and y(offset) place a step and a byte count in the picture; bars stop at `ceiling` bytes.
  template <class X, class Y>
  std::string bars(size_t steps, X x, Y y, double left, double right, uint64_t ceiling) const {
    std::vector<int64_t> delta(steps + 1, 0);  // per step: bytes taken minus bytes given back
    for (const auto& [key, h] : held_) {
      const size_t a = static_cast<size_t>(std::max(0, h.first));
      const size_t b = std::min(steps, static_cast<size_t>(std::max(h.first, h.last)) + 1);
      if (a >= b) continue;
      delta[a] += static_cast<int64_t>(h.bytes);
      delta[b] -= static_cast<int64_t>(h.bytes);
    }
    const size_t columns = static_cast<size_t>(std::max(1.0, std::ceil(right - left)));
    std::vector<int64_t> most(columns, 0);
    int64_t live = 0;
    for (size_t step = 0; step < steps; ++step) {
      live += delta[step];
      const double px = x(static_cast<double>(step)) - left;
      const size_t c = px <= 0 ? 0 : std::min(columns - 1, static_cast<size_t>(px));
      most[c] = std::max(most[c], live);
    }
    std::ostringstream out;
    for (size_t c = 0; c < columns; ++c)
      if (most[c] > 0) {
        const double top = y(static_cast<double>(std::min<uint64_t>(ceiling, static_cast<uint64_t>(most[c]))));
        out << "<rect x=\"" << left + static_cast<double>(c) << "\" y=\"" << top << "\" width=\"1\" height=\""
            << std::max(0.5, y(0) - top) << "\"/>";
      }
    return out.str();
  }

 private:
  struct Held {
    int first = -1, last = -1;
    uint64_t bytes = 0;
  };
  std::map<int, Held> held_;  // by in-place chain root
  size_t count_ = 0;
};

constexpr size_t kMaxValueRows = 5000;
// More owners' bodies than this in one arena, on steps narrower than a pixel: drawn together, not one by one.
constexpr size_t kMaxBodyBlocks = 500;
constexpr double kWidth = 1400, kLeft = 80, kPlotRight = 1110, kSideLeft = 1130, kMaxPanel = 360, kMinPanel = 70;

}  // namespace

std::string render_svg(const PlanDoc& p, const PlanInsight& insight) {
  std::vector<const ArenaInsight*> panels, weights;
  for (const auto& ai : insight.arenas) (p.arenas[ai.arena].purpose == "weights" ? weights : panels).push_back(&ai);
  uint64_t largest = 1;
  for (const ArenaInsight* ai : panels) largest = std::max(largest, ai->bytes);
  auto panel_height = [&](const ArenaInsight* ai) {
    return std::max(kMinPanel, kMaxPanel * static_cast<double>(ai->bytes) / static_cast<double>(largest));
  };
  const auto totals = device_totals(p);
  const double steps = std::max<double>(1, static_cast<double>(p.execution_order.size()));
  const double scale_x = (kPlotRight - kLeft) / steps;
  auto X = [&](double step) { return kLeft + step * scale_x; };

  // Vertical budget: header, totals, stream lanes, panels (each with a title and an axis), weights, legend.
  const double lanes_top = 58 + 16 * static_cast<double>(totals.size());
  const double lane_h = 11;
  double height = lanes_top + lane_h * static_cast<double>(p.streams.size()) + 30;
  for (const ArenaInsight* ai : panels) height += panel_height(ai) + 70;
  height += weights.empty() ? 0 : 30 + 18 * static_cast<double>(weights.size());
  height += 30;

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << kWidth << " " << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg << "<title>memplan memory timeline: " << escape(p.graph) << "</title>\n";
  svg << "<style>.sel{stroke:#000;stroke-width:2}</style>\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << kLeft << "\" y=\"20\" font-size=\"15\" font-weight=\"bold\">" << escape(p.model_path)
      << " — where the memory goes</text>\n";
  auto unsized = unsized_allocations(p);
  svg << "<text x=\"" << kLeft << "\" y=\"38\" fill=\"" << (unsized.empty() ? "#555" : "#c00") << "\">"
      << (unsized.empty() ? "x: execution step (node names below each panel), y: offset in the arena; hover a block "
                            "for its value"
                          : "INCOMPLETE PLAN: " + std::to_string(unsized.size()) +
                                " values have no known size and are missing from every figure")
      << "</text>\n";
  double y = 56;
  for (const DeviceTotal& t : totals) {
    svg << "<text x=\"" << kLeft << "\" y=\"" << y << "\" font-size=\"12\"><tspan font-weight=\"bold\">device "
        << escape(t.device) << ": " << (t.complete() ? "" : "at least ") << human(t.total()) << "</tspan>"
        << "  activations " << human(t.activations) << ", outputs " << human(t.outputs) << ", weights "
        << human(t.weights) << ", inputs " << human(t.inputs);
    if (const DeviceTotal* o = ort_total(p, t.device))
      svg << "  (ONNX Runtime 1.30, predicted by --like ort: " << human(o->total()) << ")";
    svg << "</text>\n";
    y += 16;
  }

  // Stream lanes: which stream runs each step.
  y = lanes_top;
  std::vector<int> stream_of_node(p.nodes.size(), -1);
  for (const NodeDoc& n : p.nodes) stream_of_node[n.index] = n.stream;
  for (size_t s = 0; s < p.streams.size(); ++s) {
    double ly = y + lane_h * static_cast<double>(s);
    svg << "<text x=\"4\" y=\"" << ly + 8 << "\" font-size=\"9\">stream " << s << " " << escape(p.streams[s].device)
        << "</text>\n";
    svg << "<rect x=\"" << kLeft << "\" y=\"" << ly << "\" width=\"" << kPlotRight - kLeft << "\" height=\""
        << lane_h - 1 << "\" fill=\"#f0f0f0\"/>\n";
    // One rect per run of this stream's steps closer than half a pixel: a plan of 100k steps draws a few hundred.
    double run_start = -1, run_end = -1;
    auto flush = [&] {
      if (run_start >= 0)
        svg << "<rect x=\"" << run_start << "\" y=\"" << ly << "\" width=\"" << run_end - run_start << "\" height=\""
            << lane_h - 1 << "\" fill=\"" << stream_color(s) << "\"/>\n";
      run_start = -1;
    };
    for (size_t step = 0; step < p.execution_order.size(); ++step) {
      if (stream_of_node[p.execution_order[step]] != static_cast<int>(s)) continue;
      const double x1 = X(static_cast<double>(step)), x2 = x1 + std::max(0.6, scale_x);
      if (run_start >= 0 && x1 <= run_end + 0.5) {
        run_end = std::max(run_end, x2);
      } else {
        flush();
        run_start = x1, run_end = x2;
      }
    }
    flush();
  }
  y += lane_h * static_cast<double>(p.streams.size()) + 30;

  bool any_small = false;  // values summed rather than drawn (SmallValues)
  const std::vector<int32_t> chain_root = inplace_roots(p);
  for (const ArenaInsight* ai : panels) {
    const ArenaDoc& arena = p.arenas[ai->arena];
    const double h = panel_height(ai);
    const double scale_y = arena.bytes ? h / static_cast<double>(arena.bytes) : 1;
    auto Y = [&](double offset) { return y + h - offset * scale_y; };
    svg << "<g class=\"arena\">\n<text x=\"" << kLeft << "\" y=\"" << y - 8 << "\" font-size=\"12\" "
        << "font-weight=\"bold\">arena " << escape(arena.name) << ": " << human(arena.bytes) << "</text>"
        << "<text x=\"" << kLeft + 220 << "\" y=\"" << y - 8 << "\">lower bound " << human(arena.lower_bound) << ", "
        << escape(arena.algorithm) << (arena.optimal ? ", optimal" : "");
    if (ai->peak_step >= 0)
      svg << "; peak at step " << ai->peak_step << " (" << escape(fit(node_label(p, ai->peak_step), 40)) << "), "
          << human(ai->peak_live) << " live";
    svg << "</text>\n";
    svg << "<rect x=\"" << kLeft << "\" y=\"" << y << "\" width=\"" << kPlotRight - kLeft << "\" height=\"" << h
        << "\" fill=\"#f7f7f7\" stroke=\"#999\"/>\n";
    // y axis: 0, quarters, the size.
    for (int q = 0; q <= 4; ++q) {
      double off = static_cast<double>(arena.bytes) * q / 4.0;
      if (h < 120 && q % 2) continue;
      svg << "<line x1=\"" << kLeft - 4 << "\" x2=\"" << kLeft << "\" y1=\"" << Y(off) << "\" y2=\"" << Y(off)
          << "\" stroke=\"#555\"/><text x=\"" << kLeft - 6 << "\" y=\"" << Y(off) + 4 << "\" text-anchor=\"end\">"
          << human(static_cast<uint64_t>(off)) << "</text>\n";
    }
    // Blocks smaller than a pixel either way cannot be seen one by one (a 100k-step plan's values are all
    // narrower than a pixel): they are painted into a pixel grid of the panel, drawn as runs of covered pixels.
    SmallValues small;
    for (const ValueDoc& v : p.values) {
      if (v.arena != ai->arena || !v.bytes || *v.bytes == 0) continue;
      double x1 = X(std::max(0, v.first_use)), x2 = X(std::max(v.first_use, v.last_use) + 1);
      double ya = Y(static_cast<double>(v.offset + *v.bytes)), yb = Y(static_cast<double>(v.offset));
      if (x2 - x1 < 1 || yb - ya < 0.25) {
        small.add(v, chain_root[v.index] >= 0 ? chain_root[v.index] : v.index);
        continue;
      }
      double w = x2 - x1, bh = std::max(0.5, yb - ya);
      std::string producer =
          v.producer >= 0 ? p.nodes[v.producer].name + " (" + p.nodes[v.producer].op_type + ")" : "(none)";
      svg << "<rect id=\"v" << v.index << "\" x=\"" << x1 << "\" y=\"" << ya << "\" width=\"" << w << "\" height=\""
          << bh << "\" fill=\"" << color_of(v.kind, v.inplace) << "\" stroke=\"white\" stroke-width=\"0.3\">"
          << "<title>" << escape(v.name) << " — " << escape(v.kind) << ", " << human(*v.bytes) << " at offset "
          << v.offset << ", steps " << v.first_use << "–" << v.last_use << ", produced by " << escape(producer)
          << "</title></rect>\n";
      // Names on blocks large enough to hold them.
      if (w > 40 && bh > 12)
        if (std::string label = fit(short_name(v.name), (w - 6) / 5.5); !label.empty())
          svg << "<text x=\"" << x1 + 3 << "\" y=\"" << ya + std::min(bh / 2 + 4, 12.0)
              << "\" fill=\"white\" font-size=\"10\" pointer-events=\"none\">" << escape(label) << "</text>\n";
    }
    any_small = any_small || small.count();
    // Workspaces: the memory a node holds for its If/Loop/Scan bodies during its step. Where steps are narrower than
    // a pixel and the owners many (a graph of 20,000 Ifs drew 20,000 rects), together like the small values and
    // stacked on them: their bars are the small values' and the bodies' bytes, drawn first, the small values' over.
    std::vector<int> step_of(p.nodes.size(), -1);
    for (size_t k = 0; k < p.execution_order.size(); ++k) step_of[p.execution_order[k]] = static_cast<int>(k);
    auto held_here = [&](const NodeDoc& n, const WorkspaceDoc& ws) {
      return ws.arena == ai->arena && ws.bytes && step_of[n.index] >= 0;
    };
    size_t bodies = 0;
    for (const NodeDoc& n : p.nodes)
      for (const WorkspaceDoc& ws : n.workspace) bodies += held_here(n, ws);
    const bool together = scale_x < 1 && bodies > kMaxBodyBlocks;
    if (together) {
      SmallValues stacked = small;
      for (const NodeDoc& n : p.nodes)
        for (const WorkspaceDoc& ws : n.workspace)
          if (held_here(n, ws)) stacked.add(-1 - n.index, step_of[n.index], step_of[n.index], ws.bytes);
      svg << "<g fill=\"#bab0ac\"><title>the bodies of " << bodies
          << " If/Loop/Scan nodes, each held during its own step, too narrow to draw one by one at this scale, "
             "together: the bytes they hold at each step, above the small values' (the most within each pixel's "
             "steps; memplan inspect lists the largest)</title>"
          << stacked.bars(p.execution_order.size(), X, Y, kLeft, kPlotRight, arena.bytes) << "</g>\n";
    }
    if (small.count())
      svg << "<g fill=\"#8fa9c6\"><title>" << small.count()
          << " values too small to draw one by one at this scale, together: the bytes they hold at each step (the "
             "most within each pixel's steps; memplan inspect --json lists each)</title>"
          << small.bars(p.execution_order.size(), X, Y, kLeft, kPlotRight, arena.bytes) << "</g>\n";
    for (const NodeDoc& n : p.nodes)
      for (const WorkspaceDoc& ws : n.workspace) {
        if (together || !held_here(n, ws)) continue;
        const double bw = std::max(0.5, scale_x);
        double x1 = X(step_of[n.index]), ya = Y(static_cast<double>(ws.offset + ws.bytes));
        double bh = std::max(0.5, Y(static_cast<double>(ws.offset)) - ya);
        svg << "<rect x=\"" << x1 << "\" y=\"" << ya << "\" width=\"" << bw << "\" height=\"" << bh
            << "\" fill=\"#bab0ac\" stroke=\"#555\" stroke-width=\"0.5\" stroke-dasharray=\"2 1\"><title>the bodies of "
            << escape(n.op_type) << " '" << escape(n.name) << "' while it runs: " << human(ws.bytes) << " at offset "
            << ws.offset << ", step " << step_of[n.index] << "</title></rect>\n";
        if (bw > 40 && bh > 12)
          if (std::string label = fit("bodies of " + n.label(), (bw - 6) / 5.5); !label.empty())
            svg << "<text x=\"" << x1 + 3 << "\" y=\"" << ya + std::min(bh / 2 + 4, 12.0)
                << "\" font-size=\"10\" pointer-events=\"none\">" << escape(label) << "</text>\n";
      }
    double lb = Y(static_cast<double>(arena.lower_bound));
    svg << "<line x1=\"" << kLeft << "\" x2=\"" << kPlotRight << "\" y1=\"" << lb << "\" y2=\"" << lb
        << "\" stroke=\"#e15759\" stroke-dasharray=\"6 3\"><title>lower bound " << arena.lower_bound
        << " bytes</title></line>\n";
    if (ai->peak_step >= 0) {
      double px = X(ai->peak_step + 0.5);
      svg << "<line x1=\"" << px << "\" x2=\"" << px << "\" y1=\"" << y << "\" y2=\"" << y + h
          << "\" stroke=\"black\" stroke-dasharray=\"2 2\"><title>peak at step " << ai->peak_step << ": "
          << ai->peak_live << " bytes live</title></line>\n";
    }
    // x axis: about ten ticks labelled with their node's name.
    const size_t n_steps = p.execution_order.size();
    const size_t every = std::max<size_t>(1, (n_steps + 9) / 10);
    for (size_t step = 0; step < n_steps; step += every) {
      double tx = X(static_cast<double>(step) + 0.5);
      svg << "<line x1=\"" << tx << "\" x2=\"" << tx << "\" y1=\"" << y + h << "\" y2=\"" << y + h + 4
          << "\" stroke=\"#555\"/><text x=\"" << tx << "\" y=\"" << y + h + 15 << "\" text-anchor=\"middle\""
          << " font-size=\"9\">" << step << ": " << escape(fit(node_label(p, static_cast<int>(step)), 16))
          << "</text>\n";
    }
    // Beside the panel: what is live at the peak, by op type and by layer.
    if (!ai->peak_by_op.empty()) {
      double sy = y + 10;
      auto column = [&](const char* title, const std::vector<std::pair<std::string, uint64_t>>& parts) {
        svg << "<text x=\"" << kSideLeft << "\" y=\"" << sy << "\" font-weight=\"bold\">" << title << "</text>\n";
        sy += 13;
        for (size_t i = 0; i < parts.size() && i < 5 && sy < y + h + 40; ++i, sy += 12) {
          double bar =
              90.0 * static_cast<double>(parts[i].second) / static_cast<double>(std::max<uint64_t>(1, ai->peak_live));
          svg << "<rect x=\"" << kSideLeft << "\" y=\"" << sy - 8 << "\" width=\"" << bar
              << "\" height=\"9\" fill=\"#cfd8e3\"/><text x=\"" << kSideLeft + 2 << "\" y=\"" << sy << "\">"
              << escape(fit(parts[i].first, 24)) << " " << human(parts[i].second) << "</text>\n";
        }
        sy += 6;
      };
      column("at the peak, by op type", ai->peak_by_op);
      column("by layer", ai->peak_by_prefix);
    }
    svg << "</g>\n";
    y += h + 70;
  }

  // Weights: alive for the whole run, so a timeline says nothing about them; one bar each.
  if (!weights.empty()) {
    svg << "<text x=\"" << kLeft << "\" y=\"" << y - 14 << "\" font-weight=\"bold\" font-size=\"12\">weights "
        << "(initializers: live for the whole run, not drawn on the timeline)</text>\n";
    uint64_t widest = 1;
    for (const ArenaInsight* w : weights) widest = std::max(widest, w->bytes);
    for (const ArenaInsight* w : weights) {
      double len = (kPlotRight - kLeft) * static_cast<double>(w->bytes) / static_cast<double>(widest);
      svg << "<rect x=\"" << kLeft << "\" y=\"" << y - 6 << "\" width=\"" << std::max(1.0, len)
          << "\" height=\"10\" fill=\"#9c755f\"/><text x=\"" << kLeft + std::max(1.0, len) + 6 << "\" y=\"" << y + 3
          << "\">" << escape(p.arenas[w->arena].name) << " " << human(w->bytes) << "</text>\n";
      y += 18;
    }
    y += 12;
  }
  // Legend.
  double lx = kLeft;
  for (auto [label, color] : std::vector<std::pair<const char*, const char*>>{{"Allocate", "#4e79a7"},
                                                                              {"Reuse (freelist)", "#76b7b2"},
                                                                              {"Reuse (in place)", "#59a14f"},
                                                                              {"AllocateOutput", "#f28e2b"},
                                                                              {"Share", "#edc948"},
                                                                              {"If/Loop/Scan bodies", "#bab0ac"}}) {
    svg << "<rect x=\"" << lx << "\" y=\"" << height - 16 << "\" width=\"10\" height=\"10\" fill=\"" << color << "\"/>"
        << "<text x=\"" << lx + 14 << "\" y=\"" << height - 7 << "\">" << label << "</text>\n";
    lx += 130;
  }
  if (any_small) {
    svg << "<rect x=\"" << lx << "\" y=\"" << height - 16 << "\" width=\"10\" height=\"10\" fill=\"#8fa9c6\"/>"
        << "<text x=\"" << lx + 14 << "\" y=\"" << height - 7 << "\">too small to draw: bytes held</text>\n";
    lx += 190;
  }
  svg << "<line x1=\"" << lx << "\" x2=\"" << lx + 24 << "\" y1=\"" << height - 11 << "\" y2=\"" << height - 11
      << "\" stroke=\"#e15759\" stroke-dasharray=\"6 3\"/><text x=\"" << lx + 28 << "\" y=\"" << height - 7
      << "\">lower bound</text>\n";
  svg << "</svg>\n";
  return svg.str();
}

std::string render_html(const PlanDoc& p, const PlanInsight& insight) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>memplan: " << escape(p.model_path) << "</title>\n"
    << "<style>body{font-family:sans-serif;margin:20px}table{border-collapse:collapse;margin-bottom:12px}"
       "td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px}th{background:#eee}#values th{cursor:pointer}"
       "td.n{text-align:right}.warn{color:#c00;font-weight:bold}tr.hi{background:#ffe08a}"
       "#filter{width:360px;margin:6px 0}</style></head><body>\n";
  h << "<h1>" << escape(p.model_path) << "</h1>\n";
  auto unsized = unsized_allocations(p);
  if (!unsized.empty())
    h << "<p class=\"warn\">INCOMPLETE PLAN: " << unsized.size()
      << " values the plan must allocate have no known size; every figure below leaves them out.</p>\n";
  // Summary: one answer per device, then the arenas.
  h << "<table><tr><th>device</th><th>total</th><th>activations</th><th>outputs</th><th>weights</th><th>inputs</th>"
    << (p.ort_rules ? "<th>ONNX Runtime 1.30 (predicted, --like ort)</th>" : "") << "</tr>\n";
  for (const DeviceTotal& t : device_totals(p)) {
    h << "<tr><td>" << escape(t.device) << "</td><td class=\"n\"><b>" << (t.complete() ? "" : "≥ ") << human(t.total())
      << "</b></td><td class=\"n\">" << human(t.activations) << "</td><td class=\"n\">" << human(t.outputs)
      << "</td><td class=\"n\">" << human(t.weights) << "</td><td class=\"n\">" << human(t.inputs) << "</td>";
    if (p.ort_rules) {
      const DeviceTotal* o = ort_total(p, t.device);
      h << "<td class=\"n\">" << (o ? human(o->total()) : "") << "</td>";
    }
    h << "</tr>\n";
  }
  h << "</table>\n<p>The totals cover the arenas and the caller's inputs; not kernel workspaces, the CUDA context or "
       "ORT's arena growth.</p>\n";
  h << "<table><tr><th>arena</th><th>size</th><th>lower bound</th><th>efficiency</th><th>peak</th>"
       "<th>at the peak, by op type</th><th>by layer</th></tr>\n";
  for (const ArenaInsight& ai : insight.arenas) {
    const ArenaDoc& a = p.arenas[ai.arena];
    char eff[16];
    std::snprintf(eff, sizeof eff, "%.1f%%",
                  a.bytes ? 100.0 * static_cast<double>(a.lower_bound) / static_cast<double>(a.bytes) : 100.0);
    auto parts = [&](const std::vector<std::pair<std::string, uint64_t>>& v) {
      std::string out;
      for (size_t i = 0; i < v.size() && i < 4; ++i)
        out += (i ? ", " : "") + escape(v[i].first) + " " + human(v[i].second);
      return out;
    };
    h << "<tr><td>" << escape(a.name) << "</td><td class=\"n\">" << human(a.bytes) << "</td><td class=\"n\">"
      << human(a.lower_bound) << "</td><td class=\"n\">" << eff << "</td><td>"
      << (a.purpose == "activations" && ai.peak_step >= 0
              ? "step " + std::to_string(ai.peak_step) + " (" + escape(node_label(p, ai.peak_step)) + "), " +
                    human(ai.peak_live)
              : "")
      << "</td><td>" << parts(ai.peak_by_op) << "</td><td>" << parts(ai.peak_by_prefix) << "</td></tr>\n";
  }
  h << "</table>\n";
  h << render_svg(p, insight);
  // Values, largest first; sizes readable, sorted by their exact bytes.
  std::vector<const ValueDoc*> rows;
  for (const ValueDoc& v : p.values) rows.push_back(&v);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ValueDoc* a, const ValueDoc* b) { return a->bytes.value_or(0) > b->bytes.value_or(0); });
  // A table of every value of a 100k-node plan would make a page of tens of megabytes: the largest are listed.
  const size_t listed = std::min(rows.size(), kMaxValueRows);
  h << "<h2>Values</h2><p>Largest first"
    << (listed < rows.size() ? " (the " + std::to_string(listed) + " largest of " + std::to_string(rows.size()) +
                                   "; memplan inspect --json lists every one)"
                             : std::string())
    << ". Click a column to sort; hover a row to find its block in the picture.</p>\n"
    << "<input id=\"filter\" placeholder=\"filter by name, kind, op type or arena\">\n"
    << "<table id=\"values\"><thead><tr><th>name</th><th>kind</th><th>producer op</th><th>location</th>"
       "<th>size</th><th>arena</th><th>offset</th><th>first step</th><th>last step</th></tr></thead><tbody>\n";
  for (size_t i = 0; i < listed; ++i) {
    const ValueDoc* v = rows[i];
    std::string op = v->producer >= 0 ? p.nodes[v->producer].op_type : "";
    h << "<tr data-v=\"" << v->index << "\"><td>" << escape(v->name) << "</td><td>" << escape(v->kind)
      << (v->inplace ? " (in place)" : "") << "</td><td>" << escape(op) << "</td><td>" << escape(v->location)
      << "</td><td class=\"n\" data-sort=\"" << (v->bytes ? std::to_string(*v->bytes) : "-1") << "\">"
      << (v->bytes ? human(*v->bytes) : "unknown") << "</td><td>"
      << (v->arena >= 0 ? escape(p.arenas[v->arena].name) : "") << "</td><td class=\"n\">"
      << (v->arena >= 0 ? std::to_string(v->offset) : "") << "</td><td class=\"n\">" << v->first_use
      << "</td><td class=\"n\">" << v->last_use << "</td></tr>\n";
  }
  h << "</tbody></table>\n<script>\n"
       "const body = document.querySelector('#values tbody');\n"
       "document.querySelectorAll('#values th').forEach((th, col) => th.addEventListener('click', () => {\n"
       "  const rows = Array.from(body.rows);\n"
       "  const asc = th.dataset.asc !== 'true'; th.dataset.asc = asc;\n"
       "  const key = c => c.dataset.sort !== undefined ? c.dataset.sort : c.textContent;\n"
       "  rows.sort((a, b) => { const x = key(a.cells[col]), y = key(b.cells[col]);\n"
       "    const nx = Number(x), ny = Number(y);\n"
       "    const c = (x !== '' && y !== '' && !isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);\n"
       "    return asc ? c : -c; });\n"
       "  rows.forEach(r => body.appendChild(r));\n"
       "}));\n"
       "document.querySelector('#filter').addEventListener('input', e => {\n"
       "  const q = e.target.value.toLowerCase();\n"
       "  for (const r of body.rows) r.style.display = r.textContent.toLowerCase().includes(q) ? '' : 'none';\n"
       "});\n"
       "const mark = (v, on) => { const r = document.getElementById('v' + v); if (r) r.classList.toggle('sel', on);\n"
       "  const row = body.querySelector('tr[data-v=\"' + v + '\"]'); if (row) row.classList.toggle('hi', on); };\n"
       "body.addEventListener('mouseover', e => { const r = e.target.closest('tr'); if (r) mark(r.dataset.v, true); "
       "});\n"
       "body.addEventListener('mouseout', e => { const r = e.target.closest('tr'); if (r) mark(r.dataset.v, false); "
       "});\n"
       "document.querySelectorAll('rect[id^=\"v\"]').forEach(rect => {\n"
       "  rect.addEventListener('mouseover', () => mark(rect.id.slice(1), true));\n"
       "  rect.addEventListener('mouseout', () => mark(rect.id.slice(1), false)); });\n"
       "</script></body></html>\n";
  return h.str();
}

}  // namespace memplan::plan_doc
