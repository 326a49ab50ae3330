#include "memplan/memory_order.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <unordered_map>

#include "memplan/execution_order.h"
#include "memplan/work_budget.h"

namespace memplan {
namespace {

using Clock = std::chrono::steady_clock;

// What the searches may do, counted in node visits instead of seconds (work_budget.h): about kVisitsPerSecond
// visits take a second on one core here.
constexpr double kVisitsPerSecond = 2e8;
struct Work : WorkBudget {
  explicit Work(double seconds) : WorkBudget(seconds, kVisitsPerSecond) {}
};

// What the live peak needs of a graph, computed once: per node its distinct counted inputs and its counted
// outputs, per value its bytes and consumers.
struct Liveness {
  std::vector<std::vector<NodeId>> producers;         // input_node_edges()
  std::vector<std::vector<NodeId>> successors;        // the reverse: one entry per input edge
  std::vector<std::vector<ValueId>> inputs, outputs;  // counted values only
  std::vector<uint64_t> bytes;                        // 0 for values not counted
  std::vector<int> consumers;                         // distinct consumer nodes
  std::vector<bool> pinned;                           // graph outputs: live to the end once produced

  explicit Liveness(const Graph& g)
      : producers(input_node_edges(g)), successors(g.nodes.size()), inputs(g.nodes.size()), outputs(g.nodes.size()) {
    for (NodeId v = 0; v < static_cast<NodeId>(g.nodes.size()); ++v)
      for (NodeId p : producers[v]) successors[p].push_back(v);
    bytes.assign(g.values.size(), 0);
    consumers.assign(g.values.size(), 0);
    pinned.assign(g.values.size(), false);
    for (const Value& v : g.values) {
      const ValueId id = static_cast<ValueId>(&v - g.values.data());
      // The caller's memory (graph inputs, weights, enclosing graphs' values) is the same in every order.
      if (v.is_initializer || v.is_graph_input || v.is_outer_scope || v.producer == kNoId) continue;
      bytes[id] = v.bytes.value_or(0);
      pinned[id] = v.is_graph_output;
    }
    for (const Node& n : g.nodes) {
      auto& in = inputs[n.index];
      for (const auto* list : {&n.inputs, &n.implicit_inputs})
        for (ValueId v : *list)
          if (v != kNoId && bytes[v] && std::find(in.begin(), in.end(), v) == in.end()) in.push_back(v);
      for (ValueId v : in) ++consumers[v];
      for (ValueId v : n.outputs)
        if (v != kNoId && bytes[v]) outputs[n.index].push_back(v);
    }
  }
};

uint64_t peak_of(const Liveness& l, const std::vector<NodeId>& order) {
  std::vector<int> remaining = l.consumers;
  uint64_t live = 0, peak = 0;
  for (NodeId n : order) {
    for (ValueId v : l.outputs[n]) live += l.bytes[v];
    peak = std::max(peak, live);
    for (ValueId v : l.inputs[n])
      if (--remaining[v] == 0 && !l.pinned[v]) live -= l.bytes[v];
    for (ValueId v : l.outputs[n])
      if (l.consumers[v] == 0 && !l.pinned[v]) live -= l.bytes[v];
  }
  return peak;
}

// A run of the order whose nodes are searched together: every node before it is done when it starts, every node
// after it waits for it to finish (it ends at a single-value cut).
struct Piece {
  std::vector<NodeId> nodes;  // in ORT's DEFAULT order
};

// Splits the graph at single-value cuts: nodes every other node (but free ones: nodes without producers, which can
// run whenever their consumers need them) is an ancestor or a descendant of, and past which no counted value but
// their own outputs and graph outputs lives. Each piece lists its nodes in `order` (ORT's DEFAULT order); a free
// node joins the piece of its first consumer.
std::vector<Piece> split_at_cuts(const Graph& g, const Liveness& l, const std::vector<NodeId>& order) {
  const size_t n = order.size();
  constexpr size_t kMaxNodesForCuts = 8192;  // two n x n bit matrices
  if (n == 0) return {};
  if (n > kMaxNodesForCuts) return {Piece{order}};
  std::vector<size_t> pos(g.nodes.size());
  for (size_t i = 0; i < n; ++i) pos[order[i]] = i;
  const auto& producers = l.producers;
  const auto& successors = l.successors;
  const size_t words = (n + 63) / 64;
  std::vector<uint64_t> anc(n * words, 0), desc(n * words, 0), nonfree(words, 0);
  auto row = [&](std::vector<uint64_t>& m, size_t i) { return m.data() + i * words; };
  auto has = [&](std::vector<uint64_t>& m, size_t i, size_t j) { return (row(m, i)[j / 64] >> (j % 64)) & 1; };
  for (size_t i = 0; i < n; ++i) {
    if (!producers[order[i]].empty()) nonfree[i / 64] |= uint64_t{1} << (i % 64);
    for (NodeId p : producers[order[i]]) {
      uint64_t* r = row(anc, i);
      const uint64_t* pr = row(anc, pos[p]);
      for (size_t w = 0; w < words; ++w) r[w] |= pr[w];
      r[pos[p] / 64] |= uint64_t{1} << (pos[p] % 64);
    }
  }
  for (size_t i = n; i-- > 0;)
    for (NodeId s : successors[order[i]]) {
      uint64_t* r = row(desc, i);
      const uint64_t* sr = row(desc, pos[s]);
      for (size_t w = 0; w < words; ++w) r[w] |= sr[w];
      r[pos[s] / 64] |= uint64_t{1} << (pos[s] % 64);
    }
  size_t nonfree_count = 0;
  for (uint64_t w : nonfree) nonfree_count += static_cast<size_t>(__builtin_popcountll(w));
  // Counted values with their producer and reader positions, for the crossing test.
  std::vector<std::pair<size_t, std::vector<size_t>>> uses;  // (producer position, reader positions)
  std::unordered_map<ValueId, size_t> use_of;                // value -> its entry in `uses`
  for (size_t i = 0; i < n; ++i)
    for (ValueId v : l.outputs[order[i]])
      if (!l.pinned[v]) {
        use_of[v] = uses.size();
        uses.push_back({i, {}});
      }
  for (size_t i = 0; i < n; ++i)
    for (ValueId v : l.inputs[order[i]])
      if (auto it = use_of.find(v); it != use_of.end()) uses[it->second].second.push_back(i);
  std::vector<size_t> cuts;  // positions
  for (size_t i = 0; i < n; ++i) {
    if (producers[order[i]].empty() || successors[order[i]].empty()) continue;
    size_t related = 1;
    for (size_t w = 0; w < words; ++w)
      related += static_cast<size_t>(__builtin_popcountll((row(anc, i)[w] | row(desc, i)[w]) & nonfree[w]));
    if (related != nonfree_count) continue;
    bool crossing = false;
    for (const auto& [producer, readers] : uses) {
      if (producer == i || !has(anc, i, producer)) continue;
      for (size_t r : readers)
        if (has(desc, i, r)) crossing = true;
      if (crossing) break;
    }
    if (!crossing) cuts.push_back(i);
  }
  // A node's piece: how many cuts it descends from (a cut ends its own piece); a free node's, its first consumer's.
  std::vector<size_t> piece_of(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (producers[order[i]].empty()) continue;
    for (size_t c : cuts) piece_of[i] += has(desc, c, i);
  }
  for (size_t i = 0; i < n; ++i) {
    if (!producers[order[i]].empty()) continue;
    size_t first = cuts.size();
    for (NodeId s : successors[order[i]]) first = std::min(first, piece_of[pos[s]]);
    piece_of[i] = first;
  }
  std::vector<Piece> pieces(cuts.size() + 1);
  for (size_t i = 0; i < n; ++i) pieces[piece_of[i]].nodes.push_back(order[i]);
  pieces.erase(std::remove_if(pieces.begin(), pieces.end(), [](const Piece& p) { return p.nodes.empty(); }),
               pieces.end());
  return pieces;
}

// The search over one piece, its nodes numbered 0..k-1 in ORT's order. Every value a piece reads from before it is
// read only inside it, and only the piece's last node's outputs (and graph outputs) are read after it
// (split_at_cuts), so a value is freed when its consumers inside the piece have run.
class PieceSearch {
 public:
  PieceSearch(const Liveness& l, const Piece& piece) : l_(l), nodes_(piece.nodes) {
    const size_t k = nodes_.size();
    std::unordered_map<NodeId, int> local;
    for (size_t i = 0; i < k; ++i) local[nodes_[i]] = static_cast<int>(i);
    succ_.resize(k);
    preds_.assign(k, 0);
    pred_mask_.assign(k, 0);
    for (size_t i = 0; i < k; ++i) {
      std::vector<int> seen;
      for (NodeId p : l.producers[nodes_[i]]) {
        auto it = local.find(p);
        if (it == local.end() || std::find(seen.begin(), seen.end(), it->second) != seen.end()) continue;
        seen.push_back(it->second);
        succ_[it->second].push_back(static_cast<int>(i));
        ++preds_[i];
        if (k <= 64) pred_mask_[i] |= uint64_t{1} << it->second;
      }
    }
    for (size_t i = 0; i < k; ++i) {
      for (ValueId v : l.inputs[nodes_[i]]) {
        auto& info = values_[v];
        ++info.inside;
        if (k <= 64) info.consumer_mask |= uint64_t{1} << i;
      }
      for (ValueId v : l.outputs[nodes_[i]]) values_[v].produced_here = true;
    }
    for (const auto& [v, info] : values_)
      if (!info.produced_here && info.inside == l.consumers[v] && !l.pinned[v]) start_live_ += l.bytes[v];
  }

  size_t size() const { return nodes_.size(); }
  NodeId node(int i) const { return nodes_[i]; }

  // Greedy list scheduling: among the ready nodes, the one that leaves the fewest bytes live (then the lower peak
  // while it runs, then the one ORT runs first). Returns the local order and its peak (of this piece's bytes).
  std::pair<std::vector<int>, uint64_t> greedy() const { return schedule(true); }
  // ORT's order of the piece and its peak, measured the same way.
  std::pair<std::vector<int>, uint64_t> as_ort() const { return schedule(false); }

  // Exact search (pieces of at most 64 nodes): the lowest peak reaching each set of nodes run, layer by layer; sets
  // whose peak reaches `bound` (the best order known) are dropped. False when it ran out of states or time; true
  // when it finished, `order` and `peak` then replaced if it found better.
  bool exact(uint64_t bound, Work& work, std::vector<int>& order, uint64_t& peak) const {
    const size_t k = nodes_.size();
    if (k > 64) return false;
    struct State {
      uint64_t peak, live, parent;
      int node;
    };
    constexpr size_t kMaxStates = 1000000;
    std::vector<std::unordered_map<uint64_t, State>> layers(k + 1);
    layers[0][0] = {0, start_live_, 0, -1};
    size_t states = 1;
    for (size_t depth = 0; depth < k; ++depth) {
      for (const auto& [mask, st] : layers[depth]) {
        if (!work.spend(16 * k)) return false;  // (a state's successors cost about 16 visits each)
        for (size_t i = 0; i < k; ++i) {
          if ((mask >> i & 1) || (pred_mask_[i] & ~mask)) continue;
          const auto [during, after] = step_masked(static_cast<int>(i), mask, st.live);
          const uint64_t p = std::max(st.peak, during);
          if (p >= bound) continue;
          const uint64_t next = mask | uint64_t{1} << i;
          auto [it, fresh] = layers[depth + 1].try_emplace(next, State{p, after, mask, static_cast<int>(i)});
          if (fresh && ++states > kMaxStates) return false;
          if (!fresh && p < it->second.peak) it->second = {p, after, mask, static_cast<int>(i)};
        }
      }
    }
    const uint64_t all = k == 64 ? ~uint64_t{0} : (uint64_t{1} << k) - 1;
    auto it = layers[k].find(all);
    if (it == layers[k].end()) return true;  // nothing beats the bound: the known order is optimal
    peak = it->second.peak;
    order.assign(k, 0);
    uint64_t mask = all;
    for (size_t depth = k; depth > 0; --depth) {
      const State& st = layers[depth].at(mask);
      order[depth - 1] = st.node;
      mask = st.parent;
    }
    return true;
  }

 private:
  struct ValueInfo {
    int inside = 0;              // consumers in this piece
    uint64_t consumer_mask = 0;  // which (pieces of at most 64 nodes)
    bool produced_here = false;
  };

  bool freeable(ValueId v) const { return !l_.pinned[v] && values_.at(v).inside == l_.consumers[v]; }

  // Running local node i when the nodes of `mask` have run and `live` bytes are live: the bytes while it runs
  // and after.
  std::pair<uint64_t, uint64_t> step_masked(int i, uint64_t mask, uint64_t live) const {
    const NodeId n = nodes_[i];
    for (ValueId v : l_.outputs[n]) live += l_.bytes[v];
    const uint64_t during = live;
    const uint64_t done = mask | uint64_t{1} << i;
    for (ValueId v : l_.inputs[n])
      if (freeable(v) && !(values_.at(v).consumer_mask & ~done)) live -= l_.bytes[v];
    for (ValueId v : l_.outputs[n])
      if (l_.consumers[v] == 0 && !l_.pinned[v]) live -= l_.bytes[v];
    return {during, live};
  }

  std::pair<std::vector<int>, uint64_t> schedule(bool choose) const {
    const size_t k = nodes_.size();
    std::unordered_map<ValueId, int> left;  // consumers of a value not run yet
    auto after_running = [&](int i, uint64_t live, bool apply) {
      const NodeId n = nodes_[i];
      for (ValueId v : l_.outputs[n]) live += l_.bytes[v];
      const uint64_t during = live;
      for (ValueId v : l_.inputs[n]) {
        auto it = left.find(v);
        const int remaining = (it == left.end() ? values_.at(v).inside : it->second) - 1;
        if (apply) left[v] = remaining;
        if (remaining == 0 && freeable(v)) live -= l_.bytes[v];
      }
      for (ValueId v : l_.outputs[n])
        if (l_.consumers[v] == 0 && !l_.pinned[v]) live -= l_.bytes[v];
      return std::pair<uint64_t, uint64_t>{during, live};
    };
    std::vector<int> order;
    order.reserve(k);
    uint64_t live = start_live_, peak = 0;
    auto run = [&](int i) {
      const auto [during, after] = after_running(i, live, true);
      peak = std::max(peak, during);
      live = after;
      order.push_back(i);
    };
    if (!choose) {
      for (size_t i = 0; i < k; ++i) run(static_cast<int>(i));
      return {order, peak};
    }
    // Nodes without producers (weight transposes, shape constants) are not chosen on their own: each runs just
    // before the first node that needs it, as part of that node's cost, so the greedy never fills memory with
    // inputs of nodes far ahead.
    std::vector<bool> free(k), done(k, false);
    std::vector<int> pending(k, 0);
    for (size_t i = 0; i < k; ++i) free[i] = preds_[i] == 0 && !succ_[i].empty();
    for (size_t i = 0; i < k; ++i)
      for (int s : succ_[i])
        if (!free[i]) ++pending[s];
    std::vector<int> ready;  // in ORT's order (ascending local index)
    for (size_t i = 0; i < k; ++i)
      if (!free[i] && pending[i] == 0) ready.push_back(static_cast<int>(i));
    // A very wide front: only the first ready nodes in ORT's order are compared (fewer on huge pieces, so that the
    // greedy stays near-linear there).
    const size_t ready_considered = k > 20000 ? 32 : 4096;
    std::vector<std::vector<int>> free_of(k);  // the free producers of each node
    for (size_t i = 0; i < k; ++i)
      if (free[i])
        for (int s : succ_[i]) free_of[s].push_back(static_cast<int>(i));
    while (!ready.empty()) {
      size_t pick = 0;
      uint64_t best_after = 0, best_during = 0;
      for (size_t r = 0; r < ready.size() && r < ready_considered; ++r) {
        uint64_t at = live, during = 0;
        for (int f : free_of[ready[r]])
          if (!done[f]) {
            const auto [d, a] = after_running(f, at, false);
            during = std::max(during, d);
            at = a;
          }
        const auto [d, after] = after_running(ready[r], at, false);
        during = std::max(during, d);
        if (r == 0 || after < best_after || (after == best_after && during < best_during)) {
          pick = r;
          best_after = after;
          best_during = during;
        }
      }
      const int i = ready[pick];
      ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(pick));
      for (int f : free_of[i])
        if (!done[f]) {
          done[f] = true;
          run(f);
        }
      done[i] = true;
      run(i);
      for (int s : succ_[i])
        if (--pending[s] == 0) ready.insert(std::lower_bound(ready.begin(), ready.end(), s), s);
    }
    for (size_t i = 0; i < k; ++i)  // (free nodes nothing here reads)
      if (!done[i]) run(static_cast<int>(i));
    return {order, peak};
  }

  const Liveness& l_;
  std::vector<NodeId> nodes_;
  std::vector<std::vector<int>> succ_;
  std::vector<int> preds_;
  std::vector<uint64_t> pred_mask_;
  std::unordered_map<ValueId, ValueInfo> values_;
  uint64_t start_live_ = 0;
};

// A random move in a topological sequence of nodes: one node taken out and put back within its window (after its
// last producer, before its first consumer), so the sequence stays topological. False when the drawn node cannot
// move. `pos` is scratch.
bool move_within_window(const Liveness& l, const std::vector<NodeId>& seq, std::mt19937& random,
                        std::vector<size_t>& pos, std::vector<NodeId>& moved) {
  const size_t n = seq.size();
  for (size_t i = 0; i < n; ++i) pos[seq[i]] = i;
  const size_t from = random() % n;
  const NodeId v = seq[from];
  size_t lo = 0, hi = n - 1;
  for (NodeId p : l.producers[v]) lo = std::max(lo, pos[p] + 1);
  for (NodeId c : l.successors[v]) hi = std::min(hi, pos[c] - 1);
  if (hi <= lo) return false;
  const size_t to = lo + random() % (hi - lo + 1);
  if (to == from) return false;
  moved = seq;
  moved.erase(moved.begin() + static_cast<std::ptrdiff_t>(from));
  moved.insert(moved.begin() + static_cast<std::ptrdiff_t>(to), v);
  return true;
}

// Local search on a whole order: moves (move_within_window) kept when the peak does not rise, while work is left.
// Deterministic (fixed seed).
void improve_by_moves(const Liveness& l, Work& work, std::vector<NodeId>& order, uint64_t& peak) {
  const size_t n = order.size();
  if (n < 3) return;
  std::vector<size_t> pos(l.producers.size());
  std::mt19937 random(4242);
  std::vector<NodeId> candidate;
  for (int attempt = 0; attempt < 1000000 && work.spend(2 * n); ++attempt) {
    if (!move_within_window(l, order, random, pos, candidate)) continue;
    const uint64_t p = peak_of(l, candidate);
    if (p <= peak) {
      peak = p;
      order.swap(candidate);
    }
  }
}

}  // namespace

uint64_t live_peak(const Graph& graph, const std::vector<NodeId>& order) {
  return peak_of(Liveness(graph), order);
}

uint64_t live_peak_lower_bound(const Graph& graph) {
  const Liveness l(graph);
  uint64_t bound = 0, outputs = 0;
  for (const Node& n : graph.nodes) {
    uint64_t here = 0;
    for (ValueId v : l.inputs[n.index]) here += l.bytes[v];
    for (ValueId v : l.outputs[n.index]) here += l.bytes[v];
    bound = std::max(bound, here);
  }
  for (ValueId v : graph.outputs)
    if (v != kNoId) outputs += l.bytes[v];
  return std::max(bound, outputs);
}

MemoryOrder memory_order(const Graph& graph, double time_budget_s) {
  const auto start = Clock::now();
  Work work(time_budget_s);
  const Liveness l(graph);
  MemoryOrder result;
  const std::vector<NodeId> ort = default_order(graph);
  result.default_peak = peak_of(l, ort);
  const auto pieces = split_at_cuts(graph, l, ort);
  result.pieces = pieces.size();
  bool all_exact = true;
  // Each piece's best known order (greedy or ORT's), then the exact search, smallest pieces first, each allowed at
  // most half the work left so that one hard piece cannot starve the others.
  std::vector<PieceSearch> searches;
  std::vector<std::vector<int>> orders(pieces.size());
  std::vector<uint64_t> peaks(pieces.size());
  for (size_t p = 0; p < pieces.size(); ++p) {
    searches.emplace_back(l, pieces[p]);
    auto [order, peak] = searches[p].greedy();
    auto [ort_local, ort_peak] = searches[p].as_ort();
    orders[p] = ort_peak <= peak ? std::move(ort_local) : std::move(order);
    peaks[p] = std::min(ort_peak, peak);
  }
  std::vector<size_t> by_size(pieces.size());
  for (size_t p = 0; p < by_size.size(); ++p) by_size[p] = p;
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](size_t a, size_t b) { return pieces[a].nodes.size() < pieces[b].nodes.size(); });
  for (size_t p : by_size) {
    Work share(0);
    share.left = work.left / 2;
    const uint64_t before = share.left;
    if (searches[p].exact(peaks[p], share, orders[p], peaks[p]))
      ++result.exact_pieces;
    else
      all_exact = false;
    work.spend(before - share.left);
  }
  for (size_t p = 0; p < pieces.size(); ++p)
    for (int i : orders[p]) result.order.push_back(searches[p].node(i));
  result.peak = peak_of(l, result.order);
  if (!all_exact) improve_by_moves(l, work, result.order, result.peak);
  if (result.peak > result.default_peak) {  // (pieces are searched apart; never worse than ORT's order)
    result.order = ort;
    result.peak = result.default_peak;
  }
  result.optimal = all_exact && !pieces.empty();
  result.lower_bound = result.optimal ? result.peak : std::min(result.peak, live_peak_lower_bound(graph));
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

namespace {

// A topological numbering whose DEFAULT order visits producers the way `preferred` runs them: the DFS visits the
// highest-numbered producer first, so the numbering is the post-order of a DFS that visits them the other way round
// (on a tree exactly; where subgraphs are shared, close).
std::vector<NodeId> mirrored_numbering(const Graph& graph, const std::vector<NodeId>& preferred) {
  const size_t n = graph.nodes.size();
  std::vector<NodeId> pos(n, 0);
  for (size_t i = 0; i < preferred.size(); ++i) pos[preferred[i]] = static_cast<NodeId>(i);
  // default_order_by_rank visits the highest rank first: ranked by position in `preferred`, it visits producers the
  // other way round, and its post-order (a topological order) numbers the wanted first producer highest.
  const std::vector<NodeId> post = default_order_by_rank(graph, pos);
  std::vector<NodeId> rank(n);
  for (size_t i = 0; i < post.size(); ++i) rank[post[i]] = static_cast<NodeId>(i);
  return rank;
}

bool topological(const std::vector<std::vector<NodeId>>& producers, const std::vector<NodeId>& rank) {
  for (size_t v = 0; v < producers.size(); ++v)
    for (NodeId p : producers[v])
      if (rank[p] >= rank[v]) return false;
  return true;
}

}  // namespace

DfsNumbering default_order_numbering(const Graph& graph, double time_budget_s) {
  Work work(time_budget_s / 2);  // (the other half for the memory order below)
  const Liveness l(graph);
  const size_t n = graph.nodes.size();

  DfsNumbering best;
  best.rank.resize(n);
  for (size_t i = 0; i < n; ++i) best.rank[i] = static_cast<NodeId>(i);
  best.order = default_order_by_rank(graph, best.rank);
  best.peak = best.default_peak = peak_of(l, best.order);
  const bool current_is_topological = topological(l.producers, best.rank);
  if (!current_is_topological) best.peak = UINT64_MAX;  // (inlined function bodies: another numbering is needed)
  auto consider = [&](std::vector<NodeId> rank) {
    std::vector<NodeId> order = default_order_by_rank(graph, rank);
    const uint64_t peak = peak_of(l, order);
    if (peak < best.peak) best = {std::move(rank), std::move(order), peak, best.default_peak};
  };
  // Candidates: numberings after the memory order (as the file order, and mirrored so that the DFS follows it) and
  // after ORT's own order.
  const MemoryOrder target = memory_order(graph, time_budget_s / 2);
  std::vector<NodeId> as_file(n), ort_as_file(n);
  for (size_t i = 0; i < n; ++i) as_file[target.order[i]] = static_cast<NodeId>(i);
  for (size_t i = 0; i < n; ++i) ort_as_file[best.order[i]] = static_cast<NodeId>(i);
  consider(as_file);
  consider(mirrored_numbering(graph, target.order));
  consider(ort_as_file);
  consider(mirrored_numbering(graph, best.order));
  // Then moves of the file order (move_within_window), kept when the peak drops: the numbering stays topological.
  std::mt19937 random(12345);  // fixed: the same model gives the same file
  std::vector<size_t> pos(n);
  std::vector<NodeId> file(n), moved;
  for (int attempt = 0; n > 2 && attempt < 100000 && work.spend(4 * n); ++attempt) {
    for (size_t v = 0; v < n; ++v) file[best.rank[v]] = static_cast<NodeId>(v);
    if (!move_within_window(l, file, random, pos, moved)) continue;
    std::vector<NodeId> rank(n);
    for (size_t i = 0; i < n; ++i) rank[moved[i]] = static_cast<NodeId>(i);
    consider(std::move(rank));
  }
  if (best.peak == UINT64_MAX) {  // nothing topological beat an untopological current numbering: keep ORT's order
    best.rank = ort_as_file;
    best.order = default_order_by_rank(graph, best.rank);
    best.peak = peak_of(l, best.order);
  }
  return best;
}

}  // namespace memplan
