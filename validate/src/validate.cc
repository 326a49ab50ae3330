#include "memplan/validate/validate.h"

#include <absl/container/btree_map.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <map>
#include <queue>
#include <span>
#include <string_view>
#include <thread>
#include <utility>

#include "memplan/chain_roots.h"
#include "memplan/sync_knowledge.h"

namespace memplan::validate {
namespace {

using plan_doc::PlanDoc;
using plan_doc::StepDoc;
using plan_doc::ValueDoc;

class Validator {
 public:
  explicit Validator(const PlanDoc& p) : p_(p), root_(plan_doc::inplace_roots(p)) {}

  Report run() {
    auto start = std::chrono::steady_clock::now();
    check_structure();
    for (const std::string& m : plan_doc::unsized_dependencies(p_)) fail("unsized", m);
    if (report_.violations.empty()) {
      simulate();
      // The checks below only read the plan and what the simulation proved. On a large plan they run on two
      // threads, each writing its own violations, merged in the order one thread would have found them.
      auto order_checks = [&] {
        check_uses();
        check_overlaps();
      };
      auto layout_checks = [&] {
        check_offsets_and_arenas();
        check_kinds();
        check_offload();
      };
      if (deadlocked_) {
        layout_checks();
      } else if (p_.values.size() + p_.nodes.size() < kThreadedChecks) {
        order_checks();
        check_releases();
        layout_checks();
      } else {
        // The release check goes with the layout checks, which are the lighter half; each check writes its own
        // list, merged in the order of the one-thread run above.
        std::vector<Violation> order_found, release_found, layout_found;
        std::exception_ptr order_error;
        std::thread order([&] {
          sink_ = &order_found;
          try {
            order_checks();
          } catch (...) {
            order_error = std::current_exception();
          }
          sink_ = nullptr;
        });
        try {
          sink_ = &layout_found;
          layout_checks();
          sink_ = &release_found;
          check_releases();
        } catch (...) {
          sink_ = nullptr;
          order.join();
          throw;
        }
        sink_ = nullptr;
        order.join();
        if (order_error) std::rethrow_exception(order_error);
        for (auto* found : {&order_found, &release_found, &layout_found})
          report_.violations.insert(report_.violations.end(), std::make_move_iterator(found->begin()),
                                    std::make_move_iterator(found->end()));
      }
      check_bodies();
    }
    report_.values_checked += p_.values.size();
    report_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(report_);
  }

 private:
  void fail(const std::string& check, const std::string& message) {
    (sink_ ? *sink_ : report_.violations).push_back({check, message});
  }
  // Where this thread's violations go while the checks run on two threads (run()); null: the report.
  static inline thread_local std::vector<Violation>* sink_ = nullptr;
  static constexpr size_t kThreadedChecks = 20000;  // values + nodes from which a second thread pays

  std::string node_text(int n) const {
    const auto& node = p_.nodes[n];
    std::string s = "node " + std::to_string(n) + " '" + node.label() + "'";
    if (known_.launches.size() > static_cast<size_t>(n) && known_.launches[n].stream >= 0)
      s += " (stream " + std::to_string(known_.launches[n].stream) + ", step " +
           std::to_string(known_.launches[n].step) + ")";
    return s;
  }
  std::string value_text(int v) const { return "value " + std::to_string(v) + " '" + p_.values[v].name + "'"; }

  void check_structure() {
    for (size_t v = 0; v < root_.size(); ++v)
      if (root_[v] == kOnCycle) {
        fail("structure", value_text(static_cast<int>(v)) + "'s inplace_of chain runs into a cycle");
        root_[v] = static_cast<int>(v);
      }
    std::vector<int> launches(p_.nodes.size(), 0);
    for (size_t s = 0; s < p_.streams.size(); ++s)
      for (const StepDoc& st : p_.streams[s].steps) {
        if (st.kind == "LaunchKernel") {
          ++launches[st.node];
          if (p_.nodes[st.node].stream != static_cast<int>(s))
            fail("structure", node_text(st.node) + " is launched on stream " + std::to_string(s) +
                                  " but belongs to stream " + std::to_string(p_.nodes[st.node].stream));
        } else if (st.kind == "Barrier" && st.trigger < 0) {
          fail("structure", "a Barrier on stream " + std::to_string(s) + " waits for no trigger");
        } else if ((st.kind == "WaitOnEP" || st.kind == "ActivateNotification") && st.notification < 0) {
          fail("structure", "a " + st.kind + " on stream " + std::to_string(s) + " has no notification");
        } else if (st.kind != "Barrier" && st.kind != "TriggerDownstream" && st.kind != "WaitOnEP" &&
                   st.kind != "ActivateNotification") {
          fail("structure", "unknown step kind '" + st.kind + "' on stream " + std::to_string(s));
        }
      }
    for (size_t n = 0; n < launches.size(); ++n)
      if (launches[n] != 1)
        fail("structure", node_text(static_cast<int>(n)) + " is launched " + std::to_string(launches[n]) +
                              " times; every node runs once");
    std::vector<int> seen(p_.nodes.size(), 0);
    for (int n : p_.execution_order) ++seen[n];
    if (p_.execution_order.size() != p_.nodes.size() ||
        std::any_of(seen.begin(), seen.end(), [](int c) { return c != 1; }))
      fail("structure", "execution_order is not a permutation of the nodes");
  }

  // Runs the steps of all streams as the synchronisation allows (memplan/sync_knowledge.h).
  void simulate() {
    const std::vector<sync::Stream> streams = plan_doc::sync_streams(p_);
    known_ = sync::simulate(streams, p_.nodes.size());
    deadlocked_ = known_.deadlocked;
    tabulate_host_access();
    for (size_t s = 0; s < streams.size(); ++s) {
      if (known_.stuck_at[s] < 0) continue;
      const StepDoc& st = p_.streams[s].steps[known_.stuck_at[s]];
      fail("deadlock", "stream " + std::to_string(s) + " step " + std::to_string(known_.stuck_at[s]) + " (" + st.kind +
                           " for " + node_text(st.node) + ") waits for " +
                           (st.kind == "Barrier" ? "trigger " + std::to_string(st.trigger)
                                                 : "notification " + std::to_string(st.notification)) +
                           ", which no step that can still run provides");
    }
  }

  bool on_host(int n, int v) const { return on_host_memory(n, in_cpu_memory(p_.values[v])); }
  static bool in_cpu_memory(const ValueDoc& v) {
    static const InternedString cpu("cpu");  // (compared by pointer)
    return v.location == cpu;
  }
  bool on_host_memory(int n, bool cpu_memory) const { return (host_access_[n] >> (cpu_memory ? 1 : 0)) & 1; }
  // Each node's sync::host_access for a value in device memory (bit 0) and in CPU memory (bit 1), once: the checks
  // ask it for every use, and it compares op types.
  void tabulate_host_access() {
    host_access_.assign(p_.nodes.size(), 0);
    for (size_t n = 0; n < p_.nodes.size(); ++n) {
      const auto& l = known_.launches[n];
      const bool stream_on_cpu = l.stream >= 0 && p_.streams[l.stream].on_cpu();
      for (const bool cpu_memory : {false, true})
        if (sync::host_access(p_.nodes[n].op_type, stream_on_cpu, cpu_memory))
          host_access_[n] |= static_cast<uint8_t>(cpu_memory ? 2 : 1);
    }
  }

  // Node a's access to value va is over before node b's access to vb begins, in every interleaving.
  bool ordered(int a, int va, int b, int vb) const { return known_.ordered(a, on_host(a, va), b, on_host(b, vb)); }

  void check_uses() {
    for (const auto& node : p_.nodes) {
      // Shape and Size read only the tensor's shape, which is known when it is allocated.
      if (node.op_type == "Shape" || node.op_type == "Size") continue;
      auto check = [&](int v) {
        if (v < 0) return;
        ++report_.uses_checked;
        int producer = p_.values[v].producer;
        if (producer < 0 || producer == node.index) return;
        if (!ordered(producer, v, node.index, v))
          fail("use-before-definition", value_text(v) + " is read by " + node_text(node.index) +
                                            " before its producer " + node_text(producer) +
                                            " is known to have completed");
      };
      for (int v : node.inputs) check(v);
      for (int v : node.implicit_inputs) check(v);
    }
  }

  int unit_of(int v) const { return root_[v]; }

  // Calls f(node) for each node that reads or writes v: its consumers, implicit consumers, then its producer.
  template <typename F>
  void for_each_user(const ValueDoc& val, F&& f) const {
    for (int u : val.consumers) f(u);
    for (int u : val.implicit_consumers) f(u);
    if (val.producer >= 0) f(val.producer);
  }

  // A region of an arena: an in-place chain (its members share memory, each written from the one before), with
  // the byte range its members cover and every node that touches any member.
  // A region is also a node's workspace: the memory its bodies use while it runs (written and read by it alone).
  struct Region {
    int root = -1;    // the chain's root value; -1 for a workspace
    int writer = -1;  // the node that writes the region first (the root's producer, or the workspace's owner)
    bool cpu_memory = false;
    uint64_t lo = UINT64_MAX, hi = 0;
    bool whole_run = false;  // a weight, graph input or output: its bytes are never free for another region
    // Producers and readers of all members (when kept): [users_begin, users_end) of Regions::users.
    uint32_t users_begin = 0, users_end = 0;
    int64_t last_position = -1;  // the last of their positions (when the users are not kept)
  };
  // An arena's regions, with their users in one list (a list per region was 845k allocations at 1M values).
  struct Regions {
    std::vector<Region> list;
    std::vector<int> users;
    std::span<const int> users_of(const Region& r) const {
      return std::span<const int>(users).subspan(r.users_begin, r.users_end - r.users_begin);
    }
  };

  std::string region_text(const Region& r) const {
    return r.root >= 0 ? value_text(r.root) : "the workspace of " + node_text(r.writer);
  }

  Regions regions_of_arena(int arena, const std::vector<int>& values, const std::vector<int>& workspace_owners,
                           bool keep_users) const {
    // Regions by chain root, in root order (the order every report lists them in); a slot per value, not a map:
    // a 1M-value arena has as many regions.
    Regions regions;
    std::vector<Region>& out = regions.list;
    std::vector<int> roots;
    for (int v : values)
      if (slot_[unit_of(v)] < 0) {
        slot_[unit_of(v)] = 0;
        roots.push_back(unit_of(v));
      }
    if (!std::is_sorted(roots.begin(), roots.end())) std::sort(roots.begin(), roots.end());  // (usually in order)
    out.resize(roots.size());
    for (size_t i = 0; i < roots.size(); ++i) {
      slot_[roots[i]] = static_cast<int>(i);
      Region& r = out[i];
      r.root = roots[i];
      r.writer = p_.values[r.root].producer;
      r.cpu_memory = in_cpu_memory(p_.values[r.root]);
    }
    for (int v : values) {
      const ValueDoc& val = p_.values[v];
      Region& r = out[slot_[unit_of(v)]];
      r.lo = std::min(r.lo, val.offset);
      r.hi = std::max(r.hi, val.offset + *val.bytes);
      r.whole_run = r.whole_run || val.initializer || val.graph_output || val.graph_input;
      if (keep_users)  // (counted here, listed below)
        for_each_user(val, [&](int) { ++r.users_end; });
      else  // (one stream on the host: only the last use's position matters, see sweep_in_time)
        for_each_user(
            val, [&](int u) { r.last_position = std::max<int64_t>(r.last_position, known_.launches[u].position); });
    }
    if (keep_users) {
      // Each region's users in one span of the list, in the order of its members, then of each member's users.
      uint32_t at = 0;
      for (Region& r : out) {
        r.users_begin = at;
        at += std::exchange(r.users_end, r.users_begin);
      }
      regions.users.resize(at);
      for (int v : values) {
        Region& r = out[slot_[unit_of(v)]];
        for_each_user(p_.values[v], [&](int u) { regions.users[r.users_end++] = u; });
      }
    }
    for (int root : roots) slot_[root] = -1;
    for (int n : workspace_owners)
      for (const plan_doc::WorkspaceDoc& w : p_.nodes[n].workspace) {
        if (w.bytes == 0 || w.arena != arena) continue;
        Region r;
        r.writer = n;
        r.cpu_memory = p_.arenas[w.arena].location == "cpu";
        r.lo = w.offset;
        r.hi = w.offset + w.bytes;
        r.users_begin = static_cast<uint32_t>(regions.users.size());
        regions.users.push_back(n);
        r.users_end = r.users_begin + 1;
        r.last_position = known_.launches[n].position;
        out.push_back(std::move(r));
      }
    return regions;
  }

  // a's memory is free for b: a never outlives the run (not a weight or an output), b's first member is written
  // by a node, and every user of a completed before that node starts.
  bool done_before(const Regions& regions, const Region& a, const Region& b) const {
    if (a.whole_run || b.writer < 0) return false;
    const bool b_on_host = on_host_memory(b.writer, b.cpu_memory);
    for (int u : regions.users_of(a))
      if (!known_.ordered(u, on_host_memory(u, a.cpu_memory), b.writer, b_on_host)) return false;
    return true;
  }

  void overlap(int arena, const Region& a, const Region& b) {
    fail("overlap", region_text(a) + " and " + region_text(b) + " share bytes of arena " + std::to_string(arena) +
                        " ([" + std::to_string(a.lo) + ", " + std::to_string(a.hi) + ") and [" + std::to_string(b.lo) +
                        ", " + std::to_string(b.hi) + ")) but may be live at the same time");
  }

  void check_overlaps() {
    std::map<int, std::vector<int>> by_arena, owners_by_arena;
    for (const ValueDoc& v : p_.values)
      if (v.arena >= 0 && v.bytes && *v.bytes > 0) by_arena[v.arena].push_back(v.index);
    for (const auto& node : p_.nodes)
      for (const plan_doc::WorkspaceDoc& w : node.workspace)
        if (w.bytes > 0) {
          by_arena[w.arena];
          auto& owners = owners_by_arena[w.arena];
          if (owners.empty() || owners.back() != node.index) owners.push_back(node.index);
        }
    const bool one_cpu_stream = p_.streams.size() == 1 && p_.streams[0].on_cpu();
    std::vector<int> global(p_.nodes.size(), -1);  // each node's place in the execution order
    if (!one_cpu_stream)
      for (size_t k = 0; k < p_.execution_order.size(); ++k)
        if (p_.execution_order[k] >= 0 && static_cast<size_t>(p_.execution_order[k]) < global.size())
          global[p_.execution_order[k]] = static_cast<int>(k);
    for (auto& [arena, vs] : by_arena) {
      Regions regions = regions_of_arena(arena, vs, owners_by_arena[arena], !one_cpu_stream);
      report_.regions_checked += regions.list.size();
      if (one_cpu_stream)
        sweep_in_time(arena, regions.list);
      else
        sweep_in_offsets(arena, regions, global);
    }
  }

  // One stream on the host: a region lives from its writer's step to its last user's step, and the check is a
  // sweep over steps with the live regions ordered by offset (n log n, however many regions share bytes over
  // the run).
  void sweep_in_time(int arena, std::vector<Region>& regions) {
    struct Span {
      int64_t start, end;
    };
    std::vector<Span> span(regions.size());
    for (size_t i = 0; i < regions.size(); ++i) {
      const Region& r = regions[i];
      const int writer = r.writer;
      span[i].start = writer >= 0 ? known_.launches[writer].position : -1;
      span[i].end = r.whole_run ? INT64_MAX : span[i].start;
      if (!r.whole_run) span[i].end = std::max(span[i].end, r.last_position);
    }
    std::vector<size_t> order(regions.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return span[a].start < span[b].start; });
    absl::btree_map<uint64_t, size_t> live;  // by offset: disjoint byte ranges (a weights arena: all of them)
    using Ending = std::pair<int64_t, size_t>;
    std::priority_queue<Ending, std::vector<Ending>, std::greater<>> ends;
    for (size_t i : order) {
      while (!ends.empty() && ends.top().first < span[i].start) {
        live.erase(regions[ends.top().second].lo);
        ends.pop();
      }
      const Region& r = regions[i];
      bool clash = false;
      auto it = live.upper_bound(r.lo);
      if (it != live.begin() && regions[std::prev(it)->second].hi > r.lo) {
        overlap(arena, regions[std::prev(it)->second], r);
        clash = true;
      }
      if (it != live.end() && it->first < r.hi) {
        overlap(arena, regions[it->second], r);
        clash = true;
      }
      if (clash) continue;  // kept out, so the live ranges stay disjoint
      live.emplace(r.lo, i);
      ends.push({span[i].end, i});
    }
  }

  // Several streams. Regions over exactly the same bytes are checked in the order of their writers in the plan's
  // execution order, each against the next: happens-before is transitive, so a chain of ordered neighbours orders
  // every pair (a later writer can never be ordered before an earlier one). Then a sweep over offsets checks each
  // pair of regions whose different ranges share bytes.
  void sweep_in_offsets(int arena, const Regions& rs, const std::vector<int>& global) {
    const std::vector<Region>& regions = rs.list;
    auto written_at = [&](const Region& r) { return r.writer >= 0 ? global[r.writer] : -1; };
    // The regions by their bytes, then by writer (then as listed): each group over the same bytes a run of them.
    // (Sorted as plain keys: a comparison that looks each region up is a cache miss apiece at 1M regions.)
    struct Key {
      uint64_t lo, hi;
      int written;
      uint32_t region;
      auto operator<=>(const Key&) const = default;
    };
    std::vector<Key> keys(regions.size());
    for (size_t i = 0; i < regions.size(); ++i)
      keys[i] = {regions[i].lo, regions[i].hi, written_at(regions[i]), static_cast<uint32_t>(i)};
    std::sort(keys.begin(), keys.end());
    std::vector<size_t> by_bytes(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) by_bytes[i] = keys[i].region;
    using Group = std::span<const size_t>;
    std::vector<Group> groups;
    for (size_t begin = 0, end = 0; begin < by_bytes.size(); begin = end) {
      for (end = begin + 1; end < keys.size() && keys[end].lo == keys[begin].lo && keys[end].hi == keys[begin].hi;
           ++end) {
        const Region &x = regions[by_bytes[end - 1]], &y = regions[by_bytes[end]];
        if (!done_before(rs, x, y) && !done_before(rs, y, x)) overlap(arena, x, y);
      }
      groups.push_back(Group(by_bytes).subspan(begin, end - begin));
    }
    std::vector<size_t> active;  // groups
    for (size_t g = 0; g < groups.size(); ++g) {
      const Region& first = regions[groups[g].front()];
      active.erase(std::remove_if(active.begin(), active.end(),
                                  [&](size_t a) { return regions[groups[a].front()].hi <= first.lo; }),
                   active.end());
      for (size_t a : active) check_group_pair(arena, rs, groups[a], groups[g], written_at);
      active.push_back(g);
    }
  }

  // Every region of `one` against every region of `other` (two groups over different bytes that share some). Small
  // groups pair by pair; large ones (20,000 Ifs on a GPU put 20,000 regions in each of a few groups: 80 s) as one
  // sequence in the order of their writers, each region against the next: if each is done before the next, every
  // pair is ordered, as in a group's own chain (a region's writer is one of its users, so done_before chains). A
  // pair found the other way round, which that argument does not cover, sends the two groups back to all pairs.
  template <typename WrittenAt>
  void check_group_pair(int arena, const Regions& rs, std::span<const size_t> one, std::span<const size_t> other,
                        const WrittenAt& written_at) {
    const std::vector<Region>& regions = rs.list;
    auto all_pairs = [&] {
      for (size_t x : one)
        for (size_t y : other)
          if (!done_before(rs, regions[x], regions[y]) && !done_before(rs, regions[y], regions[x]))
            overlap(arena, regions[x], regions[y]);
    };
    if (one.size() * other.size() <= kPairsOneByOne) return all_pairs();
    std::vector<std::pair<size_t, bool>> sequence;  // region, from `other`; both lists are in writer order
    sequence.reserve(one.size() + other.size());
    {
      size_t i = 0, k = 0;
      while (i < one.size() || k < other.size()) {
        const bool take_other =
            i == one.size() || (k < other.size() && written_at(regions[other[k]]) < written_at(regions[one[i]]));
        sequence.push_back(take_other ? std::pair{other[k++], true} : std::pair{one[i++], false});
      }
    }
    std::vector<std::pair<size_t, size_t>> unordered;
    for (size_t k = 1; k < sequence.size(); ++k) {
      if (sequence[k - 1].second == sequence[k].second) continue;  // (the group's own chain checked them)
      const Region &x = regions[sequence[k - 1].first], &y = regions[sequence[k].first];
      if (done_before(rs, x, y)) continue;
      if (done_before(rs, y, x)) return all_pairs();
      unordered.emplace_back(sequence[k - 1].first, sequence[k].first);
    }
    // A plan found wrong: every overlapping pair reported, as pair by pair, unless that would take minutes (then the
    // neighbours found unordered).
    if (!unordered.empty() && one.size() * other.size() <= kPairsToReport) return all_pairs();
    for (auto [x, y] : unordered) overlap(arena, regions[x], regions[y]);
  }
  static constexpr size_t kPairsOneByOne = 64;
  static constexpr size_t kPairsToReport = size_t{1} << 22;

  // Lists of ints by key, in one array (a vector per release and per value were millions of allocations on a 1M-value
  // plan): key k's items are items[start[k], start[k + 1]).
  struct Lists {
    std::vector<size_t> start;
    std::vector<int> items;
    const int* begin(size_t k) const { return items.data() + start[k]; }
    const int* end(size_t k) const { return items.data() + start[k + 1]; }
    size_t size(size_t k) const { return start[k + 1] - start[k]; }
  };
  // `each(add)` calls add(key, item) for every pair; called twice (count, then fill), items kept in call order.
  template <typename Each>
  static Lists lists_of(size_t keys, Each&& each) {
    Lists l;
    l.start.assign(keys + 1, 0);
    each([&](size_t k, int) { ++l.start[k + 1]; });
    for (size_t k = 0; k < keys; ++k) l.start[k + 1] += l.start[k];
    l.items.resize(l.start[keys]);
    std::vector<size_t> next(l.start.begin(), l.start.end() - 1);
    each([&](size_t k, int item) { l.items[next[k]++] = item; });
    return l;
  }

  void check_releases() {
    const Lists points = lists_of(p_.releases.size(), [&](auto&& add) {
      for (const auto& node : p_.nodes)
        for (int r : node.releases) add(static_cast<size_t>(r), node.index);
    });
    std::vector<int> actions_of(p_.values.size(), 0);
    for (size_t r = 0; r < p_.releases.size(); ++r) {
      const auto& rel = p_.releases[r];
      ++actions_of[rel.value];
      if (static_cast<int>(points.size(r)) != rel.ref_count)
        fail("release", "release action " + std::to_string(r) + " of " + value_text(rel.value) + " has ref_count " +
                            std::to_string(rel.ref_count) + " but " + std::to_string(points.size(r)) +
                            " nodes perform it");
    }
    const Lists releases_of = lists_of(p_.values.size(), [&](auto&& add) {
      for (size_t r = 0; r < p_.releases.size(); ++r)
        if (p_.releases[r].value >= 0 && static_cast<size_t>(p_.releases[r].value) < p_.values.size())
          add(static_cast<size_t>(p_.releases[r].value), static_cast<int>(r));
    });
    // Of a release's points on one stream the last knows most (what a stream knows only grows along it), so the
    // last per stream stands for all of them; and the points, sorted, for "u performs it itself".
    std::vector<int> last_on(known_.stream_on_cpu.size(), -1);  // (scratch: stream -> the point launched last on it)
    const Lists last_point = lists_of(p_.releases.size(), [&](auto&& add) {
      for (size_t r = 0; r < p_.releases.size(); ++r) {
        for (const int* x = points.begin(r); x != points.end(r); ++x) {
          const int st = known_.launches[*x].stream;
          if (st < 0) continue;
          int& last = last_on[static_cast<size_t>(st)];
          if (last < 0 || known_.launches[*x].position > known_.launches[last].position) last = *x;
        }
        for (int& last : last_on)
          if (last >= 0) add(r, last), last = -1;
      }
    });
    Lists sorted_points = points;
    for (size_t r = 0; r < p_.releases.size(); ++r)
      std::sort(sorted_points.items.begin() + static_cast<std::ptrdiff_t>(sorted_points.start[r]),
                sorted_points.items.begin() + static_cast<std::ptrdiff_t>(sorted_points.start[r + 1]));
    for (const ValueDoc& w : p_.values) {
      if (w.reused_buffer < 0) continue;
      const bool cpu_memory = w.location == "cpu";
      for (const int* rp = releases_of.begin(static_cast<size_t>(w.reused_buffer));
           rp != releases_of.end(static_cast<size_t>(w.reused_buffer)); ++rp) {
        const size_t r = static_cast<size_t>(*rp);
        for_each_user(w, [&](int u) {
          bool covered = std::binary_search(sorted_points.begin(r), sorted_points.end(r), u);
          // A release takes effect on its point's stream timeline (ORT's stream-aware allocator; replay
          // frees after every point's kernel), not at the point's host-side work.
          for (const int* x = last_point.begin(r); !covered && x != last_point.end(r); ++x)
            covered = known_.ordered(u, on_host_memory(u, cpu_memory), *x, /*b_on_host=*/false);
          if (!covered)
            fail("release", "the buffer of " + value_text(w.index) + " is released (action " + std::to_string(r) +
                                ") before its use by " + node_text(u) + " is known to have completed");
        });
      }
    }
    std::vector<bool> consumed(p_.values.size(), false);  // a buffer some value in it is read from
    for (const ValueDoc& w : p_.values)
      if (w.reused_buffer >= 0 && (!w.consumers.empty() || !w.implicit_consumers.empty()))
        consumed[w.reused_buffer] = true;
    for (const ValueDoc& v : p_.values) {
      if (v.reused_buffer == v.index && (v.kind == "Allocate" || v.kind == "AllocatedExternally") &&
          consumed[v.index] && actions_of[v.index] != 1)
        fail("release", value_text(v.index) + " (" + v.kind + ") has " + std::to_string(actions_of[v.index]) +
                            " release actions; a consumed buffer is released exactly once");
    }
  }

  // The largest running total of (time, change) events, changes at one time applied together: over a table by time
  // where the times are dense (a 1M-value arena: no sort of 2M events), else sorted.
  static int64_t live_peak(std::vector<std::pair<int, int64_t>>& events) {
    int last = 0;
    for (const auto& [t, d] : events) last = std::max(last, t);
    int64_t live = 0, peak = 0;
    if (static_cast<size_t>(last) <= 4 * events.size() + 1024) {
      std::vector<int64_t> change(static_cast<size_t>(last) + 1, 0);
      for (const auto& [t, d] : events) change[t] += d;
      for (int64_t d : change) peak = std::max(peak, live += d);
      return peak;
    }
    std::sort(events.begin(), events.end());  // (at one time the frees come first: the same peak)
    for (const auto& [t, d] : events) peak = std::max(peak, live += d);
    return peak;
  }

  void check_offsets_and_arenas() {
    for (const ValueDoc& v : p_.values) {
      if (v.arena < 0 || !v.bytes) continue;
      const auto& a = p_.arenas[v.arena];
      if (v.offset % a.alignment)
        fail("alignment", value_text(v.index) + " is at offset " + std::to_string(v.offset) +
                              ", not a multiple of arena " + a.name + "'s alignment " + std::to_string(a.alignment));
      if (v.offset + *v.bytes > a.bytes)
        fail("arena", value_text(v.index) + " ends at " + std::to_string(v.offset + *v.bytes) +
                          ", past the end of arena " + a.name + " (" + std::to_string(a.bytes) + " bytes)");
      if (v.inplace_of >= 0) {
        const ValueDoc& base = p_.values[v.inplace_of];
        if (base.arena != v.arena || base.offset != v.offset)
          fail("arena", value_text(v.index) + " is in place of " + value_text(base.index) + " but not at its offset");
      }
    }
    // The lower bound, recomputed: the largest total of aligned unit sizes live at one program counter. A unit is an
    // in-place chain in one arena (a slot per chain root; a chain whose members a broken plan puts in several arenas
    // counts once in each) or a node's workspaces in one arena, held for its step.
    struct Unit {
      int arena = -1, first = 0, last = 0;
      uint64_t bytes = 0;
      void add(int first_use, int last_use, uint64_t b) {
        first = std::min(first, first_use);
        last = std::max(last, last_use);
        bytes = std::max(bytes, b);
      }
    };
    std::vector<Unit> chains(p_.values.size());
    std::map<std::pair<int, int>, Unit> elsewhere;  // (arena, root) of members outside their root's arena
    for (const ValueDoc& v : p_.values) {
      if (v.arena < 0 || !v.bytes) continue;
      Unit& u = chains[unit_of(v.index)];
      if (u.arena < 0) u = {v.arena, v.first_use, v.last_use, *v.bytes};
      Unit& into = u.arena == v.arena ? u
                                      : elsewhere
                                            .emplace(std::pair{v.arena, unit_of(v.index)},
                                                     Unit{v.arena, v.first_use, v.last_use, *v.bytes})
                                            .first->second;
      into.add(v.first_use, v.last_use, *v.bytes);
    }
    // Workspaces: held for their owner's step.
    std::vector<int> pc(p_.nodes.size(), 0);
    for (size_t k = 0; k < p_.execution_order.size(); ++k) pc[p_.execution_order[k]] = static_cast<int>(k);
    std::map<std::pair<int, int>, Unit> workspaces;  // (arena, node)
    for (const auto& node : p_.nodes)
      for (const plan_doc::WorkspaceDoc& w : node.workspace) {
        const auto& a = p_.arenas[w.arena];
        if (w.offset % a.alignment)
          fail("alignment", "the workspace of " + node_text(node.index) + " is at offset " + std::to_string(w.offset) +
                                ", not a multiple of arena " + a.name + "'s alignment " + std::to_string(a.alignment));
        if (w.offset + w.bytes > a.bytes)
          fail("arena", "the workspace of " + node_text(node.index) + " ends at " + std::to_string(w.offset + w.bytes) +
                            ", past the end of arena " + a.name + " (" + std::to_string(a.bytes) + " bytes)");
        if (w.bytes == 0) continue;
        Unit& u = workspaces.emplace(std::pair{w.arena, node.index}, Unit{w.arena, pc[node.index], pc[node.index], 0})
                      .first->second;
        u.bytes += w.bytes;
      }
    std::vector<std::vector<std::pair<int, int64_t>>> events(p_.arenas.size());
    auto add_events = [&](const Unit& u) {
      const uint64_t al = std::max<uint64_t>(1, p_.arenas[u.arena].alignment);
      const auto size = static_cast<int64_t>((u.bytes + al - 1) / al * al);
      events[u.arena].push_back({std::max(0, u.first), size});
      events[u.arena].push_back({std::max(u.first, u.last) + 1, -size});
    };
    for (const Unit& u : chains)
      if (u.arena >= 0) add_events(u);
    for (const auto& [key, u] : elsewhere) add_events(u);
    for (const auto& [key, u] : workspaces) add_events(u);
    for (size_t a = 0; a < p_.arenas.size(); ++a) {
      const auto& arena = p_.arenas[a];
      if (arena.bytes < arena.lower_bound)
        fail("arena", "arena " + arena.name + " is " + std::to_string(arena.bytes) + " bytes, below its lower bound " +
                          std::to_string(arena.lower_bound));
      const int64_t peak = live_peak(events[a]);
      // On one stream the bound is exactly the largest live total; across streams memplan may prove a
      // larger one (a clique of unordered buffers), never a smaller one.
      const bool consistent = arena.multi_stream ? arena.lower_bound >= static_cast<uint64_t>(peak)
                                                 : arena.lower_bound == static_cast<uint64_t>(peak);
      if (!consistent)
        fail("arena", "arena " + arena.name + " records lower bound " + std::to_string(arena.lower_bound) +
                          " but its buffers' lifetimes give " + std::to_string(peak));
    }
  }

  // The allocation kinds the reader accepts (read_plan.cc), as codes: the checks below compare each value's kind
  // several times.
  enum class Kind { kPreExisting, kAllocateStatically, kAllocate, kAllocateOutput, kReuse, kShare, kExternal, kOther };
  static Kind kind_code(const std::string& kind) {
    static const std::pair<std::string_view, Kind> names[] = {{"PreExisting", Kind::kPreExisting},
                                                              {"AllocateStatically", Kind::kAllocateStatically},
                                                              {"Allocate", Kind::kAllocate},
                                                              {"AllocateOutput", Kind::kAllocateOutput},
                                                              {"Reuse", Kind::kReuse},
                                                              {"Share", Kind::kShare},
                                                              {"AllocatedExternally", Kind::kExternal}};
    for (const auto& [name, code] : names)
      if (kind == name) return code;
    return Kind::kOther;
  }

  void check_kinds() {
    auto owns_memory = [](Kind k) {
      return k == Kind::kAllocate || k == Kind::kAllocateOutput || k == Kind::kAllocateStatically ||
             k == Kind::kPreExisting || k == Kind::kExternal;
    };
    for (const ValueDoc& v : p_.values) {
      const bool unused = v.producer < 0 && v.consumers.empty() && v.implicit_consumers.empty();
      const Kind kind = kind_code(v.kind);
      if (v.producer >= 0 && kind == Kind::kPreExisting)
        fail("kind", value_text(v.index) + " is written by " + node_text(v.producer) +
                         " but its kind is PreExisting (memory that exists before the run)");
      if (v.graph_input && kind != Kind::kPreExisting)
        fail("kind", value_text(v.index) + " is a graph input but its kind is " + v.kind + " (expected PreExisting)");
      if (v.initializer && kind != Kind::kAllocateStatically && !unused)
        fail("kind",
             value_text(v.index) + " is an initializer but its kind is " + v.kind + " (expected AllocateStatically)");
      if (v.graph_output && !v.graph_input && !v.initializer && kind != Kind::kAllocateOutput && kind != Kind::kShare &&
          kind != Kind::kExternal)
        fail("kind", value_text(v.index) + " is a graph output but its kind is " + v.kind +
                         " (expected AllocateOutput or Share)");
      if (kind == Kind::kReuse || kind == Kind::kShare) {
        const ValueDoc& root = p_.values[v.reused_buffer];
        if (v.reused_buffer == v.index || !owns_memory(kind_code(root.kind)))
          fail("kind", value_text(v.index) + " is " + v.kind + " of " + value_text(root.index) + ", which is " +
                           root.kind + " and owns no memory");
      } else if (v.reused_buffer != v.index) {
        fail("kind",
             value_text(v.index) + " is " + v.kind + " but names " + value_text(v.reused_buffer) + " as its buffer");
      }
      const bool needs_arena =
          (kind == Kind::kAllocate || kind == Kind::kAllocateOutput || kind == Kind::kAllocateStatically) && v.bytes;
      if (needs_arena && v.arena < 0)
        fail("kind", value_text(v.index) + " is " + v.kind + " but has no place in an arena");
      if ((kind == Kind::kPreExisting || kind == Kind::kExternal) && v.arena >= 0)
        fail("kind", value_text(v.index) + " is " + v.kind + " (memory the plan does not own) but has an arena offset");
    }
  }

  // Offload (version 2): each moved value's copies are what the record says. A staging value is written by a
  // MemcpyFromHost on the copy-in stream reading its home, in host memory; an activation's home is written by a
  // MemcpyToHost on the copy-out stream reading the device value its producer wrote. That every reader of a staging
  // value runs after its copy completed, that no region over a staging value is written while a copy or a reader
  // still needs it, and that a copy-out has read its source before anything overwrites it, are the use and overlap
  // checks every value gets.
  void check_offload() {
    if (!p_.offload) {
      for (const ValueDoc& v : p_.values)
        if (v.staging_of != -1)
          fail("offload", value_text(v.index) + " is a staging copy of " + value_text(v.staging_of) +
                              " but the plan records no offload");
      return;
    }
    const plan_doc::OffloadDoc& o = *p_.offload;
    auto copy_of = [&](int value, const char* op, int stream, int input) -> std::string {
      const ValueDoc& v = p_.values[value];
      if (v.producer < 0) return value_text(value) + " has no producer";
      const auto& node = p_.nodes[v.producer];
      if (node.op_type != op) return value_text(value) + " is written by " + node_text(v.producer) + ", not a " + op;
      if (node.stream != stream)
        return node_text(v.producer) + " runs on stream " + std::to_string(node.stream) + ", not on the " +
               (std::string(op) == "MemcpyFromHost" ? "copy-in" : "copy-out") + " stream " + std::to_string(stream);
      if (node.inputs.size() != 1 || node.inputs[0] != input)
        return node_text(v.producer) + " does not read " + value_text(input);
      return "";
    };
    auto on_host = [&](int value) { return in_cpu_memory(p_.values[value]); };
    std::vector<int> recorded(p_.values.size(), -1);
    for (size_t k = 0; k < o.moved.size(); ++k) {
      const auto& m = o.moved[k];
      const std::string what = "offload.moved[" + std::to_string(k) + "] (" + value_text(m.home) + "): ";
      if (!on_host(m.home)) fail("offload", what + "its home is on " + p_.values[m.home].location + ", not the host");
      if (m.weight == (m.source != -1))
        fail("offload", what + (m.weight ? "a weight has no source value" : "an activation needs its source value"));
      if (m.source != -1) {
        const std::string e = copy_of(m.home, "MemcpyToHost", o.copy_out_stream, m.source);
        if (!e.empty()) fail("offload", what + e);
        if (on_host(m.source)) fail("offload", what + value_text(m.source) + " is already in host memory");
      }
      for (int s : m.staging) {
        recorded[s] = m.home;
        const std::string e = copy_of(s, "MemcpyFromHost", o.copy_in_stream, m.home);
        if (!e.empty()) fail("offload", what + e);
        if (on_host(s)) fail("offload", what + value_text(s) + " is a staging copy but lives in host memory");
        if (p_.values[s].staging_of != m.home)
          fail("offload", what + value_text(s) + " is listed as its staging copy but says staging_of " +
                              std::to_string(p_.values[s].staging_of));
      }
    }
    for (const ValueDoc& v : p_.values)
      if (v.staging_of != -1 && recorded[v.index] == -1)
        fail("offload", value_text(v.index) + " says it is a staging copy, but offload.moved does not list it");
    for (int s : {o.copy_in_stream, o.copy_out_stream}) {
      if (s < 0) continue;
      const std::string want = s == o.copy_in_stream ? "copy-in" : "copy-out";
      if (p_.streams[s].purpose != want)
        fail("offload", "stream " + std::to_string(s) + " is offload's " + want + " stream but its purpose is '" +
                            p_.streams[s].purpose + "'");
    }
  }

  // Each body is a plan of its own, checked by the same rules; its owner must hold the body's arenas while it
  // runs, and every value it reads from outside must be one the owner reads (so the enclosing plan keeps it
  // alive across the owner's step).
  void check_bodies() {
    for (const plan_doc::SubgraphDoc& sub : p_.subgraphs) {
      const std::string where = "in body '" + sub.attribute + "' of " + node_text(sub.owner) + ": ";
      Report body = Validator(sub.plan).run();
      for (Violation& v : body.violations) fail(v.check, where + v.message);
      report_.values_checked += body.values_checked;
      report_.uses_checked += body.uses_checked;
      report_.regions_checked += body.regions_checked;
      const auto& owner = p_.nodes[sub.owner];
      for (const auto& a : sub.plan.arenas) {
        uint64_t held = 0;
        for (const plan_doc::WorkspaceDoc& w : owner.workspace)
          if (p_.arenas[w.arena].location == a.location) held = std::max(held, w.bytes);
        if (held < a.bytes)
          fail("workspace", node_text(sub.owner) + " holds " + std::to_string(held) + " bytes on " + a.location +
                                " while it runs, but its body '" + sub.attribute + "' needs arena " + a.name + " of " +
                                std::to_string(a.bytes) + " bytes");
      }
      for (const ValueDoc& v : sub.plan.values)
        if (v.outer_scope && (!v.consumers.empty() || !v.implicit_consumers.empty()) &&
            plan_doc::outer_value_source(p_, owner, v.name) < 0)
          fail("structure", where + "value '" + v.name + "' comes from an enclosing graph, but " +
                                node_text(sub.owner) + " does not list it among its implicit inputs");
    }
  }

  const PlanDoc& p_;
  std::vector<int32_t> root_;                                               // each value's in-place chain root
  mutable std::vector<int> slot_ = std::vector<int>(p_.values.size(), -1);  // scratch: a root's region, or -1
  Report report_;
  sync::Knowledge known_;
  std::vector<uint8_t> host_access_;  // tabulate_host_access
  bool deadlocked_ = false;
};

}  // namespace

Report validate_plan(const PlanDoc& plan) {
  return Validator(plan).run();
}

}  // namespace memplan::validate
