// ORT's single-stream reuse walk (ComputeReuseCount, ComputeSingleStreamReusePlan), and memplan's over the global
// order on several streams: each output allocated, written in place over an input, or given a freed buffer.
#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "memplan/planner/happens_before.h"
#include "planner_phases.h"
#include "size_rules.h"

namespace memplan::planner {

using partition::OpFacts;

WalkMode walk_mode(const PlanInput& in, const PlanOptions& options) {
  if (options.reuse == ReuseMode::kMemplan) return WalkMode::kGlobal;
  // ORT's IsSingleStream: no device type owns two non-empty streams.
  std::set<partition::DeviceType> seen;
  for (size_t s = 0; s < in.partition.streams.size(); ++s)
    if (!in.partition.streams[s].empty() && !seen.insert(in.partition.stream_device[s].type).second)
      return WalkMode::kBaseline;
  return WalkMode::kPerStream;
}

namespace {

// The walk's state: use counts, the freelist and, on several streams in memplan's mode, who last used each buffer.
class ReuseWalk {
 public:
  ReuseWalk(const PlanInput& in, const PlanOptions& options, const partition::NodeFacts& facts,
            std::vector<ValueId>& buffer, Plan& plan)
      : in_(in),
        g_(in.graph),
        options_(options),
        facts_(facts),
        buffer_(buffer),
        plan_(plan),
        freelist_(in.graph.values.size(), options.reuse == ReuseMode::kMemplan) {}

  void run(WalkMode mode) {
    if (mode == WalkMode::kGlobal) {
      hb_ = happens_before(g_, in_.partition);
      walk(in_.order, /*allow_reuse=*/true, /*check_hb=*/in_.partition.streams.size() > 1, /*baseline=*/false);
      return;
    }
    for (const auto& stream : in_.partition.streams) {
      reset_buffers();
      const bool baseline = mode == WalkMode::kBaseline;
      walk(stream, /*allow_reuse=*/!baseline && options_.reuse == ReuseMode::kOrt, /*check_hb=*/false, baseline);
    }
  }

 private:
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
      for_each_input_value(node, [&](ValueId v) { ++use_[v]; });
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

  SeenValue seen(ValueId v) const { return seen_value(in_, v); }
  bool sizes_alike(ValueId a, ValueId b) const { return planner::sizes_alike(g_, a, b); }

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

  // ComputeSingleStreamReusePlan over `nodes` (a stream, or the global order in memplan's mode). `baseline`: no
  // reuse at all, in place or not (ORT's multi-stream pass adds it after).
  void walk(const std::vector<NodeId>& nodes, bool allow_reuse, bool check_hb, bool baseline) {
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
        } else if (!baseline && find_reusable_input(n, k, other, is_alias)) {
          reuse(other, out, AllocKind::kReuse);
          plan_.values[out].inplace = true;
          plan_.values[out].inplace_of = other;
          plan_.values[out].alias = is_alias;
        } else if (!ov.is_tensor()) {
          plan_.values[out].kind = AllocKind::kAllocate;
        } else if (!baseline && allow_reuse && (!ov.consumers.empty() || !ov.implicit_consumers.empty()) &&
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
        const Value& val = g_.values[v];
        record_use(v, n);
        if (val.producer != kNoId && facts_[val.producer].external_outputs) return;
        release(v);
      };
      for_each_input_value(node, consume);
      if (!external)
        for (ValueId v : node.outputs)
          if (v != kNoId) release(v);
    }
  }

  const PlanInput& in_;
  const Graph& g_;
  const PlanOptions& options_;
  const partition::NodeFacts& facts_;
  std::vector<ValueId>& buffer_;  // ORT's reused_buffer_index: each value's root buffer while planning
  Plan& plan_;
  std::vector<int> use_;
  Freelist freelist_;
  HappensBefore hb_;
  bool check_hb_ = false;
  // Per buffer and stream, the position of the last node that used it (-1: none); multi-stream only.
  std::vector<int> users_;
};

}  // namespace

void reuse_walk(const PlanInput& in, const PlanOptions& options, const partition::NodeFacts& facts, WalkMode mode,
                std::vector<ValueId>& buffer, Plan& plan) {
  ReuseWalk(in, options, facts, buffer, plan).run(mode);
}

}  // namespace memplan::planner
