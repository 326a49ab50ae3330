// A list in insertion order whose elements each carry a vector clock (one entry per stream), answering "the first
// live element whose clock reaches a requirement on every stream". ORT's multi-stream reuse pass scans its list of
// waiting values front to back for that element; a scan per output is quadratic when thousands wait (the staged
// weights of an offloaded plan). Here a segment tree over insertion slots keeps, per subtree, the largest clock entry
// of each stream among its live elements, so whole subtrees that cannot qualify are passed over. The element found
// is the one the front-to-back scan finds.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace memplan::planner {

template <typename Item>
class ClockList {
 public:
  explicit ClockList(size_t streams) : streams_(streams) {}

  void push_back(const Item& item, const int* clock) {
    if (items_.size() == capacity_) grow();
    size_t slot = items_.size();
    items_.push_back(item);
    set_leaf(slot, clock);
  }

  // The slot of the first live element whose clock is at least need[s] on every stream s (need[s] < 0: no
  // requirement) and which `accept` takes; -1 when none.
  template <typename Accept>
  long find_first(const int* need, const Accept& accept) const {
    if (items_.empty()) return -1;
    return find(1, 0, capacity_, need, accept);
  }

  const Item& operator[](size_t slot) const { return items_[slot]; }

  void erase(size_t slot) { set_leaf(slot, nullptr); }

 private:
  static constexpr int kDead = -2;  // below every requirement and every real clock entry (-1: none yet)

  int* at(size_t node) { return &tree_[node * streams_]; }
  const int* at(size_t node) const { return &tree_[node * streams_]; }

  // Leaf `slot` holds `clock` (nullptr: dead); its ancestors take the element-wise max of their children.
  void set_leaf(size_t slot, const int* clock) {
    size_t node = capacity_ + slot;
    for (size_t s = 0; s < streams_; ++s) at(node)[s] = clock ? clock[s] : kDead;
    for (node /= 2; node >= 1; node /= 2)
      for (size_t s = 0; s < streams_; ++s) at(node)[s] = std::max(at(2 * node)[s], at(2 * node + 1)[s]);
  }

  void grow() {
    size_t old = capacity_;
    capacity_ = capacity_ ? capacity_ * 2 : 16;
    std::vector<int> tree(2 * capacity_ * streams_, kDead);
    for (size_t slot = 0; slot < old; ++slot)
      for (size_t s = 0; s < streams_; ++s)
        tree[(capacity_ + slot) * streams_ + s] = tree_[(old + slot) * streams_ + s];
    tree_ = std::move(tree);
    for (size_t node = capacity_ - 1; node >= 1; --node)
      for (size_t s = 0; s < streams_; ++s) at(node)[s] = std::max(at(2 * node)[s], at(2 * node + 1)[s]);
  }

  // Leftmost qualifying slot in [lo, hi), the range of tree node `node`.
  template <typename Accept>
  long find(size_t node, size_t lo, size_t hi, const int* need, const Accept& accept) const {
    if (lo >= items_.size()) return -1;
    const int* most = at(node);
    for (size_t s = 0; s < streams_; ++s)
      if (most[s] < need[s] || most[s] == kDead) return -1;
    if (hi - lo == 1) return accept(items_[lo]) ? static_cast<long>(lo) : -1;
    size_t mid = lo + (hi - lo) / 2;
    long left = find(2 * node, lo, mid, need, accept);
    return left >= 0 ? left : find(2 * node + 1, mid, hi, need, accept);
  }

  size_t streams_;
  size_t capacity_ = 0;
  std::vector<Item> items_;
  std::vector<int> tree_;  // node-major, streams_ entries per node; node 1 is the root, leaves from capacity_
};

}  // namespace memplan::planner
