// What each stream knows when it launches a node: the synchronisation model that the planner's layout,
// `memplan validate` and `memplan replay` share. Streams run their steps in order; a Barrier waits for a
// TriggerDownstream, a WaitOnEP for an ActivateNotification. Knowledge is kept per stream as launch
// counts: `issued` (launches the host has passed), `device` (launches ordered before, on the device
// timeline) and `host` (launches the host knows complete). A host wait turns device knowledge into host
// knowledge; work on a host (CPU stream, Shape, a kernel's host code reading a CPU tensor) is complete
// when its launch returns.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace memplan::sync {

enum class StepKind { kLaunch, kBarrier, kTrigger, kWait, kActivate };

struct Step {
  StepKind kind = StepKind::kLaunch;
  int node = -1;
  int id = -1;  // Barrier and TriggerDownstream: the trigger; WaitOnEP and ActivateNotification: the notification
  bool host_wait = false;
};

struct Stream {
  bool on_cpu = false;
  std::vector<Step> steps;
};

// Whether a node touches a value on the host when it is launched: every node of a CPU stream, Shape
// and Size anywhere (the host computes them), and a device kernel's host code reading a CPU-memory
// input (a shape, an axis). The copy nodes move CPU memory on the device timeline (DMA).
bool host_access(const std::string& op_type, bool stream_on_cpu, bool value_in_cpu_memory);

struct Launch {
  int stream = -1, position = -1, step = -1;  // position: among its stream's launches
};

struct Knowledge {
  std::vector<Launch> launches;  // per node
  std::vector<bool> stream_on_cpu;
  std::vector<int> stuck_at;  // per stream: the step it cannot pass (deadlock), -1 when it ran to the end
  bool deadlocked = false;

  // Per node, one row of launch counts per stream known at its launch: host (complete as the host knows),
  // device (ordered before it on the device timeline) and issued (passed by the host). Rows of
  // stream_on_cpu.size() ints in flat tables: three small vectors per node were three allocations each.
  const int* host(int n) const { return host_.data() + row(n); }
  const int* device(int n) const { return device_.data() + row(n); }
  const int* issued(int n) const { return issued_.data() + row(n); }

  // Per stream, how many launches are known complete when node b's access begins: host knowledge for an
  // access on the host (or on a CPU stream), device order for one on the device timeline.
  const int* completed_before(int b, bool b_on_host) const;

  // Node a's access (on the host or the device timeline) is over before node b's access begins, in every
  // interleaving the steps allow: a host access once b's stream knows it was issued, a device one once it
  // is in completed_before(b). A release is an access on b's stream's timeline (b_host false).
  bool ordered(int a, bool a_on_host, int b, bool b_on_host) const;

 private:
  friend Knowledge simulate(const std::vector<Stream>& streams, size_t node_count);
  size_t row(int n) const { return static_cast<size_t>(n) * stream_on_cpu.size(); }
  std::vector<int> host_, device_, issued_;
};

// Runs every stream's steps as far as the synchronisation allows. `node_count` bounds node indices.
Knowledge simulate(const std::vector<Stream>& streams, size_t node_count);

}  // namespace memplan::sync
