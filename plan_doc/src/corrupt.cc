#include "memplan/plan_doc/corrupt.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "memplan/chain_roots.h"

namespace memplan::plan_doc {

const std::vector<Corruption>& all_corruptions() {
  static const std::vector<Corruption> all = {Corruption::kOffsetOntoLiveNeighbour,
                                              Corruption::kDropWaitOnEP,
                                              Corruption::kDropBarrier,
                                              Corruption::kReleaseEarlier,
                                              Corruption::kShrinkArena,
                                              Corruption::kMisalignOffset,
                                              Corruption::kChangeKind,
                                              Corruption::kShrinkWorkspace};
  return all;
}

const char* corruption_name(Corruption c) {
  switch (c) {
    case Corruption::kOffsetOntoLiveNeighbour:
      return "offset";
    case Corruption::kDropWaitOnEP:
      return "wait";
    case Corruption::kDropBarrier:
      return "barrier";
    case Corruption::kReleaseEarlier:
      return "release";
    case Corruption::kShrinkArena:
      return "shrink";
    case Corruption::kMisalignOffset:
      return "misalign";
    case Corruption::kChangeKind:
      return "kind";
    case Corruption::kShrinkWorkspace:
      return "workspace";
  }
  return "?";
}

bool parse_corruption(const std::string& name, Corruption& out) {
  for (Corruption c : all_corruptions())
    if (name == corruption_name(c)) {
      out = c;
      return true;
    }
  return false;
}

namespace {

using json = nlohmann::ordered_json;

// Whether a WaitOnEP orders nothing but views (an Identity of a weight, say) for its node: no bytes
// move, so dropping it is a plan error no interleaving can show.
bool wait_orders_only_views(const json& plan, const json& wait) {
  int producer = -1;  // the node whose ActivateNotification the wait is for
  for (const auto& stream : plan["streams"])
    for (const auto& st : stream["steps"])
      if (st["kind"] == "ActivateNotification" && st["notification"] == wait["notification"]) producer = st["node"];
  if (producer < 0) return false;
  const json& node = plan["nodes"][wait["node"].get<size_t>()];
  for (const char* list : {"inputs", "implicit_inputs"})
    for (int v : node[list])
      if (v >= 0 && plan["values"][v]["producer"] == producer && !plan["values"][v]["alias"].get<bool>()) return false;
  return true;
}

template <typename T>
const T& pick(const std::vector<T>& v, std::mt19937_64& rng) {
  return v[rng() % v.size()];
}

bool in_arena(const json& v) {
  return v.contains("arena") && !v["arena"].is_null() && !v["bytes"].is_null() && v["bytes"].get<uint64_t>() > 0;
}

// The bodies of a plan, depth first.
void collect_bodies(json& plan, std::vector<json*>& out) {
  if (!plan.contains("subgraphs")) return;
  for (json& sub : plan["subgraphs"])
    if (sub.contains("streams")) {
      out.push_back(&sub);
      collect_bodies(sub, out);
    }
}

}  // namespace

int count_bodies(const json& plan) {
  std::vector<json*> bodies;
  collect_bodies(const_cast<json&>(plan), bodies);  // read only
  return static_cast<int>(bodies.size());
}

bool corrupt_plan(json& plan, Corruption kind, uint64_t seed, std::string& what, int body) {
  if (body >= 0) {
    std::vector<json*> bodies;
    collect_bodies(plan, bodies);
    if (body >= static_cast<int>(bodies.size())) return false;
    json& sub = *bodies[body];
    if (!corrupt_plan(sub, kind, seed, what)) return false;
    what = "in body '" + sub["attribute"].get<std::string>() + "' of node " + std::to_string(sub["owner"].get<int>()) +
           ": " + what;
    return true;
  }
  std::mt19937_64 rng(seed);
  json& values = plan["values"];
  switch (kind) {
    case Corruption::kOffsetOntoLiveNeighbour: {
      // Pairs in one arena, of different in-place chains, whose lifetimes overlap in the global order, up to
      // 100,000: on large plans found by a sweep over time per arena.
      std::vector<int32_t> parent(values.size());
      for (size_t v = 0; v < values.size(); ++v) parent[v] = values[v]["inplace_of"].get<int>();
      const std::vector<int32_t> unit = chain_roots(parent);
      std::vector<std::pair<int, int>> pairs;
      if (values.size() <= 4096) {
        // Small plans: every pair in value order (the pair a seed picks stays the one it picked before the sweep).
        for (size_t a = 0; a < values.size(); ++a) {
          if (!in_arena(values[a])) continue;
          for (size_t b = 0; b < values.size() && pairs.size() < 100000; ++b) {
            if (a == b || !in_arena(values[b]) || values[a]["arena"] != values[b]["arena"]) continue;
            if (unit[a] == unit[b] || values[a]["offset"] == values[b]["offset"]) continue;
            int fa = values[a]["first_use"], la = values[a]["last_use"], fb = values[b]["first_use"],
                lb = values[b]["last_use"];
            if (fa <= lb && fb <= la) pairs.push_back({static_cast<int>(a), static_cast<int>(b)});
          }
        }
      } else {
        struct Placed {
          int value, first, last;
          uint64_t offset;
        };
        std::map<int, std::vector<Placed>> by_arena;
        for (size_t v = 0; v < values.size(); ++v)
          if (in_arena(values[v]))
            by_arena[values[v]["arena"].get<int>()].push_back({static_cast<int>(v), values[v]["first_use"].get<int>(),
                                                               values[v]["last_use"].get<int>(),
                                                               values[v]["offset"].get<uint64_t>()});
        for (auto& [arena, placed] : by_arena) {
          std::stable_sort(placed.begin(), placed.end(),
                           [](const Placed& x, const Placed& y) { return x.first < y.first; });
          std::vector<Placed> live;
          for (const Placed& b : placed) {
            live.erase(std::remove_if(live.begin(), live.end(), [&](const Placed& a) { return a.last < b.first; }),
                       live.end());
            for (const Placed& a : live)
              if (unit[a.value] != unit[b.value] && a.offset != b.offset && pairs.size() < 100000) {
                pairs.push_back({a.value, b.value});
                pairs.push_back({b.value, a.value});
              }
            live.push_back(b);
          }
        }
      }
      if (pairs.empty()) return false;
      auto [a, b] = pick(pairs, rng);
      // Move a's whole in-place chain, so the damage is the overlap, not a broken chain.
      uint64_t to = values[b]["offset"];
      for (size_t v = 0; v < values.size(); ++v)
        if (in_arena(values[v]) && unit[v] == unit[a]) values[v]["offset"] = to;
      what = "moved value " + values[a]["name"].get<std::string>() + " onto " + values[b]["name"].get<std::string>();
      return true;
    }
    case Corruption::kDropWaitOnEP:
    case Corruption::kDropBarrier: {
      const char* step_kind = kind == Corruption::kDropWaitOnEP ? "WaitOnEP" : "Barrier";
      // Where each trigger and notification comes from.
      std::map<int, size_t> trigger_stream, notification_stream, trigger_step, notification_step;
      for (size_t s = 0; s < plan["streams"].size(); ++s) {
        const json& steps = plan["streams"][s]["steps"];
        for (size_t k = 0; k < steps.size(); ++k) {
          const json& st = steps[k];
          if (st["kind"] == "TriggerDownstream")
            trigger_stream[st["trigger"].get<int>()] = s, trigger_step[st["trigger"].get<int>()] = k;
          if (st["kind"] == "ActivateNotification")
            notification_stream[st["notification"].get<int>()] = s,
            notification_step[st["notification"].get<int>()] = k;
        }
      }
      // Where on its source stream a sync's signal is raised: a later one implies the earlier ones.
      auto signal_step = [&](const json& st) -> size_t {
        return st["kind"] == "Barrier" ? trigger_step[st["trigger"].get<int>()]
                                       : notification_step[st["notification"].get<int>()];
      };
      auto source = [&](const json& st) -> long {
        if (st["kind"] == "Barrier") return static_cast<long>(trigger_stream[st["trigger"].get<int>()]);
        if (st["kind"] == "WaitOnEP") return static_cast<long>(notification_stream[st["notification"].get<int>()]);
        return -1;
      };
      // Only the first sync of its kind from its source stream on each stream: a later one is often
      // redundant (what it waits for is already known), and dropping it would be harmless.
      std::vector<std::pair<size_t, size_t>> places;
      for (size_t s = 0; s < plan["streams"].size(); ++s) {
        const json& steps = plan["streams"][s]["steps"];
        std::set<long> seen;
        for (size_t k = 0; k < steps.size(); ++k) {
          if (steps[k]["kind"] != step_kind) continue;
          // Of several syncs from one stream before one launch, only the one raised latest on that stream orders
          // anything: it implies the others.
          bool superseded = false;
          size_t first = k, last = k;
          while (first > 0 && steps[first - 1]["kind"] != "LaunchKernel") --first;
          while (last + 1 < steps.size() && steps[last + 1]["kind"] != "LaunchKernel") ++last;
          for (size_t m = first; m <= last && !superseded; ++m)
            superseded = m != k && steps[m]["kind"] == step_kind && source(steps[m]) == source(steps[k]) &&
                         (signal_step(steps[m]) > signal_step(steps[k]) ||
                          (signal_step(steps[m]) == signal_step(steps[k]) && m > k));
          if (superseded || !seen.insert(source(steps[k])).second) continue;
          // Shape and Size read only metadata: a sync before them guards nothing.
          const std::string op = plan["nodes"][steps[k]["node"].get<int>()]["op_type"];
          if (op != "Shape" && op != "Size") places.push_back({s, k});
        }
      }
      if (places.empty()) return false;
      auto [s, k] = pick(places, rng);
      json& steps = plan["streams"][s]["steps"];
      what = std::string("dropped a ") + step_kind + " before node " + std::to_string(steps[k]["node"].get<int>()) +
             " on stream " + std::to_string(s);
      if (kind == Corruption::kDropWaitOnEP && wait_orders_only_views(plan, steps[k]))
        what += " (it ordered only views, whose bytes are in place before the run: validate sees it, a replay cannot)";
      steps.erase(steps.begin() + static_cast<long>(k));
      return true;
    }
    case Corruption::kReleaseEarlier: {
      // The release's node and the one before it in the same stream's launches.
      std::vector<std::vector<int>> launches(plan["streams"].size());
      for (size_t s = 0; s < plan["streams"].size(); ++s)
        for (const auto& st : plan["streams"][s]["steps"])
          if (st["kind"] == "LaunchKernel") launches[s].push_back(st["node"].get<int>());
      // Only single-point releases: with several points the buffer is freed after the last of them,
      // and moving one may be harmless.
      std::vector<std::tuple<int, int, int>> moves;  // (from node, to node, action)
      for (const auto& l : launches)
        for (size_t i = 1; i < l.size(); ++i)
          for (const auto& a : plan["nodes"][l[i]]["releases"])
            if (plan["release_actions"][a.get<int>()]["ref_count"] == 1)
              moves.push_back({l[i], l[i - 1], a.get<int>()});
      if (moves.empty()) return false;
      auto [from, to, action] = pick(moves, rng);
      json& rel = plan["nodes"][from]["releases"];
      for (size_t k = 0; k < rel.size(); ++k)
        if (rel[k] == action) {
          rel.erase(k);
          break;
        }
      plan["nodes"][to]["releases"].push_back(action);
      what = "moved release action " + std::to_string(action) + " from node " + std::to_string(from) + " to node " +
             std::to_string(to);
      return true;
    }
    case Corruption::kShrinkArena: {
      std::vector<size_t> arenas;
      for (size_t a = 0; a < plan["arenas"].size(); ++a)
        if (plan["arenas"][a]["bytes"].get<uint64_t>() >= plan["arenas"][a]["alignment"].get<uint64_t>())
          arenas.push_back(a);
      if (arenas.empty()) return false;
      size_t a = pick(arenas, rng);
      plan["arenas"][a]["bytes"] =
          plan["arenas"][a]["bytes"].get<uint64_t>() - plan["arenas"][a]["alignment"].get<uint64_t>();
      what = "shrank arena " + plan["arenas"][a]["name"].get<std::string>();
      return true;
    }
    case Corruption::kMisalignOffset: {
      std::vector<size_t> candidates;
      for (size_t v = 0; v < values.size(); ++v)
        if (in_arena(values[v]) && plan["arenas"][values[v]["arena"].get<int>()]["alignment"].get<uint64_t>() > 1)
          candidates.push_back(v);
      if (candidates.empty()) return false;
      size_t v = pick(candidates, rng);
      uint64_t align = plan["arenas"][values[v]["arena"].get<int>()]["alignment"];
      values[v]["offset"] = values[v]["offset"].get<uint64_t>() + align / 2;
      what = "misaligned value " + values[v]["name"].get<std::string>();
      return true;
    }
    case Corruption::kChangeKind: {
      std::vector<size_t> candidates;
      for (size_t v = 0; v < values.size(); ++v) {
        const std::string k = values[v]["kind"];
        // (a value no node writes or reads has no memory anyone uses: changing its kind changes nothing)
        const bool unused = values[v]["producer"] == -1 && values[v]["consumers"].empty() &&
                            (!values[v].contains("implicit_consumers") || values[v]["implicit_consumers"].empty());
        if (!unused && (k == "Allocate" || k == "PreExisting" || k == "AllocateOutput" || k == "AllocateStatically"))
          candidates.push_back(v);
      }
      if (candidates.empty()) return false;
      size_t v = pick(candidates, rng);
      const std::string k = values[v]["kind"];
      const char* to = k == "Allocate"         ? "PreExisting"
                       : k == "PreExisting"    ? "Allocate"
                       : k == "AllocateOutput" ? "Allocate"
                                               : "Allocate";
      values[v]["kind"] = to;
      what = "changed value " + values[v]["name"].get<std::string>() + " from " + k + " to " + to;
      return true;
    }
    case Corruption::kShrinkWorkspace: {
      std::vector<std::pair<size_t, size_t>> places;  // (node, workspace entry)
      for (size_t n = 0; n < plan["nodes"].size(); ++n)
        if (plan["nodes"][n].contains("workspace"))
          for (size_t w = 0; w < plan["nodes"][n]["workspace"].size(); ++w)
            if (plan["nodes"][n]["workspace"][w]["bytes"].get<uint64_t>() > 0) places.push_back({n, w});
      if (places.empty()) return false;
      auto [n, w] = pick(places, rng);
      json& ws = plan["nodes"][n]["workspace"][w];
      const uint64_t align = plan["arenas"][ws["arena"].get<int>()]["alignment"];
      ws["bytes"] = ws["bytes"].get<uint64_t>() - std::min(ws["bytes"].get<uint64_t>(), align);
      what = "shrank the workspace of node " + std::to_string(n);
      return true;
    }
  }
  return false;
}

}  // namespace memplan::plan_doc
