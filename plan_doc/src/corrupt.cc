#include "memplan/plan_doc/corrupt.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "memplan/chain_roots.h"
#include "memplan/enum_names.h"
#include "memplan/sync_knowledge.h"

namespace memplan::plan_doc {

namespace {

// `memplan corrupt --kind` names, in the order the corruptions are tried.
constexpr EnumName<Corruption> kCorruptionNames[] = {
    {Corruption::kOffsetOntoLiveNeighbour, "offset"},
    {Corruption::kDropWaitOnEP, "wait"},
    {Corruption::kDropBarrier, "barrier"},
    {Corruption::kReleaseEarlier, "release"},
    {Corruption::kShrinkArena, "shrink"},
    {Corruption::kMisalignOffset, "misalign"},
    {Corruption::kChangeKind, "kind"},
    {Corruption::kShrinkWorkspace, "workspace"},
    {Corruption::kDropCopyWait, "copy-wait"},
    {Corruption::kMoveStaging, "staging"},
};

}  // namespace

const std::vector<Corruption>& all_corruptions() {
  static const std::vector<Corruption> all = [] {
    std::vector<Corruption> kinds;
    for (const auto& row : kCorruptionNames) kinds.push_back(row.value);
    return kinds;
  }();
  return all;
}

const char* corruption_name(Corruption c) {
  return enum_name(kCorruptionNames, c, "?");
}

bool parse_corruption(const std::string& name, Corruption& out) {
  const std::optional<Corruption> c = parse_enum(kCorruptionNames, name);
  if (c) out = *c;
  return c.has_value();
}

namespace {

using json = nlohmann::ordered_json;

// Whether a WaitOnEP orders nothing but views (an Identity of a weight, say) for its node: no bytes
// move, so dropping it is a plan error no interleaving can show.
bool wait_orders_only_views(const PlanDoc& plan, const StepDoc& wait) {
  int producer = -1;  // the node whose ActivateNotification the wait is for
  for (const StreamDoc& stream : plan.streams)
    for (const StepDoc& st : stream.steps)
      if (st.kind == "ActivateNotification" && st.notification == wait.notification) producer = st.node;
  if (producer < 0) return false;
  const NodeDoc& node = plan.nodes[static_cast<size_t>(wait.node)];
  for (const auto* list : {&node.inputs, &node.implicit_inputs})
    for (int v : *list)
      if (v >= 0 && plan.values[v].producer == producer && !plan.values[v].alias) return false;
  return true;
}

// Whether the node a WaitOnEP waits for is a copy that performs the release of a value in host memory (the last
// copy-in of an activation's host copy). The replay's host frees CPU memory once it knows the kernel is done, before
// the copy stream's TriggerDownstream; the reader's Barrier then orders it after the copy, and dropping the wait is a
// fault only validate (which orders a release on the device timeline) can show.
bool copy_frees_host_memory(const PlanDoc& plan, const StepDoc& wait) {
  for (const StreamDoc& stream : plan.streams)
    for (const StepDoc& st : stream.steps)
      if (st.kind == "ActivateNotification" && st.notification == wait.notification)
        for (int r : plan.nodes[static_cast<size_t>(st.node)].releases)
          if (plan.values[static_cast<size_t>(plan.releases[static_cast<size_t>(r)].value)].location == "cpu")
            return true;
  return false;
}

template <typename T>
const T& pick(const std::vector<T>& v, std::mt19937_64& rng) {
  return v[rng() % v.size()];
}

bool in_arena(const ValueDoc& v) {
  return v.arena >= 0 && v.bytes && *v.bytes > 0;
}

std::vector<std::string> path(std::initializer_list<std::string> steps) {
  return steps;
}

// The bodies of a plan, depth first, each with the path to its object.
void collect_bodies(const PlanDoc& plan, const std::vector<std::string>& at,
                    std::vector<std::pair<const SubgraphDoc*, std::vector<std::string>>>& out) {
  for (const SubgraphDoc& sub : plan.subgraphs) {
    std::vector<std::string> here = at;
    here.push_back("subgraphs");
    here.push_back(std::to_string(sub.list_index));
    out.push_back({&sub, here});
    collect_bodies(sub.plan, here, out);
  }
}

// The corruption in one graph's plan; paths from that graph's object.
std::optional<ChosenCorruption> choose_in_graph(const PlanDoc& plan, Corruption kind, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<ValueDoc>& values = plan.values;
  ChosenCorruption out;
  auto set = [&](std::vector<std::string> at, json value) {
    out.edits.push_back({PlanEdit::Op::kSet, std::move(at), std::move(value)});
  };
  switch (kind) {
    case Corruption::kOffsetOntoLiveNeighbour:
    case Corruption::kMoveStaging: {
      // kMoveStaging: only pairs whose moved value is an offload staging copy.
      auto movable = [&](size_t a) { return kind != Corruption::kMoveStaging || values[a].staging_of != -1; };
      // Pairs in one arena, of different in-place chains, whose lifetimes overlap in the global order, up to
      // 100,000: on large plans found by a sweep over time per arena.
      const std::vector<int32_t> unit = inplace_roots(plan);
      std::vector<std::pair<int, int>> pairs;
      if (values.size() <= 4096) {
        // Small plans: every pair in value order (the pair a seed picks stays the one it picked before the sweep).
        for (size_t a = 0; a < values.size(); ++a) {
          if (!in_arena(values[a]) || !movable(a)) continue;
          for (size_t b = 0; b < values.size() && pairs.size() < 100000; ++b) {
            if (a == b || !in_arena(values[b]) || values[a].arena != values[b].arena) continue;
            if (unit[a] == unit[b] || values[a].offset == values[b].offset) continue;
            if (values[a].first_use <= values[b].last_use && values[b].first_use <= values[a].last_use)
              pairs.push_back({static_cast<int>(a), static_cast<int>(b)});
          }
        }
      } else {
        struct Placed {
          int value, first, last;
          uint64_t offset;
        };
        std::map<int, std::vector<Placed>> by_arena;
        for (const ValueDoc& v : values)
          if (in_arena(v)) by_arena[v.arena].push_back({v.index, v.first_use, v.last_use, v.offset});
        // The sweep stops at the 100,000th pair: it went on through every later value, each against every live
        // one, adding nothing (the 1M-node transformer plan, whose ~400k weights live together: 150 s).
        constexpr size_t kEnough = 100000;
        for (auto& [arena, placed] : by_arena) {
          if (pairs.size() >= kEnough) break;
          std::stable_sort(placed.begin(), placed.end(),
                           [](const Placed& x, const Placed& y) { return x.first < y.first; });
          std::vector<Placed> live;
          for (const Placed& b : placed) {
            if (pairs.size() >= kEnough) break;
            live.erase(std::remove_if(live.begin(), live.end(), [&](const Placed& a) { return a.last < b.first; }),
                       live.end());
            for (const Placed& a : live) {
              if (pairs.size() >= kEnough) break;
              if (unit[a.value] != unit[b.value] && a.offset != b.offset) {
                if (movable(a.value)) pairs.push_back({a.value, b.value});
                if (movable(b.value)) pairs.push_back({b.value, a.value});
              }
            }
            live.push_back(b);
          }
        }
      }
      if (pairs.empty()) return std::nullopt;
      auto [a, b] = pick(pairs, rng);
      // Of the two chains, the shorter moves (either move makes the same overlap): moving a 500k-value in-place
      // chain was half of `corrupt`'s time on a 1M-value plan, for one overlap.
      if (kind == Corruption::kOffsetOntoLiveNeighbour) {
        size_t chain_a = 0, chain_b = 0;
        for (const ValueDoc& v : values)
          if (in_arena(v)) chain_a += unit[v.index] == unit[a], chain_b += unit[v.index] == unit[b];
        if (chain_b < chain_a) std::swap(a, b);
      }
      // Move a's whole in-place chain, so the damage is the overlap, not a broken chain.
      for (const ValueDoc& v : values)
        if (in_arena(v) && unit[v.index] == unit[a])
          set(path({"values", std::to_string(v.index), "offset"}), values[b].offset);
      out.what = "moved value " + values[a].name + " onto " + values[b].name;
      return out;
    }
    case Corruption::kDropWaitOnEP:
    case Corruption::kDropCopyWait:
    case Corruption::kDropBarrier: {
      const char* step_kind = kind == Corruption::kDropBarrier ? "Barrier" : "WaitOnEP";
      // kDropCopyWait: only a wait by which a copy node, or a reader of a copy's output, waits for the value it reads.
      std::set<int> copies;
      if (plan.offload)
        for (const auto& m : plan.offload->moved) copies.insert(m.copies.begin(), m.copies.end());
      std::map<int, int> notifier, trigger_node;  // notification / trigger -> the node that signals it
      for (const StreamDoc& stream : plan.streams)
        for (const StepDoc& st : stream.steps) {
          if (st.kind == "ActivateNotification") notifier[st.notification] = st.node;
          if (st.kind == "TriggerDownstream") trigger_node[st.trigger] = st.node;
        }
      auto signaller = [&](const StepDoc& st) {
        if (st.kind == "WaitOnEP") {
          auto it = notifier.find(st.notification);
          return it == notifier.end() ? -1 : it->second;
        }
        auto it = trigger_node.find(st.trigger);
        return it == trigger_node.end() ? -1 : it->second;
      };
      auto ordering_only_copy_sync = [&](const StepDoc& st) {
        const int from = signaller(st);
        if (from < 0 || (!copies.count(st.node) && !copies.count(from))) return false;
        for (int v : plan.nodes[static_cast<size_t>(st.node)].inputs)
          if (v >= 0 && plan.values[v].producer == from) return false;
        return true;
      };
      auto carries_copy = [&](const StepDoc& wait) {
        auto it = notifier.find(wait.notification);
        if (it == notifier.end() || (!copies.count(wait.node) && !copies.count(it->second))) return false;
        for (int v : plan.nodes[static_cast<size_t>(wait.node)].inputs)
          if (v >= 0 && plan.values[v].producer == it->second && !plan.values[v].alias) return true;
        return false;
      };
      // Where each trigger and notification comes from.
      std::map<int, size_t> trigger_stream, notification_stream, trigger_step, notification_step;
      for (size_t s = 0; s < plan.streams.size(); ++s) {
        const std::vector<StepDoc>& steps = plan.streams[s].steps;
        for (size_t k = 0; k < steps.size(); ++k) {
          const StepDoc& st = steps[k];
          if (st.kind == "TriggerDownstream") trigger_stream[st.trigger] = s, trigger_step[st.trigger] = k;
          if (st.kind == "ActivateNotification")
            notification_stream[st.notification] = s, notification_step[st.notification] = k;
        }
      }
      // Where on its source stream a sync's signal is raised: a later one implies the earlier ones.
      auto signal_step = [&](const StepDoc& st) -> size_t {
        return st.kind == "Barrier" ? trigger_step[st.trigger] : notification_step[st.notification];
      };
      auto source = [&](const StepDoc& st) -> long {
        if (st.kind == "Barrier") return static_cast<long>(trigger_stream[st.trigger]);
        if (st.kind == "WaitOnEP") return static_cast<long>(notification_stream[st.notification]);
        return -1;
      };
      // Only the first sync of its kind from its source stream on each stream: a later one is often
      // redundant (what it waits for is already known), and dropping it would be harmless.
      std::vector<std::pair<size_t, size_t>> places;
      for (size_t s = 0; s < plan.streams.size(); ++s) {
        const std::vector<StepDoc>& steps = plan.streams[s].steps;
        std::set<long> seen;
        for (size_t k = 0; k < steps.size(); ++k) {
          if (steps[k].kind != step_kind) continue;
          // Of several syncs from one stream before one launch, only the one raised latest on that stream orders
          // anything: it implies the others.
          bool superseded = false;
          size_t first = k, last = k;
          while (first > 0 && steps[first - 1].kind != "LaunchKernel") --first;
          while (last + 1 < steps.size() && steps[last + 1].kind != "LaunchKernel") ++last;
          for (size_t m = first; m <= last && !superseded; ++m)
            superseded = m != k && steps[m].kind == step_kind && source(steps[m]) == source(steps[k]) &&
                         (signal_step(steps[m]) > signal_step(steps[k]) ||
                          (signal_step(steps[m]) == signal_step(steps[k]) && m > k));
          if (superseded || !seen.insert(source(steps[k])).second) continue;
          // Shape and Size read only metadata: a sync before them guards nothing.
          const std::string& op = plan.nodes[steps[k].node].op_type;
          if (kind == Corruption::kDropCopyWait && !carries_copy(steps[k])) continue;
          // Offload's ordering-only syncs (a copy-in after the step before its staging region is needed, a step after
          // the copy-out whose source memory it may reuse) let memory be reused sooner; dropping one is a fault only
          // where the layout put something over those bytes, so they are not chosen.
          if (kind != Corruption::kDropCopyWait && ordering_only_copy_sync(steps[k])) continue;
          // Around copies, a sync is often implied by others (the copy-in waits for the step before its region is
          // needed, which itself waited for the copy-out the copy-in reads): then dropping it changes nothing.
          const int from = signaller(steps[k]);
          if (from >= 0 && (copies.count(steps[k].node) || copies.count(from))) {
            const sync::Knowledge known =
                sync::simulate(sync_streams(plan, static_cast<int>(s), static_cast<int>(k)), plan.nodes.size());
            if (!known.deadlocked && known.ordered(from, kind == Corruption::kDropBarrier, steps[k].node, false))
              continue;
          }
          if (op != "Shape" && op != "Size") places.push_back({s, k});
        }
      }
      if (places.empty()) return std::nullopt;
      auto [s, k] = pick(places, rng);
      const StepDoc& step = plan.streams[s].steps[k];
      out.what = std::string("dropped a ") + step_kind + (kind == Corruption::kDropCopyWait ? " for a copy" : "") +
                 " before node " + std::to_string(step.node) + " on stream " + std::to_string(s);
      if (kind != Corruption::kDropBarrier && copy_frees_host_memory(plan, step))
        out.what +=
            " (the copy frees host memory, so its stream's host waits for it before signalling the reader's "
            "Barrier: validate sees it, a replay cannot)";
      if (kind == Corruption::kDropWaitOnEP && wait_orders_only_views(plan, step))
        out.what +=
            " (it ordered only views, whose bytes are in place before the run: validate sees it, a replay cannot)";
      out.edits.push_back({PlanEdit::Op::kErase, path({"streams", std::to_string(s), "steps", std::to_string(k)}), {}});
      return out;
    }
    case Corruption::kReleaseEarlier: {
      // The release's node and the one before it in the same stream's launches.
      std::vector<std::vector<int>> launches(plan.streams.size());
      for (size_t s = 0; s < plan.streams.size(); ++s)
        for (const StepDoc& st : plan.streams[s].steps)
          if (st.kind == "LaunchKernel") launches[s].push_back(st.node);
      // Only single-point releases: with several points the buffer is freed after the last of them,
      // and moving one may be harmless.
      std::vector<std::tuple<int, int, int>> moves;  // (from node, to node, action)
      for (const auto& l : launches)
        for (size_t i = 1; i < l.size(); ++i)
          for (int a : plan.nodes[l[i]].releases)
            if (plan.releases[a].ref_count == 1) moves.push_back({l[i], l[i - 1], a});
      if (moves.empty()) return std::nullopt;
      auto [from, to, action] = pick(moves, rng);
      const std::vector<int>& rel = plan.nodes[from].releases;
      const size_t at = static_cast<size_t>(std::find(rel.begin(), rel.end(), action) - rel.begin());
      out.edits.push_back(
          {PlanEdit::Op::kErase, path({"nodes", std::to_string(from), "releases", std::to_string(at)}), {}});
      out.edits.push_back({PlanEdit::Op::kAppend, path({"nodes", std::to_string(to), "releases"}), action});
      out.what = "moved release action " + std::to_string(action) + " from node " + std::to_string(from) + " to node " +
                 std::to_string(to);
      return out;
    }
    case Corruption::kShrinkArena: {
      std::vector<size_t> arenas;
      for (size_t a = 0; a < plan.arenas.size(); ++a)
        if (plan.arenas[a].bytes >= plan.arenas[a].alignment) arenas.push_back(a);
      if (arenas.empty()) return std::nullopt;
      const size_t a = pick(arenas, rng);
      set(path({"arenas", std::to_string(a), "bytes"}), plan.arenas[a].bytes - plan.arenas[a].alignment);
      out.what = "shrank arena " + plan.arenas[a].name;
      return out;
    }
    case Corruption::kMisalignOffset: {
      std::vector<size_t> candidates;
      for (size_t v = 0; v < values.size(); ++v)
        if (in_arena(values[v]) && plan.arenas[values[v].arena].alignment > 1) candidates.push_back(v);
      if (candidates.empty()) return std::nullopt;
      const size_t v = pick(candidates, rng);
      set(path({"values", std::to_string(v), "offset"}), values[v].offset + plan.arenas[values[v].arena].alignment / 2);
      out.what = "misaligned value " + values[v].name;
      return out;
    }
    case Corruption::kChangeKind: {
      std::vector<size_t> candidates;
      for (size_t v = 0; v < values.size(); ++v) {
        const std::string& k = values[v].kind;
        // (a value no node writes or reads has no memory anyone uses: changing its kind changes nothing)
        const bool unused =
            values[v].producer == -1 && values[v].consumers.empty() && values[v].implicit_consumers.empty();
        if (!unused && (k == "Allocate" || k == "PreExisting" || k == "AllocateOutput" || k == "AllocateStatically"))
          candidates.push_back(v);
      }
      if (candidates.empty()) return std::nullopt;
      const size_t v = pick(candidates, rng);
      const std::string& k = values[v].kind;
      const char* to = k == "Allocate" ? "PreExisting" : "Allocate";
      set(path({"values", std::to_string(v), "kind"}), to);
      out.what = "changed value " + values[v].name + " from " + k + " to " + to;
      return out;
    }
    case Corruption::kShrinkWorkspace: {
      std::vector<std::pair<size_t, size_t>> places;  // (node, workspace entry)
      for (size_t n = 0; n < plan.nodes.size(); ++n)
        for (size_t w = 0; w < plan.nodes[n].workspace.size(); ++w)
          if (plan.nodes[n].workspace[w].bytes > 0) places.push_back({n, w});
      if (places.empty()) return std::nullopt;
      auto [n, w] = pick(places, rng);
      const WorkspaceDoc& ws = plan.nodes[n].workspace[w];
      const uint64_t align = plan.arenas[ws.arena].alignment;
      set(path({"nodes", std::to_string(n), "workspace", std::to_string(w), "bytes"}),
          ws.bytes - std::min(ws.bytes, align));
      out.what = "shrank the workspace of node " + std::to_string(n);
      return out;
    }
  }
  return std::nullopt;
}

}  // namespace

bool is_list_index(const std::string& step) {
  return !step.empty() && std::all_of(step.begin(), step.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int count_bodies(const PlanDoc& plan) {
  std::vector<std::pair<const SubgraphDoc*, std::vector<std::string>>> bodies;
  collect_bodies(plan, {}, bodies);
  return static_cast<int>(bodies.size());
}

int count_bodies(const json& plan) {
  int n = 0;
  if (plan.is_object() && plan.contains("subgraphs"))
    for (const json& sub : plan["subgraphs"])
      if (sub.is_object() && sub.contains("streams")) n += 1 + count_bodies(sub);
  return n;
}

std::optional<ChosenCorruption> choose_corruption(const PlanDoc& plan, Corruption kind, uint64_t seed, int body) {
  if (body < 0) return choose_in_graph(plan, kind, seed);
  std::vector<std::pair<const SubgraphDoc*, std::vector<std::string>>> bodies;
  collect_bodies(plan, {}, bodies);
  if (body >= static_cast<int>(bodies.size())) return std::nullopt;
  const auto& [sub, at] = bodies[static_cast<size_t>(body)];
  std::optional<ChosenCorruption> chosen = choose_in_graph(sub->plan, kind, seed);
  if (!chosen) return std::nullopt;
  for (PlanEdit& e : chosen->edits) e.path.insert(e.path.begin(), at.begin(), at.end());
  chosen->what = "in body '" + sub->attribute + "' of node " + std::to_string(sub->owner) + ": " + chosen->what;
  return chosen;
}

void apply_edits(json& plan, const std::vector<PlanEdit>& edits) {
  for (const PlanEdit& e : edits) {
    json* at = &plan;
    const size_t last = e.op == PlanEdit::Op::kErase ? e.path.size() - 1 : e.path.size();
    for (size_t i = 0; i < last; ++i) at = is_list_index(e.path[i]) ? &(*at)[std::stoul(e.path[i])] : &(*at)[e.path[i]];
    if (e.op == PlanEdit::Op::kSet) *at = e.value;
    if (e.op == PlanEdit::Op::kAppend) at->push_back(e.value);
    if (e.op == PlanEdit::Op::kErase) at->erase(std::stoul(e.path.back()));
  }
}

bool corrupt_plan(json& plan, Corruption kind, uint64_t seed, std::string& what, int body) {
  const PlanDoc doc = read_plan_doc(plan.dump(), "plan");
  std::optional<ChosenCorruption> chosen = choose_corruption(doc, kind, seed, body);
  if (!chosen) return false;
  apply_edits(plan, chosen->edits);
  what = chosen->what;
  return true;
}

}  // namespace memplan::plan_doc
