#include "memplan/validate/validate.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

namespace memplan::validate {
namespace {

using plan_doc::PlanDoc;
using plan_doc::StepDoc;
using plan_doc::ValueDoc;

// When a node launches: its stream, its position among the stream's launches, and what is known to be
// complete at that moment, per stream (launch counts): `host` as the host knows it, `device` as the
// device orders it (host knowledge implies device order; in-order streams add their own past work).
struct Launch {
  int stream = -1, position = -1, step = -1;
  std::vector<int> host, device, issued;
  bool host_complete = false;  // done when its launch returns: CPU kernels, and Shape on any device (as ORT assumes)
};

class Validator {
 public:
  explicit Validator(const PlanDoc& p) : p_(p) {}

  Report run() {
    auto start = std::chrono::steady_clock::now();
    check_structure();
    if (report_.violations.empty()) {
      simulate();
      if (!deadlocked_) {
        check_uses();
        check_overlaps();
        check_releases();
      }
      check_offsets_and_arenas();
      check_kinds();
    }
    report_.values_checked = p_.values.size();
    report_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(report_);
  }

 private:
  void fail(const std::string& check, const std::string& message) { report_.violations.push_back({check, message}); }

  std::string node_text(int n) const {
    const auto& node = p_.nodes[n];
    std::string s = "node " + std::to_string(n) + " '" + (node.name.empty() ? node.op_type : node.name) + "'";
    if (launch_.size() > static_cast<size_t>(n) && launch_[n].stream >= 0)
      s += " (stream " + std::to_string(launch_[n].stream) + ", step " + std::to_string(launch_[n].step) + ")";
    return s;
  }
  std::string value_text(int v) const { return "value " + std::to_string(v) + " '" + p_.values[v].name + "'"; }

  void check_structure() {
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

  // Runs the steps of all streams as the synchronisation allows, computing each launch's knowledge.
  void simulate() {
    const size_t S = p_.streams.size();
    launch_.assign(p_.nodes.size(), Launch{});
    // host/device: launches known complete; issued: launches known to have been issued (host order);
    // executed: steps known to have run (host order), to tell whether a notification was activated.
    std::vector<std::vector<int>> host(S, std::vector<int>(S, 0)), device(S, std::vector<int>(S, 0)),
        issued(S, std::vector<int>(S, 0)), executed(S, std::vector<int>(S, 0));
    std::vector<int> launched(S, 0);
    struct Snapshot {
      std::vector<int> clock, issued, executed;
      int stream = -1, step = -1;
    };
    std::map<int, Snapshot> triggers;       // fired trigger -> the host knowledge then
    std::map<int, Snapshot> notifications;  // activated notification -> the device knowledge then
    std::vector<size_t> next(S, 0);
    size_t remaining = 0;
    for (const auto& s : p_.streams) remaining += s.steps.size();
    auto merge = [](std::vector<int>& into, const std::vector<int>& from) {
      for (size_t t = 0; t < into.size(); ++t) into[t] = std::max(into[t], from[t]);
    };
    bool progress = true;
    while (remaining && progress) {
      progress = false;
      for (size_t s = 0; s < S; ++s) {
        const bool cpu = p_.streams[s].on_cpu();
        while (next[s] < p_.streams[s].steps.size()) {
          const StepDoc& st = p_.streams[s].steps[next[s]];
          if (st.kind == "Barrier") {
            auto it = triggers.find(st.trigger);
            if (it == triggers.end()) break;  // not fired yet
            merge(host[s], it->second.clock);
            merge(device[s], it->second.clock);
            merge(issued[s], it->second.issued);
            merge(executed[s], it->second.executed);
          } else if (st.kind == "WaitOnEP") {
            // Waiting never blocks: waiting on an event not yet recorded returns at once (CUDA's
            // semantics). It gives knowledge only if this stream knows the activation already ran.
            auto it = notifications.find(st.notification);
            if (it != notifications.end() && executed[s][it->second.stream] > it->second.step) {
              merge(device[s], it->second.clock);
              merge(issued[s], it->second.issued);
              if (cpu || st.host_wait) merge(host[s], it->second.clock);  // a host wait: the host now knows
            }
          } else if (st.kind == "LaunchKernel") {
            Launch& l = launch_[st.node];
            l.stream = static_cast<int>(s);
            l.position = launched[s];
            l.step = static_cast<int>(next[s]);
            l.host = host[s];
            l.device = device[s];
            l.issued = issued[s];
            l.host_complete = cpu || p_.nodes[st.node].op_type == "Shape";
            ++launched[s];
            issued[s][s] = launched[s];
            device[s][s] = launched[s];         // in-order: the next work on this stream follows it
            if (cpu) host[s][s] = launched[s];  // CPU kernels complete before the step returns
          } else if (st.kind == "ActivateNotification") {
            notifications[st.notification] = {device[s], issued[s], executed[s], static_cast<int>(s),
                                              static_cast<int>(next[s])};
          } else if (st.kind == "TriggerDownstream") {
            executed[s][s] = static_cast<int>(next[s]) + 1;
            triggers[st.trigger] = {host[s], issued[s], executed[s], static_cast<int>(s), static_cast<int>(next[s])};
          }
          ++next[s];
          executed[s][s] = static_cast<int>(next[s]);
          --remaining;
          progress = true;
        }
      }
    }
    if (remaining) {
      deadlocked_ = true;
      for (size_t s = 0; s < S; ++s)
        if (next[s] < p_.streams[s].steps.size()) {
          const StepDoc& st = p_.streams[s].steps[next[s]];
          fail("deadlock", "stream " + std::to_string(s) + " step " + std::to_string(next[s]) + " (" + st.kind +
                               " for " + node_text(st.node) + ") waits for " +
                               (st.kind == "Barrier" ? "trigger " + std::to_string(st.trigger)
                                                     : "notification " + std::to_string(st.notification)) +
                               ", which no step that can still run provides");
        }
    }
  }

  // Whether node n touches value v on the host when it is launched: CPU kernels, Shape (ORT assumes it
  // complete on launch), and a device kernel's host code reading a CPU-memory input (a shape, an axis).
  // The copy nodes move CPU memory on the device timeline.
  bool on_host(int n, int v) const {
    if (launch_[n].host_complete) return true;
    const std::string& op = p_.nodes[n].op_type;
    return p_.values[v].location == "cpu" && op != "MemcpyFromHost" && op != "MemcpyToHost";
  }

  // Node a's access to value va is over before node b's access to vb begins, in every interleaving.
  bool ordered(int a, int va, int b, int vb) const {
    const Launch &la = launch_[a], &lb = launch_[b];
    if (on_host(a, va)) return lb.issued[la.stream] > la.position;  // over once a was issued
    const auto& clock = on_host(b, vb) || p_.streams[lb.stream].on_cpu() ? lb.host : lb.device;
    return clock[la.stream] > la.position;
  }

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

  int unit_of(int v) const {
    int guard = 0;
    while (p_.values[v].inplace_of >= 0 && guard++ < 1 << 20) v = p_.values[v].inplace_of;
    return v;
  }

  std::vector<int> users(int v) const {
    const ValueDoc& val = p_.values[v];
    std::vector<int> u(val.consumers.begin(), val.consumers.end());
    u.insert(u.end(), val.implicit_consumers.begin(), val.implicit_consumers.end());
    if (val.producer >= 0) u.push_back(val.producer);
    return u;
  }

  // a's memory is free for b: a never outlives the run (not a weight or an output), b is written by a
  // node, and every user of a completed before that node starts.
  bool done_before(int a, int b) const {
    const ValueDoc &va = p_.values[a], &vb = p_.values[b];
    if (va.initializer || va.graph_output || va.graph_input || vb.producer < 0) return false;
    for (int u : users(a))
      if (!ordered(u, a, vb.producer, b)) return false;
    return true;
  }

  void check_overlaps() {
    // Per arena, an interval sweep over offsets: only pairs whose regions share bytes are examined.
    std::map<int, std::vector<int>> by_arena;
    for (const ValueDoc& v : p_.values)
      if (v.arena >= 0 && v.bytes && *v.bytes > 0) by_arena[v.arena].push_back(v.index);
    for (auto& [arena, vs] : by_arena) {
      std::sort(vs.begin(), vs.end(), [&](int a, int b) { return p_.values[a].offset < p_.values[b].offset; });
      std::vector<int> active;
      for (int b : vs) {
        const uint64_t start = p_.values[b].offset;
        active.erase(std::remove_if(active.begin(), active.end(),
                                    [&](int a) { return p_.values[a].offset + *p_.values[a].bytes <= start; }),
                     active.end());
        for (int a : active) {
          if (unit_of(a) == unit_of(b)) continue;  // an in-place chain the plan declares
          ++report_.overlapping_pairs;
          if (!done_before(a, b) && !done_before(b, a))
            fail("overlap", value_text(a) + " and " + value_text(b) + " share bytes of arena " + std::to_string(arena) +
                                " ([" + std::to_string(p_.values[a].offset) + ", +" +
                                std::to_string(*p_.values[a].bytes) + ") and [" + std::to_string(start) + ", +" +
                                std::to_string(*p_.values[b].bytes) + ")) but may be live at the same time");
        }
        active.push_back(b);
      }
    }
  }

  void check_releases() {
    std::vector<std::vector<int>> points(p_.releases.size());
    for (const auto& node : p_.nodes)
      for (int r : node.releases) points[r].push_back(node.index);
    std::vector<int> actions_of(p_.values.size(), 0);
    for (size_t r = 0; r < p_.releases.size(); ++r) {
      const auto& rel = p_.releases[r];
      ++actions_of[rel.value];
      if (static_cast<int>(points[r].size()) != rel.ref_count)
        fail("release", "release action " + std::to_string(r) + " of " + value_text(rel.value) + " has ref_count " +
                            std::to_string(rel.ref_count) + " but " + std::to_string(points[r].size()) +
                            " nodes perform it");
    }
    for (const ValueDoc& w : p_.values) {
      int root = w.reused_buffer;
      for (size_t r = 0; r < p_.releases.size(); ++r) {
        if (p_.releases[r].value != root) continue;
        for (int u : users(w.index)) {
          bool covered = false;
          for (int x : points[r]) covered = covered || x == u || ordered(u, w.index, x, w.index);
          if (!covered)
            fail("release", "the buffer of " + value_text(w.index) + " is released (action " + std::to_string(r) +
                                ") before its use by " + node_text(u) + " is known to have completed");
        }
      }
    }
    for (const ValueDoc& v : p_.values) {
      bool consumed = false;
      for (const ValueDoc& w : p_.values)
        if (w.reused_buffer == v.index && (!w.consumers.empty() || !w.implicit_consumers.empty())) consumed = true;
      if (v.reused_buffer == v.index && (v.kind == "Allocate" || v.kind == "AllocatedExternally") && consumed &&
          actions_of[v.index] != 1)
        fail("release", value_text(v.index) + " (" + v.kind + ") has " + std::to_string(actions_of[v.index]) +
                            " release actions; a consumed buffer is released exactly once");
    }
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
    // The lower bound, recomputed: the largest total of aligned unit sizes live at one program counter.
    std::map<int, std::map<int, std::pair<int, int>>> units;  // arena -> unit -> [first, last]
    std::map<int, std::map<int, uint64_t>> unit_bytes;
    for (const ValueDoc& v : p_.values) {
      if (v.arena < 0 || !v.bytes) continue;
      int u = unit_of(v.index);
      auto& span = units[v.arena].emplace(u, std::pair{v.first_use, v.last_use}).first->second;
      span.first = std::min(span.first, v.first_use);
      span.second = std::max(span.second, v.last_use);
      unit_bytes[v.arena][u] = std::max(unit_bytes[v.arena][u], *v.bytes);
    }
    for (size_t a = 0; a < p_.arenas.size(); ++a) {
      const auto& arena = p_.arenas[a];
      if (arena.bytes < arena.lower_bound)
        fail("arena", "arena " + arena.name + " is " + std::to_string(arena.bytes) + " bytes, below its lower bound " +
                          std::to_string(arena.lower_bound));
      std::vector<std::pair<int, int64_t>> events;
      for (const auto& [u, span] : units[static_cast<int>(a)]) {
        uint64_t al = std::max<uint64_t>(1, arena.alignment);
        int64_t size = static_cast<int64_t>((unit_bytes[static_cast<int>(a)][u] + al - 1) / al * al);
        events.push_back({std::max(0, span.first), size});
        events.push_back({std::max(span.first, span.second) + 1, -size});
      }
      std::sort(events.begin(), events.end());
      int64_t live = 0, peak = 0;
      for (auto [t, d] : events) peak = std::max(peak, live += d);
      // On one stream the bound is exactly the largest live total; across streams memplan may prove a
      // larger one (a clique of unordered buffers), never a smaller one.
      const bool consistent = arena.multi_stream ? arena.lower_bound >= static_cast<uint64_t>(peak)
                                                 : arena.lower_bound == static_cast<uint64_t>(peak);
      if (!consistent)
        fail("arena", "arena " + arena.name + " records lower bound " + std::to_string(arena.lower_bound) +
                          " but its buffers' lifetimes give " + std::to_string(peak));
    }
  }

  void check_kinds() {
    static const std::set<std::string> owners = {"Allocate", "AllocateOutput", "AllocateStatically", "PreExisting",
                                                 "AllocatedExternally"};
    for (const ValueDoc& v : p_.values) {
      const bool unused = v.producer < 0 && v.consumers.empty() && v.implicit_consumers.empty();
      if (v.graph_input && v.kind != "PreExisting")
        fail("kind", value_text(v.index) + " is a graph input but its kind is " + v.kind + " (expected PreExisting)");
      if (v.initializer && v.kind != "AllocateStatically" && !unused)
        fail("kind",
             value_text(v.index) + " is an initializer but its kind is " + v.kind + " (expected AllocateStatically)");
      if (v.graph_output && !v.graph_input && !v.initializer && v.kind != "AllocateOutput" && v.kind != "Share" &&
          v.kind != "AllocatedExternally")
        fail("kind", value_text(v.index) + " is a graph output but its kind is " + v.kind +
                         " (expected AllocateOutput or Share)");
      if (v.kind == "Reuse" || v.kind == "Share") {
        const ValueDoc& root = p_.values[v.reused_buffer];
        if (v.reused_buffer == v.index || !owners.count(root.kind))
          fail("kind", value_text(v.index) + " is " + v.kind + " of " + value_text(root.index) + ", which is " +
                           root.kind + " and owns no memory");
      } else if (v.reused_buffer != v.index) {
        fail("kind",
             value_text(v.index) + " is " + v.kind + " but names " + value_text(v.reused_buffer) + " as its buffer");
      }
      const bool needs_arena =
          (v.kind == "Allocate" || v.kind == "AllocateOutput" || v.kind == "AllocateStatically") && v.bytes;
      if (needs_arena && v.arena < 0)
        fail("kind", value_text(v.index) + " is " + v.kind + " but has no place in an arena");
      if ((v.kind == "PreExisting" || v.kind == "AllocatedExternally") && v.arena >= 0)
        fail("kind", value_text(v.index) + " is " + v.kind + " (memory the plan does not own) but has an arena offset");
    }
  }

  const PlanDoc& p_;
  Report report_;
  std::vector<Launch> launch_;
  bool deadlocked_ = false;
};

}  // namespace

Report validate_plan(const PlanDoc& plan) {
  return Validator(plan).run();
}

}  // namespace memplan::validate
