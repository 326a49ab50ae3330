// ORT's freelist of released buffers (allocation_planner.cc: most recently freed first; a new value takes the
// first one that passes SameSize and the caller's checks), indexed by what SameSize compares, so a search
// visits only buffers that could match. The first fit is the one a scan of the whole list would find: the most
// recently freed among the candidates (a scan of every freed buffer made planning quadratic on graphs with many
// shapes and dtypes, as shape computations are).
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "memplan/graph.h"
#include "memplan/partition/device.h"

namespace memplan::planner {

// A value as the plan's reuse decisions see it: the value, with the shape they compare (the graph's own, or the one
// ORT knows at load time when the plan is ORT's: PlanInput::decision_shapes), so that no copy of the graph is needed
// to decide from other shapes.
struct SeenValue {
  const Value& value;
  bool has_shape;
  const std::vector<Dim>& dims;
};

class Freelist {
 public:
  // `by_bytes`: memplan's rule, where two tensors of the same known byte size also match. `values`: how many
  // values the graph has (ValueIds index them).
  Freelist(size_t values, bool by_bytes) : by_bytes_(by_bytes), live_seq_(values, 0), bucket_of_(values) {}

  // Empties the list; `streams` > 1: take_on_stream will be used (set up its per-stream lists).
  void clear(size_t streams = 1);
  // `v` (value `val`, at `location`) was freed. A buffer that can match nothing is not kept.
  void push(ValueId v, const SeenValue& val, partition::Device location);
  // The most recently freed buffer that matches `want` at `location` and passes `fits`; removed from the list.
  template <class Fits>
  std::optional<ValueId> take(const SeenValue& want, partition::Device location, Fits fits) {
    Entry best{};
    for (Bucket* b : {find(shape_key(want, location)), by_bytes_ ? find(bytes_key(want.value, location)) : nullptr}) {
      if (!b) continue;
      // Newest first, down to the one already found in the other bucket.
      for (auto it = b->entries.rbegin(); it != b->entries.rend() && it->seq > best.seq; ++it)
        if (alive(*it) && fits(it->value)) {
          best = *it;
          break;
        }
    }
    if (!best.seq) return std::nullopt;
    kill(best.value);
    return best.value;
  }

  // The same on several streams, for a node of `stream` (the nodes of a stream asking in their order): a candidate
  // also needs every user of it to happen before the node. `waits(v)` says which stream t and which position there
  // the node would have to know complete first ({t, p}, or nullopt when all are), `known(t)` how many nodes of
  // stream t the node knows complete. Such a candidate is parked for `stream` until one of its later nodes knows
  // more of t, as none before can take it (a stream knows only more as it goes): the same first fit as take(), without
  // testing again and again buffers whose users a stream never hears of (quadratic on a GPU's shape computations).
  template <class Waits, class Known, class Fits>
  std::optional<ValueId> take_on_stream(const SeenValue& want, partition::Device location, size_t stream, Waits waits,
                                        Known known, Fits fits) {
    Entry best{};
    for (Bucket* b : {find(shape_key(want, location)), by_bytes_ ? find(bytes_key(want.value, location)) : nullptr}) {
      if (!b) continue;
      StreamView& view = b->streams[stream];
      for (size_t t = 0; t < view.parked.size(); ++t) {
        auto& heap = view.parked[t];
        const int knows = known(t);
        while (!heap.empty() && heap.front().position < knows) {
          std::pop_heap(heap.begin(), heap.end(), LaterPosition{});
          const Entry e = heap.back().entry;
          heap.pop_back();
          if (alive(e))
            view.returned.insert(std::upper_bound(view.returned.begin(), view.returned.end(), e, BySeq{}), e);
        }
      }
      // Newest first over both lists; a parked or dead entry of `ready` becomes a hole (seq 0).
      size_t i = view.ready.size(), j = view.returned.size();
      while (true) {
        while (i > 0 && view.ready[i - 1].seq == 0) --i;
        if (i == 0 && j == 0) break;
        const bool from_ready = j == 0 || (i > 0 && view.ready[i - 1].seq > view.returned[j - 1].seq);
        Entry& e = from_ready ? view.ready[i - 1] : view.returned[j - 1];
        if (e.seq <= best.seq) break;
        std::optional<std::pair<int, int>> wait;
        const bool dead = !alive(e);
        if (!dead) wait = waits(e.value);
        if (dead || wait) {
          if (wait) {
            auto& heap = view.parked[static_cast<size_t>(wait->first)];
            heap.push_back({wait->second, e});
            std::push_heap(heap.begin(), heap.end(), LaterPosition{});
          }
          if (from_ready) {
            e.seq = 0;
            ++view.holes;
            --i;
          } else {
            view.returned.erase(view.returned.begin() + static_cast<std::ptrdiff_t>(j - 1));
            --j;
          }
          continue;
        }
        if (fits(e.value)) {
          best = e;
          break;
        }
        from_ready ? --i : --j;
      }
      if (view.holes * 2 > view.ready.size()) {
        std::erase_if(view.ready, [&](const Entry& e) { return e.seq == 0 || !alive(e); });
        view.holes = 0;
      }
    }
    if (!best.seq) return std::nullopt;
    kill(best.value);
    return best.value;
  }

 private:
  struct Entry {
    uint64_t seq = 0;  // 1, 2, ...: order of freeing
    ValueId value = kNoId;
  };
  struct BySeq {
    bool operator()(const Entry& a, const Entry& b) const { return a.seq < b.seq; }
  };
  struct Parked {
    int position;  // the stream it waits for must be known complete past this position
    Entry entry;
  };
  struct LaterPosition {  // a min-heap by position
    bool operator()(const Parked& a, const Parked& b) const { return a.position > b.position; }
  };
  // take_on_stream's lists for one stream: candidates to test, and per stream waited for, those parked.
  struct StreamView {
    std::vector<Entry> ready;  // oldest first; holes (seq 0) where entries were parked or found dead
    size_t holes = 0;
    std::vector<Entry> returned;  // entries back from parking, oldest first
    std::vector<std::vector<Parked>> parked;
  };
  struct Bucket {
    std::vector<Entry> entries;  // oldest first
    size_t dead = 0;
    std::vector<StreamView> streams;  // on several streams (clear(streams)), instead of `entries`
  };
  // What SameSize compares (size_rules.h's ort_same_size and memplan_same_size, which the caller's `fits`
  // still applies): location, element bits and shape (known dims by value, free dims by name); empty when the
  // value equals no shape. And memplan's byte-size key; empty when unsized.
  static std::string shape_key(const SeenValue& v, partition::Device location);
  static std::string bytes_key(const Value& v, partition::Device location);
  Bucket* find(const std::string& key);
  bool alive(const Entry& e) const { return live_seq_[e.value] == e.seq; }
  void kill(ValueId v);

  bool by_bytes_;
  size_t streams_ = 1;
  uint64_t next_seq_ = 1;
  std::map<std::string, Bucket> buckets_;        // node-based: Bucket pointers stay valid
  std::vector<uint64_t> live_seq_;               // per value on the list: the freeing its live entries are from; else 0
  std::vector<std::vector<Bucket*>> bucket_of_;  // per value on the list: the buckets its live entries are in
};

}  // namespace memplan::planner
