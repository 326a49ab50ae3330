// ORT's multi-stream reuse pass, over the plan of a walk without reuse: a compatibility mode (memplan's own walk
// decides reuse across streams in one pass: reuse_walk.cc).
#include <absl/container/btree_set.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "adjacency.h"
#include "clock_list.h"
#include "planner_phases.h"
#include "size_rules.h"

namespace memplan::planner {

namespace {

// ORT's dependence_graph_: each node's upstream nodes (its producers and the node before it on its stream), sorted
// and distinct (ORT's std::set order, which the sink-up queue follows), and the same edges downstream. Arrays indexed
// by node rather than trees keyed by them: this runs on every multi-stream plan and ORT estimate.
struct DependenceGraph {
  Adjacency upstream, downstream;
};

DependenceGraph dependence_graph(const PlanInput& input) {
  const Graph& g = input.graph;
  std::vector<std::pair<NodeId, NodeId>> edges = producer_consumer_edges(g);  // (upstream, downstream)
  for (const auto& stream : input.partition.streams)
    for (size_t j = 1; j < stream.size(); ++j) edges.push_back({stream[j - 1], stream[j]});
  return {Adjacency(g.nodes.size(), edges, /*from_first=*/false),
          Adjacency(g.nodes.size(), edges, /*from_first=*/true)};
}

// OptimizeReusePlanForMultiStream: on a baseline without reuse, walk the dependence graph from the sinks
// up; in-place reuse of single-consumer inputs (TryReuseInput), then let a waiting downstream value take an upstream
// output's buffer when the upstream producer and all its consumers are ancestors of the downstream producer
// (TryReuseOutput). ORT keeps ancestor sets per node and scans the waiting list for each output (quadratic); here
// vector clocks and a ClockList find the same value.
class MultiStreamPass {
  // A B-tree: a million consumer sets of one or two nodes each, and chains' sets of 500k, were a tree node (and a
  // cache miss) per element in std::set (the 1M-node two-chain ORT estimate: a third of its time).
  using NodeSet = absl::btree_set<NodeId>;

 public:
  MultiStreamPass(const PlanInput& input, const partition::NodeFacts& facts, std::vector<ValueId>& buffer, Plan& plan)
      : input_(input),
        g_(input.graph),
        facts_(facts),
        buffer_(buffer),
        plan_(plan),
        deps_(dependence_graph(input)),
        ns_(input.partition.streams.size()),
        consumers_(g_.values.size()),
        reused_(g_.values.size(), 0),
        input_output_(g_.values.size()),
        need_(ns_) {
    for (const Node& node : g_.nodes)
      for_each_input_value(node, [&](ValueId v) {
        const ValueId origin = buffer_[v];
        if (plan_.values[origin].kind == AllocKind::kAllocate) consumers_[origin].insert(node.index);
      });
    compute_ancestor_clocks();
  }

  void run() {
    const size_t nn = g_.nodes.size();
    std::vector<int> downstream_count(nn, 0);
    for (NodeId n = 0; n < static_cast<NodeId>(nn); ++n)
      for (NodeId u : deps_.upstream.of(n)) ++downstream_count[u];
    std::vector<NodeId> queue;
    for (NodeId n = 0; n < static_cast<NodeId>(nn); ++n)
      if (downstream_count[n] == 0) queue.push_back(n);
    for (size_t qi = 0; qi < queue.size(); ++qi) {
      const NodeId n = queue[qi];
      try_reuse_input(n);
      try_reuse_output(n);
      for (NodeId u : deps_.upstream.of(n))
        if (--downstream_count[u] == 0) queue.push_back(u);
    }
    resolve_chains();
  }

 private:
  // ORT keeps each node's whole set of ancestors (quadratic). Each stream is a chain of this graph, so a node's
  // ancestors on a stream are a prefix of it: per node, the last ancestor position on every stream (a vector
  // clock, computed upstream first) answers "is n an ancestor of m, or m itself" exactly: n has a stream and
  // m's clock on it reaches n's position.
  void compute_ancestor_clocks() {
    const size_t nn = g_.nodes.size();
    stream_of_.assign(nn, -1);
    position_.assign(nn, -1);
    for (size_t s = 0; s < ns_; ++s)
      for (size_t j = 0; j < input_.partition.streams[s].size(); ++j) {
        stream_of_[input_.partition.streams[s][j]] = static_cast<int>(s);
        position_[input_.partition.streams[s][j]] = static_cast<int>(j);
      }
    // Upstream first (Kahn's order over this graph's edges, which add stream order to the data edges).
    std::vector<int> pending(nn, 0);
    for (NodeId m = 0; m < static_cast<NodeId>(nn); ++m) pending[m] = static_cast<int>(deps_.upstream.of(m).size());
    std::vector<NodeId> forward;
    for (NodeId m = 0; m < static_cast<NodeId>(nn); ++m)
      if (pending[m] == 0) forward.push_back(m);
    for (size_t i = 0; i < forward.size(); ++i)
      for (NodeId d : deps_.downstream.of(forward[i]))
        if (--pending[d] == 0) forward.push_back(d);
    clock_.assign(nn * ns_, -1);
    for (NodeId m : forward) {
      int* mine = &clock_[static_cast<size_t>(m) * ns_];
      for (NodeId u : deps_.upstream.of(m))
        for (size_t s = 0; s < ns_; ++s) mine[s] = std::max(mine[s], clock_[static_cast<size_t>(u) * ns_ + s]);
      if (stream_of_[m] >= 0) mine[stream_of_[m]] = std::max(mine[stream_of_[m]], position_[m]);
    }
  }

  // TryReuseInput: each Allocate output of n over an input it may alias or write in place.
  void try_reuse_input(NodeId n) {
    const Node& node = g_.nodes[n];
    const partition::OpFacts& f = facts_[n];
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      ValueId out = node.outputs[k];
      if (out == kNoId || plan_.values[out].kind != AllocKind::kAllocate) continue;
      for (ValueId in : node.inputs)
        if (in != kNoId) input_output_[in].push_back(out);
      auto take = [&](ValueId in, bool view) {
        plan_.values[out].kind = AllocKind::kReuse;
        plan_.values[out].reused_buffer = in;
        plan_.values[out].inplace = true;
        plan_.values[out].inplace_of = in;
        plan_.values[out].alias = view;
        absorb(consumers_[in], consumers_[out]);
        reused_[in] = 1;
      };
      bool done = false;
      for (auto [i, o] : f.alias)
        if (!done && o == static_cast<int>(k) && i >= 0 && static_cast<size_t>(i) < node.inputs.size() &&
            node.inputs[i] != kNoId && sizes_alike(g_, node.inputs[i], out)) {
          take(node.inputs[i], true);  // ORT takes the alias whatever the input's kind
          done = true;
        }
      if (done) continue;
      if (f.variadic_alias) {
        int i = static_cast<int>(k) - f.variadic_alias->second + f.variadic_alias->first;
        if (i >= 0 && static_cast<size_t>(i) < node.inputs.size() && node.inputs[i] != kNoId &&
            plan_.values[node.inputs[i]].kind == AllocKind::kAllocate && sizes_alike(g_, node.inputs[i], out)) {
          take(node.inputs[i], true);
          continue;
        }
      }
      for (auto [i, o] : f.may_inplace) {
        if (o != static_cast<int>(k) || i < 0 || static_cast<size_t>(i) >= node.inputs.size() ||
            node.inputs[i] == kNoId)
          continue;
        ValueId in = node.inputs[i];
        if (plan_.values[in].kind == AllocKind::kAllocate && consumers_[in].size() == 1 &&
            ort_same_size(seen_value(input_, in), seen_value(input_, out)) && sizes_alike(g_, in, out)) {
          take(in, false);
          break;
        }
      }
    }
  }

  // The waiting lists' key: location, element size, shape and whether memplan knows the size. Only values ORT's
  // SameSize (and sizes_alike) can pair meet, so every element of a list pairs with every output of its key on size
  // (a shared list made each output scan every other dtype's values of its shape: quadratic on shape computations).
  std::pair<Device, std::string> waiting_key(ValueId id, const SeenValue& v) const {
    std::string key = std::to_string(*dtype_bits(v.value.dtype)) + ":" + std::to_string(v.dims.size());
    for (const Dim& d : v.dims)  // (a name with its length: names may hold ',')
      key += "," + (d.known() ? std::to_string(d.value) : "?" + std::to_string(d.param.size()) + ":" + d.param);
    return {plan_.values[id].location, key + (g_.values[id].bytes ? ":sized" : ":unsized")};
  }

  // TryReuseOutput: for each output of n not reused, the first waiting value (in the order they began to wait) that
  // it does not feed, whose producer has n and all the output's consumers among its ancestors (or is one of them),
  // takes its buffer; else it waits.
  void try_reuse_output(NodeId n) {
    for (ValueId out : g_.nodes[n].outputs) {
      if (out == kNoId || reused_[out] || plan_.values[out].kind != AllocKind::kAllocate) continue;
      const SeenValue ov = seen_value(input_, out);
      if (!ov.has_shape || !ort_same_size(ov, ov)) continue;  // SameSize pairs it with nothing
      auto& list = waiting_.try_emplace(waiting_key(out, ov), ns_).first->second;
      // On every stream, the latest position of out's producer and consumers: what a producer's clock must reach.
      std::fill(need_.begin(), need_.end(), -1);
      bool possible = true;
      auto require = [&](NodeId c) {
        if (stream_of_[c] < 0)
          possible = false;
        else
          need_[stream_of_[c]] = std::max(need_[stream_of_[c]], position_[c]);
      };
      require(n);
      for (NodeId c : consumers_[out]) require(c);
      long slot = -1;
      if (possible) {
        const auto& fed = input_output_[out];
        slot = list.find_first(need_.data(),
                               [&](ValueId down) { return std::find(fed.begin(), fed.end(), down) == fed.end(); });
      }
      if (slot < 0) {
        list.push_back(out, &clock_[static_cast<size_t>(n) * ns_]);
        continue;
      }
      ValueId down = list[static_cast<size_t>(slot)];
      plan_.values[down].kind = AllocKind::kReuse;
      plan_.values[down].reused_buffer = out;
      consumers_[out].insert(g_.values[down].producer);
      absorb(consumers_[out], consumers_[down]);
      list.erase(static_cast<size_t>(slot));
      reused_[out] = 1;
    }
  }

  // `into` gets `from`'s consumers too; `from` is left any subset (its value now reuses another's buffer and is not
  // looked at again). The smaller set is the one copied: along an in-place chain, walked from its end, the set grows
  // by one node a step, and copying it whole each time was quadratic.
  static void absorb(NodeSet& into, NodeSet& from) {
    if (into.size() < from.size()) into.swap(from);
    into.insert(from.begin(), from.end());
  }

  // Each reuse chain resolved to its root, in the plan and in the walk's buffers.
  void resolve_chains() {
    for (ValueId v = 0; v < static_cast<ValueId>(g_.values.size()); ++v) {
      if (plan_.values[v].kind != AllocKind::kReuse) continue;
      ValueId r = plan_.values[v].reused_buffer;
      while (plan_.values[r].kind == AllocKind::kReuse && plan_.values[r].reused_buffer != r)
        r = plan_.values[r].reused_buffer;
      plan_.values[v].reused_buffer = r;
      buffer_[v] = r;
    }
  }

  const PlanInput& input_;
  const Graph& g_;
  const partition::NodeFacts& facts_;
  std::vector<ValueId>& buffer_;
  Plan& plan_;
  const DependenceGraph deps_;
  const size_t ns_;
  std::vector<NodeSet> consumers_;         // of Allocate roots
  std::vector<int> stream_of_, position_;  // per node
  std::vector<int> clock_;                 // per node and stream: the last ancestor's position (-1: none)
  std::map<std::pair<Device, std::string>, ClockList<ValueId>> waiting_;
  std::vector<char> reused_;
  std::vector<std::vector<ValueId>> input_output_;  // an input's consumers' outputs
  std::vector<int> need_;                           // (scratch of try_reuse_output)
};

}  // namespace

void optimize_reuse_for_multi_stream(const PlanInput& input, const partition::NodeFacts& facts,
                                     std::vector<ValueId>& buffer, Plan& plan) {
  MultiStreamPass(input, facts, buffer, plan).run();
}

}  // namespace memplan::planner
