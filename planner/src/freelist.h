// ORT's freelist of released buffers (allocation_planner.cc: most recently freed first; a new value takes the
// first one that passes SameSize and the caller's checks), indexed by what SameSize compares, so a search
// visits only buffers that could match. The first fit is the one a scan of the whole list would find: the most
// recently freed among the candidates (a scan of every freed buffer made planning quadratic on graphs with many
// shapes and dtypes, as shape computations are).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "memplan/graph.h"
#include "memplan/partition/device.h"

namespace memplan::planner {

class Freelist {
 public:
  // `by_bytes`: memplan's rule, where two tensors of the same known byte size also match. `values`: how many
  // values the graph has (ValueIds index them).
  Freelist(size_t values, bool by_bytes) : by_bytes_(by_bytes), live_seq_(values, 0), bucket_of_(values) {}

  void clear();
  // `v` (value `val`, at `location`) was freed. A buffer that can match nothing is not kept.
  void push(ValueId v, const Value& val, partition::Device location);
  // The most recently freed buffer that matches `want` at `location` and passes `fits`; removed from the list.
  template <class Fits>
  std::optional<ValueId> take(const Value& want, partition::Device location, Fits fits) {
    Entry best{};
    for (Bucket* b : {find(shape_key(want, location)), by_bytes_ ? find(bytes_key(want, location)) : nullptr}) {
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

 private:
  struct Entry {
    uint64_t seq = 0;  // 1, 2, ...: order of freeing
    ValueId value = kNoId;
  };
  struct Bucket {
    std::vector<Entry> entries;  // oldest first
    size_t dead = 0;
  };
  // What SameSize compares (allocation_planner.cc's ort_same_size and memplan_same_size, which the caller's `fits`
  // still applies): location, element bits and shape (known dims by value, free dims by name); empty when the
  // value equals no shape. And memplan's byte-size key; empty when unsized.
  static std::string shape_key(const Value& v, partition::Device location);
  static std::string bytes_key(const Value& v, partition::Device location);
  Bucket* find(const std::string& key);
  bool alive(const Entry& e) const { return live_seq_[e.value] == e.seq; }
  void kill(ValueId v);

  bool by_bytes_;
  uint64_t next_seq_ = 1;
  std::map<std::string, Bucket> buckets_;        // node-based: Bucket pointers stay valid
  std::vector<uint64_t> live_seq_;               // per value on the list: the freeing its live entries are from; else 0
  std::vector<std::vector<Bucket*>> bucket_of_;  // per value on the list: the buckets its live entries are in
};

}  // namespace memplan::planner
