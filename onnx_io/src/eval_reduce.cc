// Ops that combine elements: the Reduce* family, ArgMax/ArgMin, CumSum, TopK, NonZero and Einsum.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "eval_support.h"

namespace memplan::onnx_io::eval {
namespace {

// The elements of `a` grouped by the output position a reduction over `axes` sends them to.
struct Groups {
  Dims kept_dims;  // the output dims with keepdims=1
  std::vector<std::vector<int64_t>> members;
};

Groups group_by(const Tensor& a, const std::vector<bool>& reduced) {
  Groups g;
  const int64_t rank = static_cast<int64_t>(a.dims.size());
  for (int64_t ax = 0; ax < rank; ++ax) g.kept_dims.push_back(reduced[ax] ? 1 : a.dims[ax]);
  g.members.resize(product(g.kept_dims));
  const Dims out_strides = strides_of(g.kept_dims);
  for (int64_t k = 0; k < a.size(); ++k) {
    Dims at = coords_of(k, a.dims);
    for (int64_t ax = 0; ax < rank; ++ax)
      if (reduced[ax]) at[ax] = 0;
    g.members[linear_of(at, out_strides)].push_back(k);
  }
  return g;
}

Dims output_dims(const Groups& g, const std::vector<bool>& reduced, bool keepdims) {
  if (keepdims) return g.kept_dims;
  Dims out;
  for (size_t ax = 0; ax < reduced.size(); ++ax)
    if (!reduced[ax]) out.push_back(g.kept_dims[ax]);
  return out;
}

enum class Fold { kSum, kSumSquare, kL1, kL2, kLogSum, kLogSumExp, kMean, kMax, kMin, kProd };

double fold_floats(Fold f, const std::vector<double>& v) {
  switch (f) {
    case Fold::kMax:
      return v.empty() ? -std::numeric_limits<double>::infinity() : *std::max_element(v.begin(), v.end());
    case Fold::kMin:
      return v.empty() ? std::numeric_limits<double>::infinity() : *std::min_element(v.begin(), v.end());
    case Fold::kProd:
      return std::accumulate(v.begin(), v.end(), 1.0, std::multiplies<double>());
    case Fold::kLogSumExp: {
      if (v.empty()) return -std::numeric_limits<double>::infinity();
      const double m = *std::max_element(v.begin(), v.end());
      if (!std::isfinite(m)) return m;
      double s = 0;
      for (double x : v) s += std::exp(x - m);
      return m + std::log(s);
    }
    default:
      break;
  }
  double s = 0;
  for (double x : v) s += f == Fold::kSumSquare || f == Fold::kL2 ? x * x : f == Fold::kL1 ? std::fabs(x) : x;
  if (f == Fold::kL2) return std::sqrt(s);
  if (f == Fold::kLogSum) return std::log(s);
  if (f == Fold::kMean) return s / static_cast<double>(v.size());
  return s;
}

int64_t fold_ints(Fold f, const std::vector<int64_t>& v) {
  switch (f) {
    case Fold::kMax:
      return v.empty() ? std::numeric_limits<int64_t>::min() : *std::max_element(v.begin(), v.end());
    case Fold::kMin:
      return v.empty() ? std::numeric_limits<int64_t>::max() : *std::min_element(v.begin(), v.end());
    case Fold::kProd: {
      int64_t p = 1;
      for (int64_t x : v) p = mul(p, x);
      return p;
    }
    case Fold::kSum:
    case Fold::kSumSquare:
    case Fold::kL1:
    case Fold::kMean: {
      int64_t s = 0;
      for (int64_t x : v) s = add(s, f == Fold::kSumSquare ? mul(x, x) : f == Fold::kL1 ? (x < 0 ? sub(0, x) : x) : x);
      if (f == Fold::kMean) return v.empty() ? 0 : s / static_cast<int64_t>(v.size());
      return s;
    }
    default: {  // L2, LogSum, LogSumExp on integers: computed in floating point, truncated
      std::vector<double> d(v.begin(), v.end());
      return static_cast<int64_t>(fold_floats(f, d));
    }
  }
}

// Which axes a reduction covers: the listed ones, all of them when none are listed (unless
// noop_with_empty_axes), or none.
std::vector<bool> reduced_axes(const Tensor& a, const std::optional<std::vector<int64_t>>& axes, bool noop) {
  const int64_t rank = static_cast<int64_t>(a.dims.size());
  if (!axes || axes->empty()) return std::vector<bool>(rank, !noop);
  std::vector<bool> reduced(rank, false);
  for (int64_t ax : *axes) reduced[normalize_axis(ax, rank)] = true;
  return reduced;
}

Result reduce(const Call& c, Fold fold) {
  const Tensor& a = *c.input(0);
  // Axes moved from an attribute to an input: ReduceSum at opset 13, the others at 18.
  const auto axes = c.axes(1, c.op == "ReduceSum" ? 13 : 18);
  const std::vector<bool> reduced = reduced_axes(a, axes, c.attrs.get("noop_with_empty_axes", 0) != 0);
  const Groups g = group_by(a, reduced);
  Tensor out = make(a.dtype, output_dims(g, reduced, c.attrs.get("keepdims", 1) != 0));
  for (size_t o = 0; o < g.members.size(); ++o) {
    if (a.is_float()) {
      std::vector<double> v;
      for (int64_t k : g.members[o]) v.push_back(a.floats[k]);
      set_float(out, static_cast<int64_t>(o), fold_floats(fold, v));
    } else {
      std::vector<int64_t> v;
      for (int64_t k : g.members[o]) v.push_back(a.ints[k]);
      set_int(out, static_cast<int64_t>(o), fold_ints(fold, v));
    }
  }
  return one(out);
}

Result arg_extreme(const Call& c, bool is_max) {
  const Tensor& a = *c.input(0);
  const int64_t rank = static_cast<int64_t>(a.dims.size());
  const int64_t axis = normalize_axis(c.attrs.get("axis", 0), rank);  // a scalar has no axis: EvalError
  const bool last = c.attrs.get("select_last_index", 0) != 0;
  std::vector<bool> reduced(rank, false);
  reduced[axis] = true;
  const Groups g = group_by(a, reduced);
  Tensor out = make(kInt64, output_dims(g, reduced, c.attrs.get("keepdims", 1) != 0));
  for (size_t o = 0; o < g.members.size(); ++o) {
    const auto& m = g.members[o];
    if (m.empty()) throw EvalError("ArgMax/ArgMin over an empty axis");
    size_t best = 0;
    for (size_t j = 1; j < m.size(); ++j) {
      const double x = a.at_f(m[j]), b = a.at_f(m[best]);
      const bool better = is_max ? x > b : x < b;
      if (better || (last && x == b)) best = j;
    }
    out.ints[o] = static_cast<int64_t>(best);
  }
  return one(out);
}

Result cum_sum(const Call& c) {
  if (!c.input(1)) return std::nullopt;
  const Tensor& a = *c.input(0);
  const int64_t rank = static_cast<int64_t>(a.dims.size());
  const int64_t axis = normalize_axis(c.input(1)->at_i(0), rank);
  const bool exclusive = c.attrs.get("exclusive", 0) != 0, reverse = c.attrs.get("reverse", 0) != 0;
  Tensor out = make(a.dtype, a.dims);
  const int64_t stride = strides_of(a.dims)[axis], n = a.dims[axis];
  for (int64_t k = 0; k < a.size(); ++k) {
    if ((k / stride) % n != 0) continue;  // start of a line along the axis
    double fs = 0;
    int64_t is = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t pos = k + (reverse ? n - 1 - j : j) * stride;
      if (!exclusive) {
        fs += a.at_f(pos);
        if (!a.is_float()) is = add(is, a.ints[pos]);
      }
      if (a.is_float())
        set_float(out, pos, fs);
      else
        set_int(out, pos, is);
      if (exclusive) {
        fs += a.at_f(pos);
        if (!a.is_float()) is = add(is, a.ints[pos]);
      }
    }
  }
  return one(out);
}

Result top_k(const Call& c) {
  const Tensor& a = *c.input(0);
  int64_t k;
  if (c.opset < 10) {
    k = c.attrs.get("k", -1);
  } else {
    if (!c.input(1)) return std::nullopt;
    k = c.input(1)->at_i(0);
  }
  const int64_t rank = static_cast<int64_t>(a.dims.size());
  const int64_t axis = normalize_axis(c.attrs.get("axis", -1), rank);
  if (k < 0 || k > a.dims[axis]) throw EvalError("TopK k is out of range for the axis");
  const bool largest = c.attrs.get("largest", 1) != 0;
  std::vector<bool> reduced(rank, false);
  reduced[axis] = true;
  const Groups g = group_by(a, reduced);
  Dims out_dims = a.dims;
  out_dims[axis] = k;
  if (!fits(out_dims, c.lim)) return std::nullopt;
  Tensor values = make(a.dtype, out_dims), indices = make(kInt64, out_dims);
  const int64_t stride = strides_of(out_dims)[axis];
  for (size_t o = 0; o < g.members.size(); ++o) {
    std::vector<int64_t> order(g.members[o].size());
    std::iota(order.begin(), order.end(), 0);
    const auto& m = g.members[o];
    // Ties keep the lower index first, as ONNX Runtime's kernel does.
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      const double vx = a.at_f(m[x]), vy = a.at_f(m[y]);
      return largest ? vx > vy : vx < vy;
    });
    // The group's first output position: its coords with the axis at 0.
    const int64_t base = linear_of(coords_of(static_cast<int64_t>(o), g.kept_dims), strides_of(out_dims));
    for (int64_t j = 0; j < k; ++j) {
      copy_element(values, base + j * stride, a, m[order[j]]);
      indices.ints[base + j * stride] = order[j];
    }
  }
  return std::vector<Tensor>{values, indices};
}

Result non_zero(const Call& c) {
  const Tensor& a = *c.input(0);
  if (a.dims.empty()) return std::nullopt;
  std::vector<int64_t> hits;
  for (int64_t k = 0; k < a.size(); ++k)
    if (a.at_f(k) != 0) hits.push_back(k);
  const int64_t rank = static_cast<int64_t>(a.dims.size()), n = static_cast<int64_t>(hits.size());
  if (!fits({rank, n}, c.lim)) return std::nullopt;
  Tensor out = make(kInt64, {rank, n});
  for (int64_t j = 0; j < n; ++j) {
    Dims at = coords_of(hits[j], a.dims);
    for (int64_t d = 0; d < rank; ++d) out.ints[d * n + j] = at[d];
  }
  return one(out);
}

// An Einsum equation resolved against its inputs' dims: every label (a letter, or one position of the
// broadcast ellipsis) with its size, each input's labels, and the output's.
struct EinsumPlan {
  std::vector<std::vector<int>> input_labels;
  std::vector<int> output_labels;
  std::map<int, int64_t> size;
};

constexpr int kEllipsisLabel = 1000;  // ellipsis position i (counted from the right) is 1000 + i

std::vector<std::string> split_terms(const std::string& lhs) {
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const auto comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return terms;
    start = comma + 1;
  }
}

// The labels of one term; `ellipsis` is how many dims its "..." stands for.
std::vector<int> parse_term(const std::string& term, int64_t ellipsis) {
  std::vector<int> labels;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      for (int64_t e = ellipsis; e-- > 0;) labels.push_back(kEllipsisLabel + static_cast<int>(e));
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(term[i])))
      throw EvalError(std::string("Einsum equation has an invalid character '") + term[i] + "'");
    labels.push_back(term[i]);
  }
  return labels;
}

EinsumPlan plan_einsum(std::string eq, const std::vector<Dims>& inputs) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const auto arrow = eq.find("->");
  const std::vector<std::string> terms = split_terms(eq.substr(0, arrow));
  if (terms.size() != inputs.size())
    throw EvalError("Einsum equation names " + std::to_string(terms.size()) + " inputs, the node has " +
                    std::to_string(inputs.size()));
  EinsumPlan p;
  int64_t widest_ellipsis = 0;
  std::map<int, int> terms_with;
  for (size_t j = 0; j < inputs.size(); ++j) {
    const std::string& term = terms[j];
    const int64_t rank = static_cast<int64_t>(inputs[j].size());
    const bool has_dots = term.find("...") != std::string::npos;
    const int64_t letters = static_cast<int64_t>(term.size()) - (has_dots ? 3 : 0);
    const int64_t ellipsis = has_dots ? rank - letters : 0;
    if (ellipsis < 0 || (!has_dots && letters != rank))
      throw EvalError("Einsum term '" + term + "' does not match an input of rank " + std::to_string(rank));
    widest_ellipsis = std::max(widest_ellipsis, ellipsis);
    p.input_labels.push_back(parse_term(term, ellipsis));
    for (size_t d = 0; d < inputs[j].size(); ++d) {
      const int64_t dim = inputs[j][d];
      auto [it, fresh] = p.size.emplace(p.input_labels[j][d], dim);
      if (fresh || it->second == dim || dim == 1) continue;
      if (it->second != 1)
        throw EvalError("Einsum label sizes disagree (" + std::to_string(it->second) + " vs " + std::to_string(dim) +
                        ")");
      it->second = dim;  // broadcast from 1
    }
    for (int l : std::set<int>(p.input_labels[j].begin(), p.input_labels[j].end())) ++terms_with[l];
  }
  if (arrow != std::string::npos) {
    p.output_labels = parse_term(eq.substr(arrow + 2), widest_ellipsis);
    for (int l : p.output_labels)
      if (!p.size.count(l))
        throw EvalError("Einsum output label '" + std::string(1, static_cast<char>(l)) + "' is not an input label");
  } else {  // implicit output: the ellipsis, then the labels used once, in alphabetical order
    for (int64_t e = widest_ellipsis; e-- > 0;) p.output_labels.push_back(kEllipsisLabel + static_cast<int>(e));
    for (const auto& [label, n] : terms_with)
      if (label < kEllipsisLabel && n == 1) p.output_labels.push_back(label);
  }
  return p;
}

Result einsum(const Call& c) {
  std::vector<Dims> dims;
  for (const Tensor* t : c.in) {
    if (!t) return std::nullopt;
    dims.push_back(t->dims);
  }
  const EinsumPlan p = plan_einsum(c.attrs.get_string("equation", ""), dims);
  // Every label in one index space: the output's first, then the summed ones.
  std::vector<int> labels = p.output_labels;
  for (const auto& [label, n] : p.size)
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
  Dims out_dims, all;
  for (int l : p.output_labels) out_dims.push_back(p.size.at(l));
  for (int l : labels) all.push_back(p.size.at(l));
  if (!fits(out_dims, c.lim)) return std::nullopt;
  const int64_t out_size = product(out_dims);
  const int64_t summed = product(Dims(all.begin() + static_cast<int64_t>(out_dims.size()), all.end()));
  if (out_size > 0 && summed > c.lim.max_elements * 64 / out_size) return std::nullopt;  // bounded work
  Tensor out = make(c.in[0]->dtype, out_dims);
  // Per input: for each of its dims, the position of its label in `labels`.
  std::vector<std::vector<size_t>> where(c.in.size());
  std::vector<Dims> strides;
  for (size_t j = 0; j < c.in.size(); ++j) {
    for (int l : p.input_labels[j])
      where[j].push_back(static_cast<size_t>(std::find(labels.begin(), labels.end(), l) - labels.begin()));
    strides.push_back(strides_of(dims[j]));
  }
  const bool floats = out.is_float();
  for (int64_t o = 0; o < out_size; ++o) {
    double fs = 0;
    int64_t is = 0;
    for (int64_t s = 0; s < summed; ++s) {
      const Dims at = coords_of(o * summed + s, all);
      double fp = 1;
      int64_t ip = 1;
      for (size_t j = 0; j < c.in.size(); ++j) {
        int64_t src = 0;
        for (size_t d = 0; d < where[j].size(); ++d)
          if (dims[j][d] != 1) src += at[where[j][d]] * strides[j][d];
        if (floats)
          fp *= c.in[j]->at_f(src);
        else
          ip = mul(ip, c.in[j]->ints[src]);
      }
      if (floats)
        fs += fp;
      else
        is = add(is, ip);
    }
    if (floats)
      set_float(out, o, fs);
    else
      set_int(out, o, is);
  }
  return one(out);
}

}  // namespace

void add_reduction_ops(Table& t) {
  const std::pair<const char*, Fold> folds[] = {{"ReduceSum", Fold::kSum},       {"ReduceSumSquare", Fold::kSumSquare},
                                                {"ReduceL1", Fold::kL1},         {"ReduceL2", Fold::kL2},
                                                {"ReduceLogSum", Fold::kLogSum}, {"ReduceLogSumExp", Fold::kLogSumExp},
                                                {"ReduceMean", Fold::kMean},     {"ReduceMax", Fold::kMax},
                                                {"ReduceMin", Fold::kMin},       {"ReduceProd", Fold::kProd}};
  for (const auto& [name, fold] : folds) t[name] = [fold = fold](const Call& c) { return reduce(c, fold); };
  t["ArgMax"] = [](const Call& c) { return arg_extreme(c, true); };
  t["ArgMin"] = [](const Call& c) { return arg_extreme(c, false); };
  t["CumSum"] = cum_sum;
  t["TopK"] = top_k;
  t["NonZero"] = non_zero;
  t["Einsum"] = einsum;
}

}  // namespace memplan::onnx_io::eval

namespace memplan::onnx_io {

std::vector<int64_t> einsum_output_dims(const std::string& equation, const std::vector<std::vector<int64_t>>& inputs) {
  const eval::EinsumPlan p = eval::plan_einsum(equation, inputs);
  std::vector<int64_t> out;
  for (int l : p.output_labels) out.push_back(p.size.at(l));
  return out;
}

}  // namespace memplan::onnx_io
