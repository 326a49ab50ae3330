#include "memplan/sync_knowledge.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>

namespace memplan::sync {

bool host_access(const std::string& op_type, bool stream_on_cpu, bool value_in_cpu_memory) {
  if (stream_on_cpu || op_type == "Shape" || op_type == "Size") return true;
  return value_in_cpu_memory && op_type != "MemcpyFromHost" && op_type != "MemcpyToHost";
}

const int* Knowledge::completed_before(int b, bool b_on_host) const {
  return b_on_host || stream_on_cpu[launches[b].stream] ? host(b) : device(b);
}

bool Knowledge::ordered(int a, bool a_on_host, int b, bool b_on_host) const {
  const Launch &la = launches[a], &lb = launches[b];
  if (la.stream < 0 || lb.stream < 0) return false;
  if (a_on_host) return issued(b)[la.stream] > la.position;  // over once a was issued
  return completed_before(b, b_on_host)[la.stream] > la.position;
}

Knowledge simulate(const std::vector<Stream>& streams, size_t node_count) {
  const size_t S = streams.size();
  Knowledge k;
  k.launches.assign(node_count, Launch{});
  k.stuck_at.assign(S, -1);
  for (const Stream& s : streams) k.stream_on_cpu.push_back(s.on_cpu);
  k.host_.assign(node_count * S, 0);
  k.device_.assign(node_count * S, 0);
  k.issued_.assign(node_count * S, 0);
  // host/device/issued as above; executed: steps known to have run (host order), to tell whether a
  // notification was activated before a wait on it.
  std::vector<std::vector<int>> host(S, std::vector<int>(S, 0)), device(S, std::vector<int>(S, 0)),
      issued(S, std::vector<int>(S, 0)), executed(S, std::vector<int>(S, 0));
  std::vector<int> launched(S, 0);
  // The knowledge at a fired trigger or an activated notification: its clock, issued and executed rows, S ints each,
  // one after another in `rows` from `at` (three vectors per snapshot were a million allocations on a 1M-node plan
  // of 4 streams with 350k triggers).
  struct Snapshot {
    size_t at = 0;
    int stream = -1, step = -1;
  };
  std::vector<int> rows;
  auto snapshot = [&](const std::vector<int>& clock, const std::vector<int>& issued_now,
                      const std::vector<int>& executed_now, size_t s, size_t step) {
    const Snapshot taken{rows.size(), static_cast<int>(s), static_cast<int>(step)};
    for (const auto* row : {&clock, &issued_now, &executed_now}) rows.insert(rows.end(), row->begin(), row->end());
    return taken;
  };
  auto clock_of = [&](const Snapshot& x) { return rows.data() + x.at; };
  auto issued_of = [&](const Snapshot& x) { return rows.data() + x.at + S; };
  auto executed_of = [&](const Snapshot& x) { return rows.data() + x.at + 2 * S; };
  // (Hash tables: a 1M-node plan on 4 streams has ~100k notifications, and the ids come from a file.)
  absl::flat_hash_map<int, Snapshot> triggers;       // fired trigger -> the host knowledge then
  absl::flat_hash_map<int, Snapshot> notifications;  // activated notification -> the device knowledge then
  std::vector<size_t> next(S, 0);
  size_t remaining = 0, signals = 0;
  for (const auto& s : streams) {
    remaining += s.steps.size();
    for (const Step& st : s.steps) signals += st.kind == StepKind::kActivate || st.kind == StepKind::kTrigger;
  }
  rows.reserve(signals * 3 * S);
  auto merge = [](std::vector<int>& into, const int* from) {
    for (size_t t = 0; t < into.size(); ++t) into[t] = std::max(into[t], from[t]);
  };
  bool progress = true;
  while (remaining && progress) {
    progress = false;
    for (size_t s = 0; s < S; ++s) {
      const bool cpu = streams[s].on_cpu;
      while (next[s] < streams[s].steps.size()) {
        const Step& st = streams[s].steps[next[s]];
        if (st.kind == StepKind::kBarrier) {
          auto it = triggers.find(st.id);
          if (it == triggers.end()) break;  // not fired yet
          merge(host[s], clock_of(it->second));
          merge(device[s], clock_of(it->second));
          merge(issued[s], issued_of(it->second));
          merge(executed[s], executed_of(it->second));
        } else if (st.kind == StepKind::kWait) {
          // Waiting never blocks: waiting on an event not yet recorded returns at once (CUDA's
          // semantics). It gives knowledge only if this stream knows the activation already ran.
          auto it = notifications.find(st.id);
          if (it != notifications.end() && executed[s][it->second.stream] > it->second.step) {
            merge(device[s], clock_of(it->second));
            merge(issued[s], issued_of(it->second));
            if (cpu || st.host_wait) merge(host[s], clock_of(it->second));  // a host wait: the host now knows
          }
        } else if (st.kind == StepKind::kLaunch && st.node >= 0 && static_cast<size_t>(st.node) < node_count) {
          Launch& l = k.launches[st.node];
          l.stream = static_cast<int>(s);
          l.position = launched[s];
          l.step = static_cast<int>(next[s]);
          const size_t row = k.row(st.node);
          std::copy(host[s].begin(), host[s].end(), k.host_.begin() + row);
          std::copy(device[s].begin(), device[s].end(), k.device_.begin() + row);
          std::copy(issued[s].begin(), issued[s].end(), k.issued_.begin() + row);
          ++launched[s];
          issued[s][s] = launched[s];
          device[s][s] = launched[s];  // in-order: the next work on this stream follows it
          // A CPU stream's work is complete when its launch returns. A device stream's host work (Shape)
          // is too, but that says nothing of the device work queued before it, so the stream's own
          // host knowledge does not advance.
          if (cpu) host[s][s] = launched[s];
        } else if (st.kind == StepKind::kActivate) {
          notifications[st.id] = snapshot(device[s], issued[s], executed[s], s, next[s]);
        } else if (st.kind == StepKind::kTrigger) {
          executed[s][s] = static_cast<int>(next[s]) + 1;
          triggers[st.id] = snapshot(host[s], issued[s], executed[s], s, next[s]);
        }
        ++next[s];
        executed[s][s] = static_cast<int>(next[s]);
        --remaining;
        progress = true;
      }
    }
  }
  if (remaining) {
    k.deadlocked = true;
    for (size_t s = 0; s < S; ++s)
      if (next[s] < streams[s].steps.size()) k.stuck_at[s] = static_cast<int>(next[s]);
  }
  return k;
}

}  // namespace memplan::sync
