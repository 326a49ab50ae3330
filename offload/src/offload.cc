#include "memplan/offload/offload.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "memplan/error.h"

namespace memplan::offload {

namespace {

// Live bytes per program counter under range additions, with the highest (leftmost) maximum at hand.
class LiveProfile {
 public:
  explicit LiveProfile(int size) : size_(std::max(size, 1)), max_(4 * size_, 0), lazy_(4 * size_, 0) {}

  void add(int from, int to, int64_t delta) {
    if (from > to) return;
    add(1, 0, size_ - 1, from, to, delta);
  }
  int64_t max() const { return max_[1]; }
  int argmax() const {
    int node = 1, lo = 0, hi = size_ - 1;
    int64_t pending = 0;
    while (lo < hi) {
      pending += lazy_[node];
      const int mid = lo + (hi - lo) / 2;
      if (max_[2 * node] + pending == max_[1]) {
        node = 2 * node;
        hi = mid;
      } else {
        node = 2 * node + 1;
        lo = mid + 1;
      }
    }
    return lo;
  }
  int64_t at(int t) const {
    int node = 1, lo = 0, hi = size_ - 1;
    int64_t sum = 0;
    while (lo < hi) {
      sum += lazy_[node];
      const int mid = lo + (hi - lo) / 2;
      if (t <= mid) {
        node = 2 * node;
        hi = mid;
      } else {
        node = 2 * node + 1;
        lo = mid + 1;
      }
    }
    return sum + max_[node];
  }

 private:
  void add(int node, int lo, int hi, int from, int to, int64_t delta) {
    if (to < lo || hi < from) return;
    if (from <= lo && hi <= to) {
      max_[node] += delta;
      lazy_[node] += delta;
      return;
    }
    const int mid = lo + (hi - lo) / 2;
    add(2 * node, lo, mid, from, to, delta);
    add(2 * node + 1, mid + 1, hi, from, to, delta);
    max_[node] = std::max(max_[2 * node], max_[2 * node + 1]) + lazy_[node];
  }

  int size_;
  std::vector<int64_t> max_, lazy_;  // max_[node] includes lazy_[node]
};

// Buffers by the program counters they can occupy the device over, queryable by a program counter: the spans
// sorted by start, a tree of the latest end over them (a query reports each span holding it, in about log n each).
class SpanIndex {
 public:
  struct Span {
    int start, end, buffer;
  };
  explicit SpanIndex(std::vector<Span> spans) : spans_(std::move(spans)) {
    std::sort(spans_.begin(), spans_.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
    while (size_ < spans_.size()) size_ *= 2;  // (a power of two: the tree is walked from the root down)
    end_.assign(2 * size_, std::numeric_limits<int>::min());
    for (size_t i = 0; i < spans_.size(); ++i) end_[size_ + i] = spans_[i].end;
    for (size_t i = size_ - 1; i >= 1; --i) end_[i] = std::max(end_[2 * i], end_[2 * i + 1]);
  }
  // Appends the buffer of every span with start <= t <= end.
  void holding(int t, std::vector<int>& out) const {
    const size_t k = static_cast<size_t>(
        std::upper_bound(spans_.begin(), spans_.end(), t, [](int x, const Span& s) { return x < s.start; }) -
        spans_.begin());
    if (k > 0) collect(1, 0, size_ - 1, k - 1, t, out);
  }

 private:
  void collect(size_t node, size_t lo, size_t hi, size_t last, int t, std::vector<int>& out) const {
    if (lo > last || end_[node] < t) return;
    if (lo == hi) {
      out.push_back(spans_[lo].buffer);
      return;
    }
    const size_t mid = lo + (hi - lo) / 2;
    collect(2 * node, lo, mid, last, t, out);
    collect(2 * node + 1, mid + 1, hi, last, t, out);
  }
  std::vector<Span> spans_;
  size_t size_ = 1;
  std::vector<int> end_;  // a max tree over the spans' ends: node k's children 2k, 2k + 1, leaves at size_ + i
};

class Chooser {
 public:
  explicit Chooser(const Problem& p) : p_(p), steps_(static_cast<int>(p.step_us.size())) {
    start_.assign(steps_ + 1, 0);
    for (int t = 0; t < steps_; ++t) start_[t + 1] = start_[t] + p.step_us[t];
  }

  // Where a copy-in for a residency whose first use is `use` starts: as late as the compute before `use` still
  // covers the transfer, and not before `lower`.
  int prefetch_from(const Buffer& b, int use, int lower) const {
    const double needed = transfer_us(b);
    // The largest p <= use with start_[use] - start_[p] >= needed.
    const double latest_start = start_[use] - needed;
    int p =
        static_cast<int>(std::upper_bound(start_.begin(), start_.begin() + use + 1, latest_start) - start_.begin()) - 1;
    if (p < 0) p = 0;
    return std::max(p, lower);
  }

  // The program counter through which an activation's device copy is held so its copy-out (issued after its
  // producer) is complete, if no other copy delays it.
  int copy_out_hold(const Buffer& b) const {
    const int producer = b.uses.front();
    const double done = start_[producer + 1] + transfer_us(b);
    // The last program counter that starts before the copy is done.
    const int t =
        static_cast<int>(std::lower_bound(start_.begin(), start_.begin() + steps_, done) - start_.begin()) - 1;
    return std::clamp(t, producer, steps_ - 1);
  }

  double transfer_us(const Buffer& b) const { return static_cast<double>(b.bytes) / p_.bytes_per_us; }

  // The whole-buffer residency of a weight newly kept on the host.
  Residency whole_weight(const Buffer& b) const {
    Residency r;
    r.first_use = b.uses.front();
    r.last_use = b.uses.back();
    r.until = r.last_use;
    r.from = prefetch_from(b, r.first_use, 0);
    return r;
  }

  // The producer's residency of an activation before any split: everything, no hold yet.
  static Residency whole_activation(const Buffer& b) {
    Residency r;
    r.from = r.first_use = b.uses.front();
    r.last_use = r.until = b.uses.back();
    r.copy_in = false;
    return r;
  }

  // Splits `rs[i]` at the gap after use `x` (the next use is `y`); false when it frees nothing.
  // `cut_hold`: the step after x waits for the copy-out instead of holding the source until it is done.
  bool split(const Buffer& b, std::vector<Residency>& rs, size_t i, int x, int y, bool cut_hold = false) const {
    const Residency r = rs[i];
    Residency left = r, right = r;
    left.last_use = x;
    left.until = r.copy_in || cut_hold ? x : std::max(x, copy_out_hold(b));
    right.first_use = y;
    right.until = r.last_use;
    right.copy_in = true;
    if (left.until + 1 > y) return false;
    right.from = prefetch_from(b, y, left.until + 1);
    rs[i] = left;
    rs.insert(rs.begin() + static_cast<std::ptrdiff_t>(i) + 1, right);
    return true;
  }

  // The residencies `b` would have if it were freed at `t`, their cost in copies, and whether a copy-in had to
  // start later than its transfer needs (its reader will wait); false when it cannot be freed there.
  bool free_at(const Buffer& b, const Choice& c, int t, std::vector<Residency>& out, int& copies, bool& late) const {
    copies = 0;
    late = false;
    out = c.residencies;
    if (!c.offloaded) {
      if (b.weight) {
        if (b.uses.empty()) {
          out.clear();
          return true;  // never read: it need not be on the device at all
        }
        out = {whole_weight(b)};
        copies = 1;
      } else {
        if (b.uses.size() < 2) return false;
        out = {whole_activation(b)};
        copies = 1;  // the copy-out; the copy-in is counted by the split below
      }
    }
    for (size_t i = 0; i < out.size(); ++i) {
      Residency& r = out[i];
      if (t < r.from || t > r.until) continue;
      if (t >= r.last_use) return false;  // at its last use, or in a copy-out's hold
      if (t < r.first_use) {
        // In a copy-in's lead: start it after t instead.
        if (!r.copy_in) return false;
        r.from = t + 1;
        late = true;
        return true;
      }
      // The uses of this residency around t.
      auto next = std::upper_bound(b.uses.begin(), b.uses.end(), t);
      const int y = *next, x = *(next - 1);
      if (x == t) return false;  // t is a use
      if (!split(b, out, i, x, y) || out[i].until >= t) {
        // The copy-out would still be reading at t: the step after x waits for it instead (a stall).
        out = c.offloaded ? c.residencies : std::vector<Residency>{whole_activation(b)};
        if (!split(b, out, i, x, y, true)) return false;
        late = true;
      }
      ++copies;
      Residency& right = out[i + 1];
      if (right.from <= t) {
        right.from = t + 1;
        late = true;
      }
      return true;
    }
    return true;  // not on the device at t with these residencies
  }

  static bool covered(const std::vector<Residency>& rs, int t) {
    for (const auto& r : rs)
      if (r.from <= t && t <= r.until) return true;
    return false;
  }

  Result run() {
    validate_problem();
    Result res;
    res.choices.resize(p_.buffers.size());
    LiveProfile live(steps_);
    for (const Buffer& b : p_.buffers) add_base(live, b, 1);
    res.peak_without = static_cast<uint64_t>(std::max<int64_t>(live.max(), 0));

    // Live bytes are below 2^63 (validate_problem), so a larger budget is no budget.
    const auto budget = static_cast<int64_t>(std::min<uint64_t>(p_.budget, std::numeric_limits<int64_t>::max()));
    std::vector<Residency> candidate, best;
    Candidates candidates(*this);
    std::vector<int> at_peak;
    while (steps_ > 0 && live.max() > budget) {
      const int t = live.argmax();
      const int64_t over = live.max() - budget;
      int best_index = -1, best_copies = 0;
      bool best_late = false;
      int64_t best_free_length = 0;
      candidates.at(t, res.choices, at_peak);
      for (int index : at_peak) {
        const size_t i = static_cast<size_t>(index);
        const Buffer& b = p_.buffers[i];
        if (!b.offloadable || b.bytes == 0 || (p_.scope == Scope::kWeights && !b.weight)) continue;
        if (!on_device(b, res.choices[i], t)) continue;
        int copies = 0;
        bool late = false;
        if (!free_at(b, res.choices[i], t, candidate, copies, late)) continue;
        const int64_t free_length = freed_length(b, res.choices[i], candidate);
        if (best_index < 0 || better(b, copies, late, free_length, p_.buffers[best_index], best_copies, best_late,
                                     best_free_length, over)) {
          best_index = static_cast<int>(i);
          best_copies = copies;
          best_late = late;
          best_free_length = free_length;
          best = candidate;
        }
      }
      if (best_index < 0) {
        res.peak_at = t;
        res.why = "program counter " + std::to_string(t) + " holds " + std::to_string(live.max()) +
                  " bytes; nothing live there can move (every buffer is in use at that step, in a copy's lead or "
                  "hold, or kept where it is)";
        break;
      }
      Choice& c = res.choices[best_index];
      const Buffer& b = p_.buffers[best_index];
      candidates.offloaded(best_index);
      if (c.offloaded) {
        move_residencies(live, b, c.residencies, best);
      } else {
        remove_current(live, b, c);
        for (const auto& r : best) live.add(r.from, r.until, static_cast<int64_t>(b.bytes));
      }
      c.offloaded = true;
      c.residencies = best;
      if (!b.weight) c.copy_out_after = b.uses.front();
    }

    if (live.max() <= budget) restore_what_fits(live, res, budget);

    res.live.resize(steps_);
    for (int t = 0; t < steps_; ++t) res.live[t] = static_cast<uint64_t>(std::max<int64_t>(live.at(t), 0));
    res.peak = static_cast<uint64_t>(std::max<int64_t>(live.max(), 0));
    res.fits = res.peak <= p_.budget;
    if (res.fits) res.why.clear();
    if (res.fits || res.peak_at < 0) res.peak_at = steps_ > 0 ? live.argmax() : -1;
    collect_transfers(res);
    simulate(res);
    return res;
  }

 private:
  void validate_problem() const {
    if (!(p_.bytes_per_us > 0) || !std::isfinite(p_.bytes_per_us))
      throw Error(ExitCode::kUsage, "offload: the host-device bandwidth must be a positive number");
    for (double us : p_.step_us)
      if (!(us >= 0) || !std::isfinite(us))
        throw Error(ExitCode::kBadInput, "offload: a step's time must be a finite number of microseconds, >= 0");
    uint64_t total = 0;
    for (size_t i = 0; i < p_.buffers.size(); ++i) {
      if (p_.buffers[i].bytes > (uint64_t{1} << 62) - total)
        throw Error(ExitCode::kBadInput, "offload: the buffers add up to more than 2^62 bytes");
      total += p_.buffers[i].bytes;
      const auto& u = p_.buffers[i].uses;
      for (size_t k = 0; k < u.size(); ++k)
        if (u[k] < 0 || u[k] >= steps_ || (k > 0 && u[k] <= u[k - 1]))
          throw Error(ExitCode::kBadInput, "offload: buffer " + std::to_string(i) +
                                               ": uses must be distinct program counters in order, within the " +
                                               std::to_string(steps_) + " steps");
      if (!p_.buffers[i].weight && u.empty())
        throw Error(ExitCode::kBadInput, "offload: activation buffer " + std::to_string(i) + " has no producer");
    }
  }

  // Where a buffer is on the device when nothing is offloaded: a weight for the whole run, an activation from
  // its producer to its last reader.
  void add_base(LiveProfile& live, const Buffer& b, int sign) const {
    if (b.weight)
      live.add(0, steps_ - 1, sign * static_cast<int64_t>(b.bytes));
    else
      live.add(b.uses.front(), b.uses.back(), sign * static_cast<int64_t>(b.bytes));
  }

  // The greedy moves a large buffer at the first peak it meets even when later moves made that unnecessary. Once
  // everything fits, put back on the device (largest first) every buffer that still fits there, whole.
  void restore_what_fits(LiveProfile& live, Result& res, int64_t budget) const {
    std::vector<size_t> moved;
    for (size_t i = 0; i < res.choices.size(); ++i)
      if (res.choices[i].offloaded) moved.push_back(i);
    std::stable_sort(moved.begin(), moved.end(),
                     [&](size_t a, size_t b) { return p_.buffers[a].bytes > p_.buffers[b].bytes; });
    for (size_t i : moved) {
      Choice& c = res.choices[i];
      const Buffer& b = p_.buffers[i];
      remove_current(live, b, c);
      add_base(live, b, 1);
      if (live.max() <= budget) {
        c = Choice{};
        continue;
      }
      add_base(live, b, -1);
      for (const auto& r : c.residencies) live.add(r.from, r.until, static_cast<int64_t>(b.bytes));
    }
  }

  // Moves `b`'s bytes in the profile from the residencies `was` to `now`, only where they differ: a move changes
  // one or two residencies of a buffer, but a weight read at thousands of steps has thousands of them (re-adding them
  // all made 15,000 nodes take 25 million additions). The profile ends the same either way.
  static void move_residencies(LiveProfile& live, const Buffer& b, const std::vector<Residency>& was,
                               const std::vector<Residency>& now) {
    auto same = [](const Residency& x, const Residency& y) { return x.from == y.from && x.until == y.until; };
    size_t head = 0, tail = 0;
    while (head < was.size() && head < now.size() && same(was[head], now[head])) ++head;
    while (tail < was.size() - head && tail < now.size() - head &&
           same(was[was.size() - 1 - tail], now[now.size() - 1 - tail]))
      ++tail;
    const auto bytes = static_cast<int64_t>(b.bytes);
    for (size_t i = head; i + tail < was.size(); ++i) live.add(was[i].from, was[i].until, -bytes);
    for (size_t i = head; i + tail < now.size(); ++i) live.add(now[i].from, now[i].until, bytes);
  }

  void remove_current(LiveProfile& live, const Buffer& b, const Choice& c) const {
    if (!c.offloaded) {
      add_base(live, b, -1);
      return;
    }
    for (const auto& r : c.residencies) live.add(r.from, r.until, -static_cast<int64_t>(b.bytes));
  }

  bool on_device(const Buffer& b, const Choice& c, int t) const {
    if (!c.offloaded) return b.weight || (b.uses.front() <= t && t <= b.uses.back());
    return covered(c.residencies, t);
  }

  int64_t residency_length(const Buffer& b, const Choice& c) const {
    if (!c.offloaded) return b.weight ? steps_ : b.uses.back() - b.uses.front() + 1;
    int64_t n = 0;
    for (const auto& r : c.residencies) n += r.until - r.from + 1;
    return n;
  }

  int64_t freed_length(const Buffer& b, const Choice& c, const std::vector<Residency>& next) const {
    int64_t n = 0;
    for (const auto& r : next) n += r.until - r.from + 1;
    return residency_length(b, c) - n;
  }

  // No reader made to wait; then fewer copies per byte freed; then the smallest buffer that alone brings the peak under
  // the budget, else the largest; then the longest freed; the index order (the caller's) breaks the rest.
  static bool better(const Buffer& a, int a_copies, bool a_late, int64_t a_free, const Buffer& b, int b_copies,
                     bool b_late, int64_t b_free, int64_t over) {
    if (a_late != b_late) return !a_late;
    // copies / bytes compared without division.
    const long double a_cost = static_cast<long double>(a_copies) * b.bytes;
    const long double b_cost = static_cast<long double>(b_copies) * a.bytes;
    if (a_cost != b_cost) return a_cost < b_cost;
    const bool a_enough = static_cast<int64_t>(a.bytes) >= over, b_enough = static_cast<int64_t>(b.bytes) >= over;
    if (a_enough != b_enough) return a_enough;
    if (a.bytes != b.bytes) return a_enough ? a.bytes < b.bytes : a.bytes > b.bytes;
    return a_free > b_free;
  }

  void collect_transfers(Result& res) const {
    for (size_t i = 0; i < res.choices.size(); ++i) {
      const Choice& c = res.choices[i];
      if (!c.offloaded) continue;
      const Buffer& b = p_.buffers[i];
      if (c.copy_out_after >= 0)
        res.transfers.push_back({static_cast<int>(i), false, c.copy_out_after, c.residencies.front().until, b.bytes});
      for (const auto& r : c.residencies)
        if (r.copy_in) res.transfers.push_back({static_cast<int>(i), true, r.from, r.first_use, b.bytes});
    }
    std::sort(res.transfers.begin(), res.transfers.end(), [](const Transfer& a, const Transfer& b) {
      if (a.issued_at != b.issued_at) return a.issued_at < b.issued_at;
      if (a.to_device != b.to_device) return !a.to_device;  // copy-outs (issued after a step) first
      return a.buffer < b.buffer;
    });
    for (const auto& x : res.transfers) res.bytes_moved += x.bytes;
  }

  // One compute stream running the steps in order, one copy stream per direction. A copy-in is issued when the
  // compute stream reaches its `from` step and must be done before its first use runs; a copy-out is issued after
  // its producer and must be done before the step after the one its device copy is held through.
  void simulate(Result& res) const {
    std::vector<std::vector<const Transfer*>> issue_in(steps_), issue_out(steps_), need(steps_ + 1);
    for (const auto& x : res.transfers) {
      if (x.to_device) {
        issue_in[x.issued_at].push_back(&x);
        need[x.needed_by].push_back(&x);
      } else {
        issue_out[x.issued_at].push_back(&x);
        need[x.needed_by + 1].push_back(&x);
      }
    }
    std::vector<double> done(res.transfers.size(), 0);
    auto index = [&](const Transfer* x) { return static_cast<size_t>(x - res.transfers.data()); };
    double now = 0, in_free = 0, out_free = 0;
    for (int t = 0; t < steps_; ++t) {
      for (const Transfer* x : issue_in[t]) {
        in_free = std::max(in_free, now) + static_cast<double>(x->bytes) / p_.bytes_per_us;
        done[index(x)] = in_free;
      }
      for (const Transfer* x : need[t]) now = std::max(now, done[index(x)]);
      now += p_.step_us[t];
      res.compute_us += p_.step_us[t];
      for (const Transfer* x : issue_out[t]) {
        out_free = std::max(out_free, now) + static_cast<double>(x->bytes) / p_.bytes_per_us;
        done[index(x)] = out_free;
      }
    }
    res.estimated_us = now;
  }

  // The buffers a move at program counter t must weigh, in index order (the scan's tie order): every buffer that
  // can be on the device at t and be freed there one by one, except the weights not offloaded whose whole-run
  // residency does not reach t. Those all free the same way (one copy, on time, the same length whatever t is), so
  // only the best of them can win: the largest, then the longest freed, then the first; kept in that order. A move
  // scanned every buffer before (moves x buffers: a 10,000-node transformer took 6 s to offload to 20 MiB).
  class Candidates {
   public:
    explicit Candidates(const Chooser& chooser)
        : c_(chooser), spans_(spans_of(chooser)), by_rank_([this](int a, int b) { return ranks_before(a, b); }) {
      const auto& buffers = c_.p_.buffers;
      span_.assign(buffers.size(), {1, 0});
      free_.assign(buffers.size(), 0);
      for (size_t i = 0; i < buffers.size(); ++i) {
        const Buffer& b = buffers[i];
        if (!b.weight || !b.offloadable || b.bytes == 0) continue;
        if (b.uses.empty()) {
          never_read_.push_back(static_cast<int>(i));
          continue;
        }
        const Residency r = c_.whole_weight(b);
        span_[i] = {r.from, r.until};
        free_[i] = c_.freed_length(b, Choice{}, {r});
        by_rank_.insert(static_cast<int>(i));
      }
    }
    void at(int t, const std::vector<Choice>& choices, std::vector<int>& out) const {
      out.clear();
      spans_.holding(t, out);
      for (int i : never_read_)
        if (!choices[static_cast<size_t>(i)].offloaded) out.push_back(i);
      for (int i : by_rank_) {
        const auto [from, until] = span_[static_cast<size_t>(i)];
        if (t < from || t > until) {  // (one holding t is among those held above)
          out.push_back(i);
          break;
        }
      }
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
    }
    void offloaded(int i) { by_rank_.erase(i); }

   private:
    // Where each buffer can be on the device: a weight from its whole-run copy-in's start to its last use (every
    // residency it is given lies there), an activation from its producer to its last reader.
    static SpanIndex spans_of(const Chooser& c) {
      std::vector<SpanIndex::Span> spans;
      for (size_t i = 0; i < c.p_.buffers.size(); ++i) {
        const Buffer& b = c.p_.buffers[i];
        if (b.uses.empty()) continue;
        const int start = b.weight ? c.whole_weight(b).from : b.uses.front();
        spans.push_back({start, b.uses.back(), static_cast<int>(i)});
      }
      return SpanIndex(std::move(spans));
    }
    bool ranks_before(int a, int b) const {
      const Buffer &x = c_.p_.buffers[static_cast<size_t>(a)], &y = c_.p_.buffers[static_cast<size_t>(b)];
      if (x.bytes != y.bytes) return x.bytes > y.bytes;
      if (free_[static_cast<size_t>(a)] != free_[static_cast<size_t>(b)])
        return free_[static_cast<size_t>(a)] > free_[static_cast<size_t>(b)];
      return a < b;
    }
    const Chooser& c_;
    SpanIndex spans_;
    std::vector<std::pair<int, int>> span_;                 // a weight's whole-run residency [from, until]
    std::vector<int64_t> free_;                             // ... and what offloading it whole frees
    std::vector<int> never_read_;                           // weights nothing reads
    std::set<int, std::function<bool(int, int)>> by_rank_;  // weights not offloaded, best first
  };

  const Problem& p_;
  int steps_;
  std::vector<double> start_;  // start_[t]: when step t starts with no transfers (prefix sums of step_us)
};

}  // namespace

Result choose_offload(const Problem& problem) {
  return Chooser(problem).run();
}

uint64_t smallest_fitting_budget(Problem problem, uint64_t granularity) {
  granularity = std::max<uint64_t>(granularity, 1);
  problem.budget = std::numeric_limits<uint64_t>::max();
  const Result none = choose_offload(problem);
  // Below what the buffers used at one step take together, no choice fits.
  std::vector<uint64_t> used(problem.step_us.size(), 0);
  for (const auto& b : problem.buffers)
    for (int u : b.uses) used[u] += b.bytes;
  uint64_t lo = used.empty() ? 0 : *std::max_element(used.begin(), used.end());
  uint64_t hi = none.peak;
  if (lo >= hi) return hi;
  // Invariant: hi fits; below lo nothing does.
  while (hi - lo > granularity) {
    const uint64_t mid = lo + (hi - lo) / 2;
    problem.budget = mid;
    if (choose_offload(problem).fits)
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

}  // namespace memplan::offload
