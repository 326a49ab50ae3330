// The executor shared by both back-ends: host threads per logical stream, triggers and barriers on the
// host, notifications as device events, release actions with reference counts.
#include "memplan/replay/replay.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "device.h"
#include "memplan/error.h"
#include "memplan/isolated.h"
#include "memplan/progress.h"
#include "memplan/sync_knowledge.h"
#include "stamp.h"

namespace memplan::replay {
namespace {

using plan_doc::PlanDoc;
using Clock = std::chrono::steady_clock;

// The value each value views: an alias's chain of views (inplace_of) followed to its end; the value itself when it is
// no view. Once per plan: a walk at each use was quadratic on long chains. (A cycle, which only a broken plan has,
// ends where it closes.)
std::vector<int> view_roots(const std::vector<plan_doc::ValueDoc>& values) {
  std::vector<int> root(values.size(), -1);
  std::vector<int> path;
  for (size_t start = 0; start < values.size(); ++start) {
    int v = static_cast<int>(start);
    path.clear();
    // Walk until a value whose root is known, one that is no view, or one already on this walk (a cycle).
    while (root[v] < 0 && values[v].alias && values[v].inplace_of >= 0) {
      root[v] = -2;  // on this walk
      path.push_back(v);
      v = values[v].inplace_of;
    }
    const int end = root[v] >= 0 ? root[v] : v;
    for (int p : path) root[p] = end;
    if (root[v] < 0) root[v] = end;
  }
  return root;
}

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

class Executor {
 public:
  Executor(const PlanDoc& p, const ReplayOptions& o, Device& d) : p_(p), o_(o), dev_(d) {}

  ReplayReport run() {
    ReplayReport report;
    report.backend = dev_.name();
    report.peak_gbps = dev_.peak_gbps();
    prepare();
    const bool progress = o_.show_progress && o_.iterations > 1;  // (drawn on a terminal only: progress.h)
    auto start = Clock::now();
    for (int it = 0; it < o_.iterations && !aborted_; ++it) {
      // With jitter, runs take turns: each stream in turn made slow while the others run flat out, so
      // that a missing wait or an early release on any one stream meets the interleaving that exposes
      // it; then one run with random delays on every stream.
      const int streams = static_cast<int>(p_.streams.size());
      slow_stream_ = it % (streams + 1) < streams ? it % (streams + 1) : -1;
      run_index_ = it;
      iteration(o_.seed + static_cast<uint64_t>(it));
      ++report.iterations;
      if (progress) {
        const uint64_t errors = dev_.mismatch_count() + host_sink_.count() + problem_count_;
        show_progress_text("memplan: replay run " + std::to_string(it + 1) + " of " + std::to_string(o_.iterations) +
                           ", " + std::to_string(errors) + " error(s) so far");
      }
    }
    if (progress) (void)pause_progress_line();  // (cleared)
    dev_.synchronize();
    report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    report.streams = static_cast<int>(p_.streams.size());
    if (o_.jitter) report.lagged = std::min(report.iterations, report.streams);
    report.bytes_verified = bytes_read_ * static_cast<uint64_t>(report.iterations);
    report.bytes_written = bytes_written_ * static_cast<uint64_t>(report.iterations);
    uint64_t device_count = 0, host_count = 0;
    auto device = dev_.mismatches(device_count);
    auto host = host_sink_.take(host_count);
    report.error_count = device_count + host_count + problem_count_;
    report.errors = problems_;
    for (const auto* list : {&host, &device})
      for (const Mismatch& m : *list)
        if (report.errors.size() < 50) report.errors.push_back(describe(m));
    return report;
  }

 private:
  // Regions: arena values at their offsets; graph inputs and external outputs in buffers of their own.
  // What a runtime refuses before running: misplaced buffers, and memory it is not allowed to write.
  void preflight() {
    for (const auto& v : p_.values) {
      if (v.arena >= 0) {
        const auto& a = p_.arenas[v.arena];
        if (a.alignment > 1 && v.offset % a.alignment)
          add_problem("value '" + v.name + "' is at offset " + std::to_string(v.offset) + ", not aligned to " +
                      std::to_string(a.alignment) + " as arena " + a.name + " requires");
      }
      if (v.kind == "PreExisting" && v.producer >= 0)
        add_problem("value '" + v.name + "' is PreExisting (the caller's memory) but node " +
                    std::to_string(v.producer) + " writes it");
      if (v.graph_output && !v.graph_input && !v.initializer && v.kind != "AllocateOutput" && v.kind != "Share" &&
          v.kind != "AllocatedExternally")
        add_problem("graph output '" + v.name + "' is " + v.kind + ", so the runtime cannot hand it to the caller");
    }
  }

  void prepare() {
    preflight();
    for (const auto& a : p_.arenas) {
      uint64_t words = a.bytes / 4 + 2;
      arenas_.push_back({dev_.allocate(words, a.location == "cpu"), words});
    }
    region_.assign(p_.values.size(), Access{});
    view_root_ = view_roots(p_.values);
    std::vector<int> views;  // views of a value outside every arena: they get its region, below
    for (const auto& v : p_.values) {
      if (!v.bytes || *v.bytes == 0) continue;
      if (v.arena < 0 && view_root_[v.index] != v.index) {
        views.push_back(v.index);
        continue;
      }
      uint64_t words = (*v.bytes + 3) / 4;
      if (v.arena >= 0) {
        const auto& arena = p_.arenas[v.arena];
        if (v.offset % 4) {
          add_problem("value '" + v.name + "': offset " + std::to_string(v.offset) + " is not even word aligned");
          continue;
        }
        if (v.offset + *v.bytes > arena.bytes)
          add_problem("value '" + v.name + "' ends at " + std::to_string(v.offset + *v.bytes) + ", past arena " +
                      arena.name + " (" + std::to_string(arena.bytes) + " bytes)");
        uint64_t first = v.offset / 4;
        words = std::min(words, arenas_[v.arena].second > first ? arenas_[v.arena].second - first : 0);
        region_[v.index] = {v.index, arenas_[v.arena].first + first, words};
      } else {  // caller's inputs, external outputs, anything without a place: a buffer of its own
        region_[v.index] = {v.index, dev_.allocate(words, v.location == "cpu"), words};
        own_.push_back(v.index);
      }
    }
    // A view of a caller's input (a Reshape of it, as many models begin) is the caller's memory, as a runtime makes
    // it; a buffer of its own would never hold the input's bytes.
    for (int v : views) region_[v] = region_[view_root_[v]];
    // Streams: device streams for non-CPU logical streams; events per notification.
    for (const auto& s : p_.streams) device_stream_.push_back(s.on_cpu() ? -1 : dev_.create_stream());
    int notifications = 0, triggers = 0;
    for (const auto& s : p_.streams)
      for (const auto& st : s.steps) {
        notifications = std::max(notifications, st.notification + 1);
        triggers = std::max(triggers, st.trigger + 1);
      }
    for (int n = 0; n < notifications; ++n) events_.push_back(dev_.create_event());
    // A buffer is free once every release point's kernel is done, not when the host passes the last
    // one (ORT relies on its stream-aware allocator for that): one event per (release action, point).
    release_events_.assign(p_.releases.size(), {});
    for (const auto& node : p_.nodes)
      for (int r : node.releases) release_events_[r].push_back({node.index, dev_.create_event()});
    // By point, so that each point finds its own events by bisection (a value read on many streams has a point per
    // reader: a scan per point was quadratic).
    for (auto& events : release_events_)
      std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    fired_ = std::vector<std::atomic<bool>>(static_cast<size_t>(triggers));
    step_of_.assign(p_.nodes.size(), -1);
    for (const auto& s : p_.streams)
      for (size_t k = 0; k < s.steps.size(); ++k)
        if (s.steps[k].kind == "LaunchKernel") step_of_[s.steps[k].node] = static_cast<int>(k);
    // A view (alias) carries the stamp of the value it views, and no kernel writes it.
    stamp_of_.assign(p_.values.size(), -1);
    for (const auto& v : p_.values) {
      const int s = view_root_[v.index];
      stamp_of_[v.index] = s;
      region_[v.index].value = s;
    }
    // Offload's copies run as copies (Device::copy), so what they write carries what they read: an activation's
    // home in host memory carries its source's stamp, a staging value its home's. A reader of a staging value then
    // finds the right stamps only if the copies ran, in order, after their sources were written.
    if (p_.offload)
      for (const auto& m : p_.offload->moved) {
        if (m.source >= 0) stamp_of_[m.home] = region_[m.home].value = stamp_of_[m.source];
        for (int s : m.staging) stamp_of_[s] = region_[s].value = stamp_of_[m.home];
        copy_nodes_.insert(m.copies.begin(), m.copies.end());
      }
    members_.assign(p_.values.size(), {});
    for (const auto& v : p_.values) members_[v.reused_buffer].push_back(v.index);
    // What a release frees: the region of the buffer's last user (the latest last_use) and the members that start
    // where it does. A freelist Reuse need not share its root's offset (docs/plan-format.md): an earlier member's
    // region may hold another buffer's live value by the time the root is released.
    for (auto& members : members_) {
      const uint32_t* last_start = nullptr;
      int last_use = -1;
      for (int m : members)
        if (region_[m].words && p_.values[m].last_use >= last_use) {
          last_use = p_.values[m].last_use;
          last_start = region_[m].words;
        }
      std::erase_if(members, [&](int m) { return region_[m].words && region_[m].words != last_start; });
    }
    next_stamp_ = static_cast<int>(p_.values.size());
    prepare_bodies(p_, region_, arenas_, body_scopes_of_);
    for (const auto& node : p_.nodes) {
      if (node.op_type == "Shape" || node.op_type == "Size") continue;
      for (int v : node.inputs) bytes_read_ += v >= 0 ? region_[v].count * 4 : 0;
      for (int v : node.implicit_inputs) bytes_read_ += region_[v].count * 4;
      for (int v : node.outputs) bytes_written_ += v >= 0 && !p_.values[v].alias ? region_[v].count * 4 : 0;
    }
  }

  // Whether node n touches value v on the host at launch (the rule the validator and the layout share).
  bool on_host(int stream, int n, int v) const {
    return sync::host_access(p_.nodes[n].op_type, p_.streams[stream].on_cpu(), p_.values[v].location == "cpu");
  }

  void iteration(uint64_t seed) {
    // Fresh memory: everything unwritten, then the caller's inputs and the weights stamped.
    for (auto& [base, words] : arenas_) dev_.fill(base, words, kUnwritten);
    for (const auto& v : p_.values) {
      const Access& r = region_[v.index];
      if (!r.words) continue;
      bool preset = v.kind == "PreExisting" || v.kind == "AllocateStatically";
      if (preset)
        dev_.stamp(r.words, r.count, r.value);
      else if (v.arena < 0 && view_root_[v.index] == v.index)  // (a view shares its root's region)
        dev_.fill(r.words, r.count, kUnwritten);
    }
    dev_.synchronize();
    dev_.reset_events();
    for (auto& f : fired_) f = false;
    launched_ = std::vector<std::atomic<bool>>(p_.values.size());
    state_ = std::vector<std::atomic<int>>(p_.streams.size());
    for (auto& st : state_) st = kRunning;
    remaining_.assign(p_.releases.size(), 0);
    for (size_t r = 0; r < p_.releases.size(); ++r) remaining_[r] = p_.releases[r].ref_count;
    std::vector<std::thread> threads;
    for (size_t s = 0; s < p_.streams.size(); ++s)
      threads.emplace_back([this, s, seed] {
        // A device failure (a CUDA error, say) ends the run with a report instead of terminating.
        try {
          run_stream(static_cast<int>(s), seed);
        } catch (const std::exception& e) {
          add_problem("stream " + std::to_string(s) + ": " + e.what());
          state_[s] = kDone;
          aborted_ = true;
          trigger_cv_.notify_all();
        }
      });
    for (auto& t : threads) t.join();
    dev_.synchronize();
    // The graph outputs must hold their stamps at the end.
    KernelTask final_check;
    final_check.node = -1;
    for (const auto& v : p_.values)
      if (v.graph_output && region_[v.index].words) final_check.reads.push_back(region_[v.index]);
    bool any_device = false;
    for (size_t s = 0; s < p_.streams.size(); ++s)
      if (device_stream_[s] >= 0 && !any_device) {
        dev_.launch(device_stream_[s], final_check);
        any_device = true;
      }
    if (!any_device) check_and_write(final_check, host_sink_);
    dev_.synchronize();
  }

  void run_stream(int s, uint64_t seed) {
    std::mt19937_64 rng(seed * 1000003 + static_cast<uint64_t>(s));
    // Mostly short delays, sometimes long ones: races need one side to fall well behind. In a run with a
    // slow stream, only that stream's device work is delayed (its host side yields to the others first).
    auto delay = [&]() -> uint32_t {
      if (!o_.jitter) return 0;
      if (slow_stream_ >= 0) return s == slow_stream_ ? 100 + static_cast<uint32_t>(rng() % 200) : 0;
      return rng() % 4 == 0 ? 500 + static_cast<uint32_t>(rng() % 1500) : static_cast<uint32_t>(rng() % 50);
    };
    const int ds = device_stream_[s];
    const auto& steps = p_.streams[s].steps;
    for (size_t k = 0; k < steps.size() && !aborted_; ++k, ++progress_) {
      const auto& st = steps[k];
      if (st.kind == "Barrier") {
        Blocked blocked(state_[s], st.trigger);
        std::unique_lock<std::mutex> lock(trigger_mutex_);
        auto deadline =
            Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.timeout_s));
        if (!trigger_cv_.wait_until(lock, deadline, [&] { return fired_[st.trigger].load() || aborted_.load(); })) {
          aborted_ = true;
          add_problem("stream " + std::to_string(s) + " is stuck at step " + std::to_string(k) +
                      ": its Barrier waits for trigger " + std::to_string(st.trigger) + ", which never fired");
        }
        trigger_cv_.notify_all();
      } else if (st.kind == "WaitOnEP") {
        if (ds < 0 || st.host_wait) {
          Blocked blocked(state_[s], Blocked::on_event(events_[st.notification]));
          dev_.host_wait(events_[st.notification]);
        } else {
          dev_.wait(ds, events_[st.notification]);
        }
      } else if (st.kind == "ActivateNotification") {
        dev_.record(ds, events_[st.notification]);
      } else if (st.kind == "TriggerDownstream") {
        {
          std::lock_guard<std::mutex> lock(trigger_mutex_);
          fired_[st.trigger] = true;
        }
        trigger_cv_.notify_all();
      } else if (st.kind == "LaunchKernel") {
        launch(s, ds, st.node, delay);
      }
    }
    state_[s] = kDone;
  }

  // The slow stream's turn: it launches (on the host) and its kernels start (on the CPU twin's device
  // worker) only once every other stream is waiting or done, or has made no progress for a while (it
  // may be waiting on this stream on the device), so that whatever the others can run first, they do.
  // On the device side (`device_side`), the slow stream's own host goes first: until it waits or is done it may still
  // fire the triggers the others wait for (a copy stream signals its reader right after launching the copy), and
  // until then they could not run ahead of this kernel.
  void let_others_run(int s, bool device_side = false) {
    const auto start = Clock::now();
    auto stable_since = start;
    uint64_t last = progress_ + dev_.progress();
    while (!aborted_) {
      if (device_side && !still_waiting(s) && Clock::now() - start < std::chrono::seconds(1)) {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        continue;
      }
      bool hosts_waiting = true, devices_idle = true;
      for (size_t t = 0; t < p_.streams.size(); ++t)
        if (static_cast<int>(t) != s) {
          hosts_waiting = hosts_waiting && still_waiting(static_cast<int>(t));
          devices_idle = devices_idle && (device_stream_[t] < 0 || dev_.quiet(device_stream_[t]));
        }
      if (hosts_waiting && devices_idle) return;
      // A host thread never waits unmarked, so only the devices can be stuck (on this stream's events).
      const auto now = Clock::now();
      const uint64_t seen = progress_ + dev_.progress();
      // Where the device can tell a stream held at an event from a busy one (the CPU twin), the answer
      // above is exact; elsewhere a stretch without progress stands in for it.
      if (seen != last || !hosts_waiting || dev_.knows_quiet()) {
        last = seen;
        stable_since = now;
      } else if (now - stable_since > std::chrono::microseconds(300)) {
        return;
      }
      if (now - start > std::chrono::seconds(1)) return;  // a safety net, not a rule
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  // A real device's queue is bounded: a slow stream's host far ahead of its device would block inside a
  // launch, where its turn cannot see that it waits (and would give it up to a second each time). It waits
  // here instead, seen as waiting, while kMaxQueued of its turns are queued.
  void wait_for_turns(int s, int ds) {
    constexpr uint64_t kMaxQueued = 16;
    if (dev_.turns_queued(ds) < kMaxQueued) return;
    Blocked blocked(state_[s], kWaitsForTurns);
    while (dev_.turns_queued(ds) >= kMaxQueued && !aborted_) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }

  void launch(int s, int ds, int n, const std::function<uint32_t()>& delay) {
    const auto& node = p_.nodes[n];
    if (o_.jitter && slow_stream_ < 0) std::this_thread::sleep_for(std::chrono::microseconds(delay()));
    if (o_.jitter && slow_stream_ == s) let_others_run(s);
    // A runtime creates an output when its producer is launched; launching a consumer before that finds
    // the input missing (even a view, whose bytes are already in place).
    for (const auto* list : {&node.inputs, &node.implicit_inputs})
      for (int v : *list)
        if (v >= 0 && p_.values[v].producer >= 0 && !launched_[v].load(std::memory_order_acquire))
          add_problem("value '" + p_.values[v].name + "' (produced by " + node_text(p_.values[v].producer) +
                      ") is missing when " + node_text(n) + " is launched: its producer had not been launched yet");
    KernelTask host_task, device_task;
    host_task.node = device_task.node = n;
    host_task.sample = device_task.sample = o_.sample;
    device_task.delay_us = delay();
    if (o_.jitter && slow_stream_ == s && ds >= 0) {
      device_task.before = [this, s] { let_others_run(s, true); };
      wait_for_turns(s, ds);
    }
    auto add = [&](int v, bool write) {
      if (v < 0 || !region_[v].words) return;
      if (write && p_.values[v].alias) return;  // a view: the bytes are already there
      KernelTask& t = ds < 0 || on_host(s, n, v) ? host_task : device_task;
      if (!write)
        t.reads.push_back(region_[v]);
      else if (p_.values[v].inplace_of >= 0)
        t.writes.push_back(region_[v]);  // over its input: after reading
      else
        t.early.push_back(region_[v]);  // a kernel may write these while it still reads
    };
    if (node.op_type != "Shape" && node.op_type != "Size") {  // they read only the shape
      for (int v : node.inputs) add(v, false);
      for (int v : node.implicit_inputs) add(v, false);
    }
    for (int v : node.outputs) add(v, true);
    auto bodies = body_scopes_of_.find(n);
    if (bodies != body_scopes_of_.end()) run_bodies(s, ds, n, node.op_type, host_task, device_task, bodies->second);
    // Host-side reads happen at launch; then the device work; host-side writes (Shape) at launch too.
    const bool copy = copy_nodes_.count(n) && node.inputs.size() == 1 && node.outputs.size() == 1 &&
                      node.inputs[0] >= 0 && node.outputs[0] >= 0;
    if (copy) {
      // A copy reads and writes bytes, whatever they hold (no stamps checked, none made): on its device stream, or
      // on the host when it has none.
      const Access& from = region_[node.inputs[0]];
      const Access& to = region_[node.outputs[0]];
      if (from.words && to.words) {
        if (ds >= 0)
          dev_.copy(ds, from, to, device_task);
        else
          copy_words(from, to);
      }
    } else {
      check_and_write(host_task, host_sink_);
      if (ds >= 0 && (!device_task.reads.empty() || !device_task.writes.empty() || !device_task.early.empty()))
        dev_.launch(ds, device_task);
    }
    for (int v : node.outputs)
      if (v >= 0) launched_[v].store(true, std::memory_order_release);
    // Releases after the node: the last of a release action's points poisons the buffer's regions.
    for (int r : node.releases) {
      const auto& events = release_events_[r];
      for (auto it = std::lower_bound(events.begin(), events.end(), n,
                                      [](const std::pair<int, int>&e, int node) { return e.first < node; });
           it != events.end() && it->first == n; ++it)
        dev_.record(ds, it->second);
      if (--remaining_[r] != 0) continue;
      // Device memory is poisoned on this stream after every point's kernel; CPU memory by the host,
      // which frees it as soon as it knows those kernels are done.
      bool host_memory = p_.values[p_.releases[r].value].location == "cpu";
      for (const auto& [point, event] : release_events_[r]) {
        if (point == n && !host_memory) continue;
        if (ds < 0 || host_memory) {
          Blocked blocked(state_[s], Blocked::on_event(event));
          dev_.host_wait(event);
        } else {
          dev_.wait(ds, event);
        }
      }
      // A buffer released before its producer was even launched: wrong whatever the memory holds (an
      // earlier value at the same offsets may have stamped it, hiding the never-written pattern).
      const int root = p_.releases[r].value;
      if (p_.values[root].producer >= 0 && !launched_[root].load(std::memory_order_acquire))
        add_problem("value '" + p_.values[root].name + "' was released after " + node_text(n) +
                    " before its producer " + node_text(p_.values[root].producer) + " was launched");
      bool checked = false;
      for (int m : members_[p_.releases[r].value]) {
        const Access& region = region_[m];
        if (!region.words) continue;
        if (!checked) {  // a release before the buffer was ever written is a plan error of its own
          if (ds < 0 || host_memory)
            check_region_written(region, n, host_sink_);
          else
            dev_.check_written(ds, region, n);
          checked = true;
        }
        if (ds < 0 || host_memory)
          poison_region(region);
        else
          dev_.poison(ds, region, delay());
      }
    }
  }

  // If/Loop/Scan bodies. Each body's regions are fixed before the run: its arena values inside its owner's
  // workspace, its graph inputs (fed by the owner before each pass, as are its constants) in buffers of their own,
  // outer-scope values the enclosing plan's. An owner writes its outputs, runs its bodies (If: one branch, alternating
  // from run to run; Loop and Scan: two passes), then reads its inputs and checks its outputs survived: a workspace
  // over a live value, a body value over another, or a body release too early all show as bad stamps.
  struct BodyScope {
    const plan_doc::SubgraphDoc* sub = nullptr;
    std::vector<Access> region;                 // per body value
    std::vector<int> fed;                       // body graph inputs: the owner writes them before each pass
    std::vector<std::vector<int>> members;      // per root buffer: the body values in it
    std::map<int, std::vector<int>> bodies_of;  // body node -> scopes of the bodies it owns
  };

  // `bases`: per arena of `plan`, where its memory starts and how many words of it exist.
  void prepare_bodies(const PlanDoc& plan, const std::vector<Access>& region,
                      const std::vector<std::pair<uint32_t*, uint64_t>>& bases,
                      std::map<int, std::vector<int>>& bodies_of) {
    for (const auto& sub : plan.subgraphs) {
      const auto& owner = plan.nodes[sub.owner];
      const auto& body = sub.plan;
      const std::string where =
          "body '" + sub.attribute + "' of node " + std::to_string(sub.owner) + " '" + owner.label() + "'";
      // Each body arena lies at the start of the owner's workspace on its device.
      std::vector<std::pair<uint32_t*, uint64_t>> body_bases;
      for (const auto& a : body.arenas) {
        const plan_doc::WorkspaceDoc* held = nullptr;
        for (const auto& w : owner.workspace)
          if (plan.arenas[w.arena].location == a.location) held = &w;
        // Never past the memory that exists (a broken plan's workspace may lie outside its arena).
        std::pair<uint32_t*, uint64_t> base{nullptr, 0};
        if (held && held->offset % 4 == 0 && held->offset / 4 < bases[held->arena].second)
          base = {bases[held->arena].first + held->offset / 4,
                  std::min(held->bytes / 4, bases[held->arena].second - held->offset / 4)};
        body_bases.push_back(base);
        if (a.bytes && (!held || held->bytes < a.bytes))
          add_problem(where + " needs arena " + a.name + " of " + std::to_string(a.bytes) +
                      " bytes, but its owner holds " + std::to_string(held ? held->bytes : 0) + " bytes on " +
                      a.location + " while it runs");
      }
      for (const auto& w : owner.workspace) {  // as a runtime places them, it refuses these
        const auto& a = plan.arenas[w.arena];
        if (w.offset + w.bytes > a.bytes)
          add_problem("the workspace of node " + std::to_string(sub.owner) + " ends at " +
                      std::to_string(w.offset + w.bytes) + ", past arena " + a.name + " (" + std::to_string(a.bytes) +
                      " bytes)");
        if (a.alignment > 1 && w.offset % a.alignment)
          add_problem("the workspace of node " + std::to_string(sub.owner) + " is at offset " +
                      std::to_string(w.offset) + ", not aligned to " + std::to_string(a.alignment));
      }
      BodyScope scope;
      scope.sub = &sub;
      scope.region.assign(body.values.size(), Access{});
      for (const auto& v : body.values) {
        Access& r = scope.region[v.index];
        if (v.outer_scope) {  // the enclosing plan's value, as the owner passes it in
          const int source = plan_doc::outer_value_source(plan, owner, v.name);
          if (source >= 0) r = region[source];
          continue;
        }
        if (!v.bytes || *v.bytes == 0 || (v.alias && v.inplace_of >= 0)) continue;
        const uint64_t words = (*v.bytes + 3) / 4;
        const int stamp = next_stamp_++;
        stamp_names_.push_back(where + ": value '" + v.name + "'");
        if (v.arena >= 0) {
          const auto& [base, limit] = body_bases[v.arena];
          if (!base || v.offset % 4 || v.offset / 4 >= limit) {
            add_problem(where + ": value '" + v.name + "' at offset " + std::to_string(v.offset) +
                        " lies outside the memory its owner holds");
            continue;
          }
          r = {stamp, base + v.offset / 4, std::min(words, limit - v.offset / 4)};
          const auto& a = body.arenas[v.arena];
          if (v.offset + *v.bytes > a.bytes)
            add_problem(where + ": value '" + v.name + "' ends at " + std::to_string(v.offset + *v.bytes) +
                        ", past arena " + a.name + " (" + std::to_string(a.bytes) + " bytes)");
          if (a.alignment > 1 && v.offset % a.alignment)
            add_problem(where + ": value '" + v.name + "' is at offset " + std::to_string(v.offset) +
                        ", not aligned to " + std::to_string(a.alignment) + " as arena " + a.name + " requires");
        } else {
          r = {stamp, dev_.allocate(words, v.location == "cpu"), words};
        }
        // The body's inputs, and its constants (in its arena: loaded when the owner runs).
        if (v.graph_input || v.initializer) scope.fed.push_back(v.index);
      }
      // A view carries the stamp and the bytes of the value it views.
      const std::vector<int> roots = view_roots(body.values);
      for (const auto& v : body.values)
        if (roots[v.index] != v.index) scope.region[v.index] = scope.region[roots[v.index]];
      scope.members.assign(body.values.size(), {});
      for (const auto& v : body.values) scope.members[v.reused_buffer].push_back(v.index);
      const int index = static_cast<int>(scopes_.size());
      scopes_.push_back(std::move(scope));
      bodies_of[sub.owner].push_back(index);
      // Nested bodies, inside this body's arenas.
      std::map<int, std::vector<int>> nested;
      std::vector<Access> body_region = scopes_[index].region;
      prepare_bodies(body, body_region, body_bases, nested);
      scopes_[index].bodies_of = std::move(nested);
    }
  }

  // The owner's kernel around its bodies: outputs written first, inputs read and outputs checked after. `owner`
  // is the top-level node the messages name; `op_type` the node that owns these bodies.
  void run_bodies(int s, int ds, int owner, const std::string& op_type, KernelTask& host_task, KernelTask& device_task,
                  const std::vector<int>& scopes) {
    for (KernelTask* t : {&host_task, &device_task}) {
      KernelTask before;
      before.node = owner;
      before.early = t->early;
      if (t == &host_task)
        check_and_write(before, host_sink_);
      else if (ds >= 0 && !before.early.empty())
        dev_.launch(ds, before);
      t->reads.insert(t->reads.end(), t->early.begin(), t->early.end());
      t->early.clear();
    }
    const bool branch = op_type == "If" || scopes.size() > 1;
    for (size_t k = 0; k < scopes.size(); ++k) {
      if (branch && k != static_cast<size_t>(run_index_) % scopes.size()) continue;
      for (int pass = 0; pass < (branch ? 1 : 2); ++pass) run_body(s, ds, owner, scopes_[scopes[k]]);
    }
  }

  void run_body(int s, int ds, int owner, BodyScope& scope) {
    const PlanDoc& body = scope.sub->plan;
    const bool stream_on_cpu = p_.streams[s].on_cpu();
    auto host = [&](const std::string& op, int v) {
      return ds < 0 || sync::host_access(op, stream_on_cpu, body.values[v].location == "cpu");
    };
    auto dispatch = [&](KernelTask& h, KernelTask& d) {
      check_and_write(h, host_sink_);
      if (ds >= 0 && (!d.reads.empty() || !d.writes.empty() || !d.early.empty())) dev_.launch(ds, d);
    };
    {  // the owner feeds the body's graph inputs
      KernelTask h, d;
      h.node = d.node = owner;
      for (int v : scope.fed)
        if (scope.region[v].words) (host("", v) ? h : d).early.push_back(scope.region[v]);
      dispatch(h, d);
    }
    std::vector<int> remaining(body.releases.size());
    for (size_t r = 0; r < body.releases.size(); ++r) remaining[r] = body.releases[r].ref_count;
    for (int n : body.execution_order) {
      const auto& node = body.nodes[n];
      KernelTask h, d;
      h.node = d.node = owner;
      h.sample = d.sample = o_.sample;
      auto add = [&](int v, bool write) {
        if (v < 0 || !scope.region[v].words || (write && body.values[v].alias)) return;
        KernelTask& t = host(node.op_type, v) ? h : d;
        (!write ? t.reads : body.values[v].inplace_of >= 0 ? t.writes : t.early).push_back(scope.region[v]);
      };
      if (node.op_type != "Shape" && node.op_type != "Size") {
        for (int v : node.inputs) add(v, false);
        for (int v : node.implicit_inputs) add(v, false);
      }
      for (int v : node.outputs) add(v, true);
      auto nested = scope.bodies_of.find(n);
      if (nested != scope.bodies_of.end()) run_bodies(s, ds, owner, node.op_type, h, d, nested->second);
      dispatch(h, d);
      for (int r : node.releases) {
        if (--remaining[r] != 0) continue;
        for (int m : scope.members[body.releases[r].value]) {
          const Access& region = scope.region[m];
          if (!region.words) continue;
          if (ds < 0)
            poison_region(region);
          else if (body.values[m].location != "cpu")
            dev_.poison(ds, region, 0);
        }
      }
    }
  }

  std::vector<BodyScope> scopes_;
  std::map<int, std::vector<int>> body_scopes_of_;  // node of the plan -> its bodies' scopes
  std::vector<std::string> stamp_names_;            // stamps from values.size() on: body values
  int next_stamp_ = 0;
  int run_index_ = 0;

  void add_problem(const std::string& text) {
    std::lock_guard<std::mutex> lock(problem_mutex_);
    ++problem_count_;
    if (problems_.size() < 1000) problems_.push_back(text);  // the report shows the first ones anyway
  }

  std::string node_text(int n) const {
    if (n < 0) return "the end of the run";
    const auto& node = p_.nodes[n];
    return "node " + std::to_string(n) + " '" + node.label() + "' (stream " + std::to_string(node.stream) + ", step " +
           std::to_string(step_of_[n]) + ")";
  }

  std::string describe(const Mismatch& m) const {
    std::ostringstream os;
    if (m.value >= static_cast<int>(p_.values.size())) {  // a body's value
      os << stamp_names_[static_cast<size_t>(m.value) - p_.values.size()] << " read while " << node_text(m.node)
         << " ran: word " << m.word << " expected " << hex(m.expected) << ", found " << hex(m.found)
         << (m.found == kPoison      ? " (released before this read)"
             : m.found == kUnwritten ? " (never written)"
                                     : "");
      return os.str();
    }
    const auto& v = p_.values[m.value];  // for a view: the value whose stamp it carries
    os << "value '" << v.name << "' (produced by " << (v.producer >= 0 ? node_text(v.producer) : "the caller") << ")";
    if (m.at_release) {
      os << " was released after " << node_text(m.node) << " before it was ever written: word 0 found " << hex(m.found)
         << " (never written)";
      return os.str();
    }
    os << " read by " << node_text(m.node) << ": word " << m.word << " expected " << hex(m.expected) << ", found "
       << hex(m.found);
    if (m.found == kPoison)
      os << " (its buffer was released before this read)";
    else if (m.found == kUnwritten)
      os << " (never written: its producer had not run)";
    else {
      // Whose stamp is it?
      for (const auto& w : p_.values)
        if (w.index != v.index && w.arena == v.arena && w.bytes &&
            stamp_word(w.index, m.word + (v.offset - w.offset) / 4) == m.found && w.offset <= v.offset + m.word * 4 &&
            v.offset + m.word * 4 < w.offset + *w.bytes) {
          os << " (overwritten by value '" << w.name << "')";
          break;
        }
    }
    return os.str();
  }

  const PlanDoc& p_;
  const ReplayOptions& o_;
  Device& dev_;
  std::vector<std::pair<uint32_t*, uint64_t>> arenas_;
  std::vector<Access> region_;
  std::vector<int> view_root_;  // view_roots(p_.values)
  std::vector<int> own_, device_stream_, events_, step_of_, stamp_of_;
  std::set<int> copy_nodes_;  // offload's copies (Device::copy)
  std::vector<std::vector<int>> members_;
  std::vector<std::vector<std::pair<int, int>>> release_events_;  // per action: (point node, event)
  std::vector<std::atomic<bool>> fired_, launched_;               // per trigger; per value (its producer was launched)
  struct Counters {
    std::vector<std::atomic<int>> v;
    void assign(size_t n, int) { v = std::vector<std::atomic<int>>(n); }
    std::atomic<int>& operator[](size_t i) { return v[i]; }
  } remaining_;
  std::mutex trigger_mutex_, problem_mutex_;
  std::condition_variable trigger_cv_;
  std::atomic<bool> aborted_{false};
  // A stream's host thread: running, done, or waiting for what the code says (a trigger index >= 0, or
  // an event as on_event(e)). The thread clears it only once it wakes, so the slow stream asks whether
  // the awaited thing has happened rather than trust a stale mark.
  // kWaitsForTurns: a slow stream's host waiting for its device to take its turns (wait_for_turns).
  static constexpr int kRunning = -1, kDone = -2, kWaitsForTurns = -3;
  struct Blocked {
    std::atomic<int>& state;
    Blocked(std::atomic<int>& st, int waits_for) : state(st) { state = waits_for; }
    ~Blocked() { state = kRunning; }
    static int on_event(int event) { return -4 - event; }
    static int event_of(int code) { return -4 - code; }  // on_event's inverse
  };
  bool still_waiting(int stream) {
    const int code = state_[stream];
    if (code == kDone) return true;
    if (code == kRunning) return false;
    if (code == kWaitsForTurns) return true;
    if (code >= 0) return !fired_[code];
    return !dev_.event_done(Blocked::event_of(code));
  }
  std::vector<std::atomic<int>> state_;  // per stream (see Blocked), for the slow stream's turn
  std::atomic<uint64_t> progress_{0};    // steps taken by all streams
  int slow_stream_ = -1;  // the stream that lags in this run (jitter), or -1 for random delays everywhere
  std::vector<std::string> problems_;
  uint64_t problem_count_ = 0;
  MismatchSink host_sink_;
  uint64_t bytes_read_ = 0, bytes_written_ = 0;
};

}  // namespace

ReplayReport replay(const PlanDoc& plan, const ReplayOptions& options) {
  std::unique_ptr<Device> device;
  if (options.backend == "cpu")
    device = make_cpu_device();
  else if (options.backend == "cuda") {
    try {
      device = make_cuda_device();
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(ExitCode::kUsage,
                  std::string("--backend cuda: no usable GPU (") + e.what() +
                      "); it needs an NVIDIA GPU whose driver supports CUDA 13 — elsewhere use --backend cpu");
    }
  } else
    throw Error(ExitCode::kUsage, "--backend '" + options.backend + "': use cpu or cuda");
  // A value whose bytes live nowhere cannot be replayed: refuse the plan, naming them.
  if (auto unsized = plan_doc::unsized_dependencies(plan); !unsized.empty()) {
    ReplayReport r;
    r.backend = options.backend;
    r.error_count = unsized.size();
    r.errors = std::move(unsized);
    r.streams = static_cast<int>(plan.streams.size());
    return r;
  }
  // What one run allocates, checked before anything is allocated: a plan can name arenas of any size.
  uint64_t needed = 0;
  auto add_bytes = [&](uint64_t b) { needed = b > UINT64_MAX - needed ? UINT64_MAX : needed + b; };
  for (const auto& a : plan.arenas) add_bytes(a.bytes);
  for (const auto& v : plan.values)
    if (v.arena < 0 && v.bytes) add_bytes(*v.bytes);
  // Bodies: their arenas lie in their owners' holds; their other values get buffers of their own.
  std::vector<const PlanDoc*> bodies;
  for (const auto& sub : plan.subgraphs) bodies.push_back(&sub.plan);
  while (!bodies.empty()) {
    const PlanDoc* body = bodies.back();
    bodies.pop_back();
    for (const auto& v : body->values)
      if (v.arena < 0 && v.bytes && !v.outer_scope) add_bytes(*v.bytes);
    for (const auto& sub : body->subgraphs) bodies.push_back(&sub.plan);
  }
  const uint64_t half_ram = physical_memory_bytes() / 2;
  if (half_ram && needed > half_ram)
    throw Error(ExitCode::kBadInput, plan.source + ": replaying this plan needs " + std::to_string(needed) +
                                         " bytes of buffers, more than half of this machine's memory (" +
                                         std::to_string(half_ram) + " bytes); replay it where it fits");
  Executor e(plan, options, *device);
  return e.run();
}

}  // namespace memplan::replay

namespace memplan::replay {

std::string format_report(const ReplayReport& r, const std::string& plan_path, size_t show) {
  std::ostringstream os;
  for (size_t i = 0; i < r.errors.size() && i < show; ++i) os << plan_path << ": " << r.errors[i] << "\n";
  if (r.error_count > std::min<uint64_t>(r.errors.size(), show))
    os << "... " << r.error_count - std::min<uint64_t>(r.errors.size(), show) << " more\n";
  const double moved = static_cast<double>(r.bytes_verified + r.bytes_written);
  char line[512];
  std::snprintf(line, sizeof line,
                "%s: replayed on %s, %d iteration(s), %.1f MB verified, %.1f MB written in %.3f s (%.1f GB/s",
                plan_path.c_str(), r.backend.c_str(), r.iterations, static_cast<double>(r.bytes_verified) / 1e6,
                static_cast<double>(r.bytes_written) / 1e6, r.seconds, r.seconds > 0 ? moved / r.seconds / 1e9 : 0.0);
  os << line;
  if (r.peak_gbps > 0) {
    std::snprintf(line, sizeof line, " of a %.0f GB/s peak", r.peak_gbps);
    os << line;
  }
  os << "): " << (r.ok() ? std::string("clean") : std::to_string(r.error_count) + " error(s)") << "\n";
  if (r.lagged > 0 && r.lagged < r.streams)
    os << plan_path << ": note: only " << r.lagged << " of the plan's " << r.streams
       << " streams had a run in which it lagged; --iterations " << r.streams << " (or more) gives each its turn\n";
  return os.str();
}

}  // namespace memplan::replay
