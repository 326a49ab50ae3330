// ONNX Runtime's allocation planner (onnxruntime/core/framework/allocation_planner.cc), reimplemented
// over memplan's plain data: value locations, kinds and reuse, release actions, execution steps.
#include "memplan/planner/allocation_planner.h"

#include <algorithm>
#include <map>
#include <set>

#include "clock_list.h"
#include "freelist.h"
#include "memplan/error.h"
#include "memplan/execution_order.h"

namespace memplan::planner {

using partition::DeviceType;
using partition::OpFacts;

const char* alloc_kind_name(AllocKind k) {
  switch (k) {
    case AllocKind::kPreExisting:
      return "PreExisting";
    case AllocKind::kAllocateStatically:
      return "AllocateStatically";
    case AllocKind::kAllocate:
      return "Allocate";
    case AllocKind::kAllocateOutput:
      return "AllocateOutput";
    case AllocKind::kReuse:
      return "Reuse";
    case AllocKind::kShare:
      return "Share";
    case AllocKind::kAllocatedExternally:
      return "AllocatedExternally";
    case AllocKind::kNotSet:
      break;
  }
  return "NotSet";
}

bool parse_alloc_kind(const std::string& name, AllocKind& out) {
  for (AllocKind k :
       {AllocKind::kNotSet, AllocKind::kPreExisting, AllocKind::kAllocateStatically, AllocKind::kAllocate,
        AllocKind::kAllocateOutput, AllocKind::kReuse, AllocKind::kShare, AllocKind::kAllocatedExternally})
    if (name == alloc_kind_name(k)) {
      out = k;
      return true;
    }
  return false;
}

const char* step_kind_name(StepKind k) {
  switch (k) {
    case StepKind::kLaunchKernel:
      return "LaunchKernel";
    case StepKind::kBarrier:
      return "Barrier";
    case StepKind::kTriggerDownstream:
      return "TriggerDownstream";
    case StepKind::kWaitOnEP:
      return "WaitOnEP";
    case StepKind::kActivateNotification:
      return "ActivateNotification";
  }
  return "?";
}

const char* reuse_mode_name(ReuseMode m) {
  switch (m) {
    case ReuseMode::kMemplan:
      return "memplan";
    case ReuseMode::kOrt:
      return "ort";
    case ReuseMode::kNone:
      return "none";
  }
  return "?";
}

HappensBefore happens_before(const Graph& graph, const partition::Partition& partition) {
  const size_t n = graph.nodes.size(), s = partition.streams.size();
  HappensBefore hb;
  hb.node_stream = partition.node_stream;
  hb.position.assign(n, 0);
  hb.streams = s;
  hb.clocks.assign(n * s, 0);
  for (size_t k = 0; k < s; ++k)
    for (size_t p = 0; p < partition.streams[k].size(); ++p) hb.position[partition.streams[k][p]] = static_cast<int>(p);
  // Producers on other streams: ORT synchronises on every such edge (Barrier, and WaitOnEP where the
  // producer's device needs it), so their completion precedes the consumer.
  std::vector<std::vector<NodeId>> producers(n);
  for (const Node& node : graph.nodes) {
    auto add = [&](ValueId v) {
      if (v != kNoId && graph.values[v].producer != kNoId) producers[node.index].push_back(graph.values[v].producer);
    };
    for (ValueId v : node.inputs) add(v);
    for (ValueId v : node.implicit_inputs) add(v);
  }
  for (auto [a, b] : partition.order_edges) producers[b].push_back(a);
  // Process in an order consistent with all dependencies: repeatedly take the next node of each stream
  // whose cross-stream producers are done (a Kahn pass over streams).
  std::vector<size_t> next(s, 0);
  std::vector<bool> done(n, false);
  size_t remaining = n;
  bool progress = true;
  while (remaining && progress) {
    progress = false;
    for (size_t k = 0; k < s; ++k) {
      while (next[k] < partition.streams[k].size()) {
        NodeId node = partition.streams[k][next[k]];
        bool ready = std::all_of(producers[node].begin(), producers[node].end(), [&](NodeId p) { return done[p]; });
        if (!ready) break;
        int* c = &hb.clocks[static_cast<size_t>(node) * s];
        if (next[k] > 0) {
          const int* prev = &hb.clocks[static_cast<size_t>(partition.streams[k][next[k] - 1]) * s];
          std::copy(prev, prev + s, c);
        }
        c[k] = static_cast<int>(next[k]);
        for (NodeId p : producers[node]) {
          // A Shape on a device stream synchronises nothing (ORT gives it no notification): its output is
          // ready on launch, but nothing before it on its stream is known complete.
          // (the name compared last: on one stream no producer is on another)
          if (hb.node_stream[p] != static_cast<int>(k) &&
              partition.stream_device[hb.node_stream[p]].type != partition::DeviceType::kCpu &&
              graph.nodes[p].op_type == "Shape")
            continue;
          const int* pc = &hb.clocks[static_cast<size_t>(p) * s];
          for (size_t t = 0; t < s; ++t) c[t] = std::max(c[t], pc[t]);
          int ps = hb.node_stream[p];
          c[ps] = std::max(c[ps], hb.position[p] + 1);
        }
        done[node] = true;
        --remaining;
        ++next[k];
        progress = true;
      }
    }
  }
  if (remaining)
    throw Error(ExitCode::kBadInput,
                "the partition's streams deadlock: a stream waits on a node that runs after it in another stream");
  return hb;
}

namespace {

bool same_shape(const SeenValue& a, const SeenValue& b) {
  if (!a.has_shape || !b.has_shape || a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    const Dim &x = a.dims[i], &y = b.dims[i];
    if (x.known() && y.known() && x.value == y.value) continue;
    if (!x.param.empty() && x.param == y.param && !x.known() && !y.known()) continue;
    return false;
  }
  return true;
}

bool is_string(const Value& v) {
  return v.dtype == kDTypeString;
}

// ORT's SameSize: no strings, the same element size (sub-element packing included), SameShape.
bool ort_same_size(const SeenValue& sa, const SeenValue& sb) {
  const Value &a = sa.value, &b = sb.value;
  if (!a.is_tensor() || !b.is_tensor() || is_string(a) || is_string(b)) return false;
  auto ba = dtype_bits(a.dtype), bb = dtype_bits(b.dtype);
  if (!ba || !bb || *ba != *bb) return false;
  return same_shape(sa, sb);
}

// memplan's rule: ORT's, or two tensors of exactly the same known byte size.
bool memplan_same_size(const SeenValue& sa, const SeenValue& sb) {
  if (ort_same_size(sa, sb)) return true;
  const Value &a = sa.value, &b = sb.value;
  if (!a.is_tensor() || !b.is_tensor() || is_string(a) || is_string(b)) return false;
  return a.bytes && b.bytes && *a.bytes == *b.bytes && *a.bytes > 0;
}

// Each node's neighbours along a list of edges (from -> to): with `from_first`, the `to` of the edges from each node,
// else the `from` of the edges into it; sorted and each once. One array for all nodes (a vector per node was an
// allocation per node).
class Adjacency {
 public:
  Adjacency(size_t nodes, const std::vector<std::pair<NodeId, NodeId>>& edges, bool from_first)
      : start_(nodes + 1, 0), to_(edges.size()) {
    auto key = [&](const std::pair<NodeId, NodeId>& e) { return static_cast<size_t>(from_first ? e.first : e.second); };
    for (const auto& e : edges) ++start_[key(e) + 1];
    for (size_t n = 0; n < nodes; ++n) start_[n + 1] += start_[n];
    std::vector<size_t> next(start_.begin(), start_.end() - 1);
    for (const auto& e : edges) to_[next[key(e)]++] = from_first ? e.second : e.first;
    size_t kept = 0;  // sorted and de-duplicated in place, each node's run moved down over the duplicates before it
    for (size_t n = 0; n < nodes; ++n) {
      const auto begin = to_.begin() + static_cast<std::ptrdiff_t>(start_[n]);
      const auto end = to_.begin() + static_cast<std::ptrdiff_t>(start_[n + 1]);
      std::sort(begin, end);
      const auto last = std::unique(begin, end);
      start_[n] = kept;
      kept = static_cast<size_t>(std::copy(begin, last, to_.begin() + static_cast<std::ptrdiff_t>(kept)) - to_.begin());
    }
    start_[nodes] = kept;
    to_.resize(kept);
  }
  struct Range {
    const NodeId *b, *e;
    const NodeId* begin() const { return b; }
    const NodeId* end() const { return e; }
    size_t size() const { return static_cast<size_t>(e - b); }
  };
  Range of(NodeId n) const {
    return {to_.data() + start_[static_cast<size_t>(n)], to_.data() + start_[static_cast<size_t>(n) + 1]};
  }

 private:
  std::vector<size_t> start_;
  std::vector<NodeId> to_;
};

class Planner {
 public:
  Planner(const PlanInput& in, const PlanOptions& options)
      : in_(in),
        g_(in.graph),
        options_(options),
        freelist_(in.graph.values.size(), options.reuse == ReuseMode::kMemplan) {}

  Plan run() {
    const size_t nv = g_.values.size(), nn = g_.nodes.size();
    plan_.reuse = options_.reuse;
    plan_.values.assign(nv, ValuePlan{});
    plan_.node_stream = in_.partition.node_stream;
    plan_.execution_order = in_.order;
    pc_.assign(nn, -1);
    for (size_t i = 0; i < in_.order.size(); ++i) pc_[in_.order[i]] = static_cast<int>(i);
    facts_ = partition::NodeFacts(g_, in_.placement, in_.ops, in_.opset);
    for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v) plan_.values[v].reused_buffer = v;
    buffer_.resize(nv);
    reset_buffers();

    compute_locations();
    plan_inputs_and_weights();
    if (options_.reuse == ReuseMode::kMemplan) {
      hb_ = happens_before(g_, in_.partition);
      plan_walk(in_.order, /*allow_reuse=*/true, /*check_hb=*/in_.partition.streams.size() > 1);
    } else if (ort_single_stream()) {
      for (const auto& stream : in_.partition.streams) {
        reset_buffers();
        plan_walk(stream, options_.reuse == ReuseMode::kOrt, false);
      }
    } else {
      for (const auto& stream : in_.partition.streams) {
        reset_buffers();
        plan_walk(stream, false, false, /*parallel=*/true);
      }
      optimize_reuse_for_multi_stream();
    }
    compute_lifetimes();
    generate_deallocation_plan();
    build_execution_plan();
    return std::move(plan_);
  }

 private:
  Device cpu() const { return Device{DeviceType::kCpu, 0}; }
  Device node_device(NodeId n) const { return in_.placement.node_device[n]; }

  // ComputeValueLocation.
  void compute_locations() {
    for (ValueId v = 0; v < static_cast<ValueId>(g_.values.size()); ++v) plan_.values[v].location = cpu();
    for (NodeId n : in_.order) {
      const Node& node = g_.nodes[n];
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        ValueId v = node.outputs[k];
        if (v == kNoId) continue;
        plan_.values[v].location = facts_[n].is_cpu_output(static_cast<int>(k)) ? cpu() : node_device(n);
      }
    }
    // Graph inputs and outer-scope values: where their (last) explicit consumer reads them; with only
    // implicit consumers, the device of the node that owns the subgraph.
    std::vector<bool> explicit_seen(g_.values.size(), false);
    for (NodeId n : in_.order) {
      const Node& node = g_.nodes[n];
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        ValueId v = node.inputs[k];
        if (v == kNoId) continue;
        const Value& val = g_.values[v];
        if (!((val.is_graph_input && !val.is_initializer) || val.is_outer_scope)) continue;
        plan_.values[v].location = facts_[n].is_cpu_input(static_cast<int>(k)) ? cpu() : node_device(n);
        explicit_seen[v] = true;
      }
      for (ValueId v : node.implicit_inputs) {
        const Value& val = g_.values[v];
        if (((val.is_graph_input && !val.is_initializer) || val.is_outer_scope) && !explicit_seen[v])
          plan_.values[v].location = node_device(n);
      }
    }
  }

  // ComputePlanForInputsAndWeights: graph inputs and outer-scope values are PreExisting; initializers are
  // AllocateStatically where they are first used (explicit uses first, then uses inside subgraphs).
  void plan_inputs_and_weights() {
    for (ValueId v : g_.inputs)
      if (!g_.values[v].is_initializer) plan_.values[v].kind = AllocKind::kPreExisting;
    for (ValueId v : g_.outer_scope) plan_.values[v].kind = AllocKind::kPreExisting;
    std::vector<bool> placed(g_.values.size(), false);
    for (NodeId n : in_.order) {
      const Node& node = g_.nodes[n];
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        ValueId v = node.inputs[k];
        if (v == kNoId || !g_.values[v].is_initializer || placed[v]) continue;
        plan_.values[v].location = facts_[n].is_cpu_input(static_cast<int>(k)) ? cpu() : node_device(n);
        placed[v] = true;
      }
    }
    for (NodeId n : in_.order)
      for (ValueId v : g_.nodes[n].implicit_inputs)
        if (g_.values[v].is_initializer && !placed[v]) {
          plan_.values[v].location = node_device(n);
          placed[v] = true;
        }
    for (ValueId v : g_.initializers) plan_.values[v].kind = AllocKind::kAllocateStatically;
  }

  // IsSingleStream: no device type owns two non-empty streams.
  bool ort_single_stream() const {
    std::set<DeviceType> seen;
    for (size_t s = 0; s < in_.partition.streams.size(); ++s)
      if (!in_.partition.streams[s].empty() && !seen.insert(in_.partition.stream_device[s].type).second) return false;
    return true;
  }

  void reset_buffers() {
    for (ValueId v = 0; v < static_cast<ValueId>(g_.values.size()); ++v) buffer_[v] = v;
  }

  // ComputeReuseCount.
  void compute_use_counts() {
    use_.assign(g_.values.size(), 0);
    for (ValueId v : g_.inputs) ++use_[v];
    for (ValueId v : g_.outer_scope) ++use_[v];
    for (ValueId v : g_.initializers) ++use_[v];
    for (NodeId n : in_.order) {
      const Node& node = g_.nodes[n];
      for (ValueId v : node.inputs)
        if (v != kNoId) ++use_[v];
      for (ValueId v : node.implicit_inputs) ++use_[v];
      for (ValueId v : node.outputs)
        if (v != kNoId) use_[v] += facts_[n].external_outputs ? 2 : 1;
    }
    for (ValueId v : g_.outputs) ++use_[v];
  }

  void reuse(ValueId reused, ValueId reused_for, AllocKind kind) {
    ValueId original = buffer_[reused];
    buffer_[reused_for] = original;
    use_[original] += use_[reused_for];
    plan_.values[reused_for].kind = kind;
    plan_.values[reused_for].reused_buffer = original;
  }

  // A value of known size never shares memory with one of unknown size: its bytes would live in a buffer
  // the layout cannot place (and an unsized value would get memory sized for another).
  bool sizes_alike(ValueId a, ValueId b) const {
    return g_.values[a].bytes.has_value() == g_.values[b].bytes.has_value();
  }

  // Value v with the shape the decisions compare (PlanInput::decision_shapes, where given).
  SeenValue seen(ValueId v) const {
    const Value& value = g_.values[v];
    const KnownShape* other = in_.decision_shapes ? (*in_.decision_shapes)[v] : nullptr;
    return other ? SeenValue{value, other->has_shape, other->dims} : SeenValue{value, value.has_shape, value.dims};
  }

  bool same_size(ValueId a, ValueId b) const {
    return options_.reuse == ReuseMode::kMemplan ? memplan_same_size(seen(a), seen(b))
                                                 : ort_same_size(seen(a), seen(b));
  }

  // A node that used buffer b and does not happen before node n (multi-stream safety): its stream and position;
  // nullopt when every user does (always on one stream).
  std::optional<std::pair<int, int>> user_not_done_before(ValueId b, NodeId n) const {
    if (!check_hb_) return std::nullopt;
    const size_t s = in_.partition.streams.size();
    for (size_t t = 0; t < s; ++t) {
      int last = users_[b * s + t];
      if (last >= 0 && hb_.clock(n, t) <= last) return std::make_pair(static_cast<int>(t), last);
    }
    return std::nullopt;
  }

  void record_use(ValueId v, NodeId n) {
    if (!check_hb_) return;
    int& last = users_[buffer_[v] * in_.partition.streams.size() + hb_.node_stream[n]];
    last = std::max(last, hb_.position[n]);
  }

  bool find_reusable_input(NodeId n, size_t k, ValueId& reusable, bool& is_alias) {
    const Node& node = g_.nodes[n];
    const OpFacts& f = facts_[n];
    is_alias = true;
    const ValueId out = node.outputs[k];
    for (auto [i, o] : f.alias)
      if (o == static_cast<int>(k) && i >= 0 && static_cast<size_t>(i) < node.inputs.size() &&
          node.inputs[i] != kNoId && sizes_alike(buffer_[node.inputs[i]], out)) {
        reusable = node.inputs[i];
        return true;
      }
    if (f.variadic_alias) {
      int i = static_cast<int>(k) - f.variadic_alias->second + f.variadic_alias->first;
      if (i >= 0 && static_cast<size_t>(i) < node.inputs.size() && node.inputs[i] != kNoId &&
          sizes_alike(buffer_[node.inputs[i]], out)) {
        reusable = node.inputs[i];
        return true;
      }
    }
    is_alias = false;
    for (auto [i, o] : f.may_inplace) {
      if (o != static_cast<int>(k) || i < 0 || static_cast<size_t>(i) >= node.inputs.size() || node.inputs[i] == kNoId)
        continue;
      ValueId in = node.inputs[i];
      const Value& iv = g_.values[in];
      if (!f.may_inplace_types.empty() &&
          std::find(f.may_inplace_types.begin(), f.may_inplace_types.end(), iv.dtype) == f.may_inplace_types.end())
        continue;
      ValueId original = buffer_[in];
      if (use_[original] != 1 || !same_size(in, out) || !sizes_alike(original, out)) continue;
      if (iv.producer != kNoId && facts_[iv.producer].external_outputs) continue;
      if (user_not_done_before(original, n)) continue;
      reusable = in;
      return true;
    }
    return false;
  }

  bool find_reusable_tensor(NodeId n, ValueId out, ValueId& reusable) {
    const SeenValue ov = seen(out);
    if (!ov.has_shape || ov.dims.empty()) return false;
    // The freelist's buckets only narrow the search; same_size stays the rule that decides.
    auto fits = [&](ValueId cand) {
      return g_.values[cand].type_kind != TypeKind::kOptional && same_size(cand, out) && sizes_alike(cand, out);
    };
    std::optional<ValueId> found;
    if (check_hb_)  // on several streams the freelist also parks candidates whose users n does not know finished
      found = freelist_.take_on_stream(
          ov, plan_.values[out].location, static_cast<size_t>(hb_.node_stream[n]),
          [&](ValueId cand) { return user_not_done_before(cand, n); }, [&](size_t t) { return hb_.clock(n, t); }, fits);
    else
      found = freelist_.take(ov, plan_.values[out].location, fits);
    if (found) reusable = *found;
    return found.has_value();
  }

  // The Loop-body case: Identity(x) -> graph output, with x a PreExisting value other than the iteration number.
  bool loop_body_share(const Node& node, ValueId out, ValueId& shared) const {
    if (in_.parent_op != "Loop" || node.op_type != "Identity" || node.inputs.empty() || node.inputs[0] == kNoId)
      return false;
    ValueId x = node.inputs[0];
    if (plan_.values[x].kind != AllocKind::kPreExisting) return false;
    if (!g_.inputs.empty() && g_.inputs[0] == x) return false;
    (void)out;
    shared = x;
    return true;
  }

  // ComputeSingleStreamReusePlan over `nodes` (a stream, or the global order in memplan's mode).
  void plan_walk(const std::vector<NodeId>& nodes, bool allow_reuse, bool check_hb, bool parallel = false) {
    compute_use_counts();
    check_hb_ = check_hb;
    freelist_.clear(check_hb_ ? in_.partition.streams.size() : 1);
    if (check_hb_) users_.assign(g_.values.size() * in_.partition.streams.size(), -1);
    for (NodeId n : nodes) {
      const Node& node = g_.nodes[n];
      const bool external = facts_[n].external_outputs;
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        ValueId out = node.outputs[k];
        if (out == kNoId) continue;
        const Value& ov = g_.values[out];
        ValueId other = kNoId;
        bool is_alias = false;
        if (external) {
          plan_.values[out].kind = AllocKind::kAllocatedExternally;
        } else if (ov.is_graph_output) {
          if (loop_body_share(node, out, other)) {
            reuse(other, out, AllocKind::kShare);
            plan_.values[out].inplace_of = other;
            plan_.values[out].alias = true;
          } else
            plan_.values[out].kind = AllocKind::kAllocateOutput;
        } else if (!parallel && find_reusable_input(n, k, other, is_alias)) {
          reuse(other, out, AllocKind::kReuse);
          plan_.values[out].inplace = true;
          plan_.values[out].inplace_of = other;
          plan_.values[out].alias = is_alias;
        } else if (!ov.is_tensor()) {
          plan_.values[out].kind = AllocKind::kAllocate;
        } else if (!parallel && allow_reuse && (!ov.consumers.empty() || !ov.implicit_consumers.empty()) &&
                   find_reusable_tensor(n, out, other)) {
          reuse(other, out, AllocKind::kReuse);
        } else {
          plan_.values[out].kind = AllocKind::kAllocate;
        }
        record_use(out, n);
      }
      auto release = [&](ValueId v) {
        ValueId original = buffer_[v];
        if (--use_[original] == 0) freelist_.push(original, seen(original), plan_.values[original].location);
      };
      auto consume = [&](ValueId v) {
        if (v == kNoId) return;
        const Value& val = g_.values[v];
        record_use(v, n);
        if (val.producer != kNoId && facts_[val.producer].external_outputs) return;
        release(v);
      };
      for (ValueId v : node.inputs) consume(v);
      for (ValueId v : node.implicit_inputs) consume(v);
      if (!external)
        for (ValueId v : node.outputs)
          if (v != kNoId) release(v);
    }
  }

  // OptimizeReusePlanForMultiStream: on a baseline without reuse, walk the dependence graph from the sinks
  // up; in-place reuse of single-consumer inputs, then let a waiting downstream value take an upstream
  // output's buffer when the upstream producer and all its consumers are ancestors of the downstream
  // producer. ORT keeps ancestor sets per node and scans the waiting list for each output (quadratic); here vector
  // clocks and a ClockList find the same value.
  void optimize_reuse_for_multi_stream() {
    const size_t nn = g_.nodes.size();
    // dependence_graph_: each node's upstream nodes, sorted and distinct (ORT's std::set order, which the queue
    // below follows). Vectors indexed by node and value rather than trees keyed by them: this runs on every
    // multi-stream plan and ORT estimate.
    std::vector<std::pair<NodeId, NodeId>> edges;  // (upstream, downstream)
    for (const auto& stream : in_.partition.streams)
      for (size_t j = 1; j < stream.size(); ++j) edges.push_back({stream[j - 1], stream[j]});
    for (const Node& node : g_.nodes) {
      auto add = [&](ValueId v) {
        if (v != kNoId && g_.values[v].producer != kNoId) edges.push_back({g_.values[v].producer, node.index});
      };
      for (ValueId v : node.inputs) add(v);
      for (ValueId v : node.implicit_inputs) add(v);
    }
    const Adjacency upstream(nn, edges, /*from_first=*/false), downstream(nn, edges, /*from_first=*/true);
    std::vector<std::set<NodeId>> consumers(g_.values.size());  // of Allocate roots
    for (const Node& node : g_.nodes) {
      auto add = [&](ValueId v) {
        if (v == kNoId) return;
        ValueId origin = buffer_[v];
        if (plan_.values[origin].kind == AllocKind::kAllocate) consumers[origin].insert(node.index);
      };
      for (ValueId v : node.inputs) add(v);
      for (ValueId v : node.implicit_inputs) add(v);
    }
    std::vector<int> downstream_count(nn, 0);
    for (NodeId n = 0; n < static_cast<NodeId>(nn); ++n)
      for (NodeId u : upstream.of(n)) ++downstream_count[u];
    std::vector<NodeId> queue;
    for (NodeId n = 0; n < static_cast<NodeId>(nn); ++n)
      if (downstream_count[n] == 0) queue.push_back(n);
    // ORT keeps each node's whole set of ancestors (quadratic). Each stream is a chain of this graph, so a node's
    // ancestors on a stream are a prefix of it: per node, the last ancestor position on every stream (a vector
    // clock, computed in execution order) answers "is n an ancestor of m, or m itself" exactly: n has a stream and
    // m's clock on it reaches n's position.
    const size_t ns = in_.partition.streams.size();
    std::vector<int> stream_of(nn, -1), position(nn, -1);
    for (size_t s = 0; s < ns; ++s)
      for (size_t j = 0; j < in_.partition.streams[s].size(); ++j) {
        stream_of[in_.partition.streams[s][j]] = static_cast<int>(s);
        position[in_.partition.streams[s][j]] = static_cast<int>(j);
      }
    // Upstream first (Kahn's order over this graph's edges, which add stream order to the data edges).
    std::vector<int> pending(nn, 0);
    for (NodeId m = 0; m < static_cast<NodeId>(nn); ++m) pending[m] = static_cast<int>(upstream.of(m).size());
    std::vector<NodeId> forward;
    for (NodeId m = 0; m < static_cast<NodeId>(nn); ++m)
      if (pending[m] == 0) forward.push_back(m);
    for (size_t i = 0; i < forward.size(); ++i)
      for (NodeId d : downstream.of(forward[i]))
        if (--pending[d] == 0) forward.push_back(d);
    std::vector<int> clock(nn * ns, -1);
    for (NodeId m : forward) {
      int* mine = &clock[static_cast<size_t>(m) * ns];
      for (NodeId u : upstream.of(m))
        for (size_t s = 0; s < ns; ++s) mine[s] = std::max(mine[s], clock[static_cast<size_t>(u) * ns + s]);
      if (stream_of[m] >= 0) mine[stream_of[m]] = std::max(mine[stream_of[m]], position[m]);
    }
    // By location, element size, shape and whether memplan knows the size: only values ORT's SameSize (and
    // sizes_alike) can pair meet, so every element of a list pairs with every output of its key on size (a shared
    // list made each output scan every other dtype's values of its shape: quadratic on shape computations).
    std::map<std::pair<Device, std::string>, ClockList<ValueId>> waiting;
    std::vector<char> reused(g_.values.size(), 0);
    std::vector<std::vector<ValueId>> input_output(g_.values.size());  // an input's consumers' outputs
    auto shape_key = [&](ValueId id, const SeenValue& v) {
      std::string key = std::to_string(*dtype_bits(v.value.dtype)) + ":" + std::to_string(v.dims.size());
      for (const Dim& d : v.dims) key += "," + (d.known() ? std::to_string(d.value) : "?" + d.param);
      return key + (g_.values[id].bytes ? ":sized" : ":unsized");
    };
    std::vector<int> need(ns);
    for (size_t qi = 0; qi < queue.size(); ++qi) {
      NodeId n = queue[qi];
      const Node& node = g_.nodes[n];
      const OpFacts& f = facts_[n];
      // TryReuseInput
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        ValueId out = node.outputs[k];
        if (out == kNoId || plan_.values[out].kind != AllocKind::kAllocate) continue;
        for (ValueId in : node.inputs)
          if (in != kNoId) input_output[in].push_back(out);
        auto take = [&](ValueId in, bool view) {
          plan_.values[out].kind = AllocKind::kReuse;
          plan_.values[out].reused_buffer = in;
          plan_.values[out].inplace = true;
          plan_.values[out].inplace_of = in;
          plan_.values[out].alias = view;
          consumers[in].insert(consumers[out].begin(), consumers[out].end());
          reused[in] = 1;
        };
        bool done = false;
        for (auto [i, o] : f.alias)
          if (!done && o == static_cast<int>(k) && i >= 0 && static_cast<size_t>(i) < node.inputs.size() &&
              node.inputs[i] != kNoId && sizes_alike(node.inputs[i], out)) {
            take(node.inputs[i], true);  // ORT takes the alias whatever the input's kind
            done = true;
          }
        if (done) continue;
        if (f.variadic_alias) {
          int i = static_cast<int>(k) - f.variadic_alias->second + f.variadic_alias->first;
          if (i >= 0 && static_cast<size_t>(i) < node.inputs.size() && node.inputs[i] != kNoId &&
              plan_.values[node.inputs[i]].kind == AllocKind::kAllocate && sizes_alike(node.inputs[i], out)) {
            take(node.inputs[i], true);
            continue;
          }
        }
        for (auto [i, o] : f.may_inplace) {
          if (o != static_cast<int>(k) || i < 0 || static_cast<size_t>(i) >= node.inputs.size() ||
              node.inputs[i] == kNoId)
            continue;
          ValueId in = node.inputs[i];
          if (plan_.values[in].kind == AllocKind::kAllocate && consumers[in].size() == 1 &&
              ort_same_size(seen(in), seen(out)) && sizes_alike(in, out)) {
            take(in, false);
            break;
          }
        }
      }
      // TryReuseOutput: the first waiting value (in the order they began to wait) that `out` does not feed, whose
      // producer has out's producer and all out's consumers among its ancestors (or is one of them).
      for (ValueId out : node.outputs) {
        if (out == kNoId || reused[out] || plan_.values[out].kind != AllocKind::kAllocate) continue;
        const SeenValue ov = seen(out);
        if (!ov.has_shape || !ort_same_size(ov, ov)) continue;  // SameSize pairs it with nothing
        auto& list = waiting.try_emplace({plan_.values[out].location, shape_key(out, ov)}, ns).first->second;
        // On every stream, the latest position of out's producer and consumers: what a producer's clock must reach.
        std::fill(need.begin(), need.end(), -1);
        bool possible = true;
        auto require = [&](NodeId c) {
          if (stream_of[c] < 0)
            possible = false;
          else
            need[stream_of[c]] = std::max(need[stream_of[c]], position[c]);
        };
        require(n);
        for (NodeId c : consumers[out]) require(c);
        long slot = -1;
        if (possible) {
          const auto& fed = input_output[out];
          slot = list.find_first(need.data(),
                                 [&](ValueId down) { return std::find(fed.begin(), fed.end(), down) == fed.end(); });
        }
        if (slot < 0) {
          list.push_back(out, &clock[static_cast<size_t>(n) * ns]);
          continue;
        }
        ValueId down = list[static_cast<size_t>(slot)];
        plan_.values[down].kind = AllocKind::kReuse;
        plan_.values[down].reused_buffer = out;
        consumers[out].insert(g_.values[down].producer);
        consumers[out].insert(consumers[down].begin(), consumers[down].end());
        list.erase(static_cast<size_t>(slot));
        reused[out] = 1;
      }
      for (NodeId u : upstream.of(n))
        if (--downstream_count[u] == 0) queue.push_back(u);
    }
    // Resolve chains to their roots.
    for (ValueId v = 0; v < static_cast<ValueId>(g_.values.size()); ++v) {
      if (plan_.values[v].kind != AllocKind::kReuse) continue;
      ValueId r = plan_.values[v].reused_buffer;
      while (plan_.values[r].kind == AllocKind::kReuse && plan_.values[r].reused_buffer != r)
        r = plan_.values[r].reused_buffer;
      plan_.values[v].reused_buffer = r;
      buffer_[v] = r;
    }
  }

  void compute_lifetimes() {
    const int last = static_cast<int>(in_.order.size()) - 1;
    for (ValueId v = 0; v < static_cast<ValueId>(g_.values.size()); ++v) {
      const Value& val = g_.values[v];
      ValuePlan& p = plan_.values[v];
      if (val.producer != kNoId)
        p.first_use = pc_[val.producer];
      else if (val.is_graph_input || val.is_initializer || val.is_outer_scope)
        p.first_use = 0;
      int end = p.first_use;
      for (NodeId c : val.consumers) end = std::max(end, pc_[c]);
      for (NodeId c : val.implicit_consumers) end = std::max(end, pc_[c]);
      if (val.is_graph_output || val.is_graph_input || val.is_initializer || val.is_outer_scope)
        end = std::max(end, last);
      p.last_use = end;
    }
  }

  // GenerateDeallocationPlan.
  void generate_deallocation_plan() {
    const size_t nv = g_.values.size();
    std::vector<std::vector<NodeId>> value_consumers(nv);
    for (const auto& stream : in_.partition.streams)
      for (auto it = stream.rbegin(); it != stream.rend(); ++it) {
        const Node& node = g_.nodes[*it];
        auto add = [&](ValueId v) {
          if (v == kNoId) return;
          ValueId origin = plan_.values[v].reused_buffer;
          AllocKind k = plan_.values[origin].kind;
          if (k == AllocKind::kAllocate || k == AllocKind::kAllocatedExternally) value_consumers[origin].push_back(*it);
        };
        for (ValueId v : node.inputs) add(v);
        for (ValueId v : node.implicit_inputs) add(v);
      }
    plan_.node_releases.assign(g_.nodes.size(), {});
    for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v) {
      const auto& cs = value_consumers[v];
      if (cs.empty()) continue;
      int action = static_cast<int>(plan_.release_actions.size());
      plan_.release_actions.push_back({v, 0});
      int stream = plan_.node_stream[cs[0]];
      bool one_stream = std::all_of(cs.begin(), cs.end(), [&](NodeId c) { return plan_.node_stream[c] == stream; });
      auto add = [&](NodeId c) {
        ++plan_.release_actions[action].ref_count;
        plan_.node_releases[c].push_back(action);
      };
      if (one_stream)
        add(cs[0]);
      else
        for (NodeId c : cs) add(c);
    }
  }

  // BuildExecutionPlan: triggers, notifications, barriers, waits. Flat tables rather than a map per node: on a
  // 144,000-node plan with a copy stream the maps and the steps' growth were a third of the planner's time.
  void build_execution_plan() {
    const auto& streams = in_.partition.streams;
    const size_t nn = g_.nodes.size();
    // Output edges: for each node, its consumer nodes (explicit or implicit), in consumer-index order;
    // input nodes likewise, each once (ORT de-duplicates them).
    std::vector<std::pair<NodeId, NodeId>> edges;  // (producer, consumer)
    for (const Node& node : g_.nodes) {
      auto add = [&](ValueId v) {
        if (v != kNoId && g_.values[v].producer != kNoId) edges.push_back({g_.values[v].producer, node.index});
      };
      for (ValueId v : node.inputs) add(v);
      for (ValueId v : node.implicit_inputs) add(v);
    }
    edges.insert(edges.end(), in_.partition.order_edges.begin(), in_.partition.order_edges.end());
    const Adjacency out_nodes(nn, edges, /*from_first=*/true), in_nodes(nn, edges, /*from_first=*/false);
    std::vector<int> trigger_of(nn, -1), notification_of(nn, -1);
    int triggers = 0;
    for (size_t i = 0; i < streams.size(); ++i)
      for (NodeId n : streams[i])
        for (NodeId c : out_nodes.of(n))
          if (plan_.node_stream[c] != static_cast<int>(i)) {
            trigger_of[n] = triggers++;
            break;
          }
    // Who waits for whom: (consumer, producer, host wait), the first one found for a pair wins; ordered by consumer
    // then producer as ORT's map of maps visits them.
    struct Wait {
      NodeId consumer, producer;
      bool host;
    };
    std::vector<Wait> waits;
    auto notify = [&](NodeId n, size_t stream) {
      if (notification_of[n] < 0) {
        notification_of[n] = static_cast<int>(plan_.notification_owners.size());
        plan_.notification_owners.push_back(static_cast<int>(stream));
      }
    };
    // A wait handle exists from a non-CPU device (CUDA registers waits on the device and on the host).
    auto has_wait_handle = [](Device from) { return from.type != DeviceType::kCpu; };
    for (size_t i = 0; i < streams.size(); ++i) {
      Device stream_device = in_.partition.stream_device[i];
      for (NodeId n : streams[i]) {
        const Node& node = g_.nodes[n];
        if (node.op_type == "Shape" || stream_device.type == DeviceType::kCpu) continue;
        for (NodeId c : out_nodes.of(n)) {
          bool direct = false;
          for (ValueId out : node.outputs) {
            if (out == kNoId) continue;
            const auto& cin = g_.nodes[c].inputs;
            if (std::find(cin.begin(), cin.end(), out) == cin.end()) continue;
            direct = true;
            bool output_on_cpu = plan_.values[out].location.type == DeviceType::kCpu;
            if ((plan_.node_stream[c] != static_cast<int>(i) || output_on_cpu) && has_wait_handle(stream_device)) {
              notify(n, i);
              waits.push_back({c, n, output_on_cpu});
            }
          }
          if (!direct && plan_.node_stream[c] != static_cast<int>(i) && has_wait_handle(stream_device)) {
            notify(n, i);
            bool downstream_on_cpu = in_.partition.stream_device[plan_.node_stream[c]].type == DeviceType::kCpu;
            waits.push_back({c, n, downstream_on_cpu});
          }
        }
      }
    }
    std::stable_sort(waits.begin(), waits.end(), [](const Wait& a, const Wait& b) {
      return a.consumer != b.consumer ? a.consumer < b.consumer : a.producer < b.producer;
    });
    waits.erase(
        std::unique(waits.begin(), waits.end(),
                    [](const Wait& a, const Wait& b) { return a.consumer == b.consumer && a.producer == b.producer; }),
        waits.end());
    std::vector<size_t> first_wait(nn + 1, 0);  // waits of node n: [first_wait[n], first_wait[n + 1])
    for (const Wait& w : waits) ++first_wait[static_cast<size_t>(w.consumer) + 1];
    for (size_t n = 0; n < nn; ++n) first_wait[n + 1] += first_wait[n];
    plan_.streams.resize(streams.size());
    for (size_t i = 0; i < streams.size(); ++i) {
      LogicStream& ls = plan_.streams[i];
      ls.device = in_.partition.stream_device[i];
      size_t steps = 0;  // (counted first: grown by doubling, the steps of a long stream were written three times)
      for (NodeId n : streams[i]) {
        for (NodeId p : in_nodes.of(n)) steps += plan_.node_stream[p] != static_cast<int>(i);
        steps += first_wait[n + 1] - first_wait[n] + 1 + (notification_of[n] >= 0) + (trigger_of[n] >= 0);
      }
      ls.steps.reserve(steps);
      for (NodeId n : streams[i]) {
        for (NodeId p : in_nodes.of(n)) {
          if (plan_.node_stream[p] == static_cast<int>(i)) continue;
          int trigger = trigger_of[p];
          int barrier = plan_.num_barriers++;
          plan_.downstream_map[trigger].push_back({static_cast<int>(i), static_cast<int>(ls.steps.size())});
          ls.steps.push_back({StepKind::kBarrier, n, barrier, trigger, -1});
        }
        for (size_t k = first_wait[n]; k < first_wait[n + 1]; ++k) {
          // A CPU stream always waits on the host.
          bool host_wait = waits[k].host || ls.device.type == DeviceType::kCpu;
          ls.steps.push_back({StepKind::kWaitOnEP, n, -1, -1, notification_of[waits[k].producer], host_wait});
        }
        ls.steps.push_back({StepKind::kLaunchKernel, n, -1, -1, -1});
        if (notification_of[n] >= 0)
          ls.steps.push_back({StepKind::kActivateNotification, n, -1, -1, notification_of[n]});
        if (trigger_of[n] >= 0) ls.steps.push_back({StepKind::kTriggerDownstream, n, -1, trigger_of[n], -1});
      }
    }
  }

 private:
  const PlanInput& in_;
  const Graph& g_;
  PlanOptions options_;
  Plan plan_;
  partition::NodeFacts facts_;
  std::vector<int> pc_;
  std::vector<int> use_;
  std::vector<ValueId> buffer_;  // ORT's reused_buffer_index: each value's root buffer while planning
  Freelist freelist_;
  HappensBefore hb_;
  bool check_hb_ = false;
  // Per buffer and stream, the position of the last node that used it (-1: none); multi-stream only.
  std::vector<int> users_;
};

}  // namespace

Plan create_plan(const PlanInput& in, const PlanOptions& options) {
  Planner p(in, options);
  return p.run();
}

}  // namespace memplan::planner
