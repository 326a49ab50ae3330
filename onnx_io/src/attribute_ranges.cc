#include "attribute_ranges.h"

#include <algorithm>
#include <optional>
#include <set>

namespace memplan::onnx_io {
namespace {

std::optional<int64_t> rank_of(const Graph& g, ValueId v) {
  if (v == kNoId || !g.values[v].has_shape) return std::nullopt;
  return static_cast<int64_t>(g.values[v].dims.size());
}

std::string range_text(int64_t lo, int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

// Where `axis` of a rank-r input may point: [-r, r-1]; Flatten also takes r (everything in the first factor).
std::string check_axis(const std::string& attr, int64_t value, int64_t lo, int64_t hi, const std::string& about) {
  if (value >= lo && value <= hi) return "";
  return "attribute " + attr + "=" + std::to_string(value) + " is outside " + range_text(lo, hi) + ", the axes of " +
         about;
}

}  // namespace

std::string attribute_range_fault(const Graph& g, const Node& n) {
  if (!n.domain.empty() && n.domain != "ai.onnx") return "";
  static const std::set<std::string> kAxisOfInput0 = {"Gather",  "GatherElements", "ScatterElements",
                                                      "Scatter", "Softmax",        "LogSoftmax",
                                                      "Hardmax", "Split",          "ArgMax",
                                                      "ArgMin",  "Compress",       "LpNormalization",
                                                      "TopK",    "Unique",         "LayerNormalization"};
  static const std::set<std::string> kAxesOfInput0 = {"ReduceSum",       "ReduceMean",      "ReduceMax", "ReduceMin",
                                                      "ReduceProd",      "ReduceL1",        "ReduceL2",  "ReduceLogSum",
                                                      "ReduceLogSumExp", "ReduceSumSquare", "Squeeze"};
  const std::optional<int64_t> r = n.inputs.empty() ? std::nullopt : rank_of(g, n.inputs[0]);
  // Words for a message, made only when there is one (this runs on every node).
  auto input0 = [&]() -> std::string {
    return n.inputs.empty() || n.inputs[0] == kNoId
               ? std::string()
               : "its rank-" + std::to_string(r.value_or(0)) + " input '" + g.values[n.inputs[0]].name + "'";
  };
  const Attribute* axis = n.attribute("axis");
  if (axis && axis->kind == Attribute::Kind::kInt) {
    if (kAxisOfInput0.count(n.op_type) && r && *r > 0) {
      if (auto fault = check_axis("axis", axis->i, -*r, *r - 1, input0()); !fault.empty()) return fault;
    }
    if (n.op_type == "Flatten" && r)
      if (auto fault = check_axis("axis", axis->i, -*r, *r, input0()); !fault.empty()) return fault;
    if (n.op_type == "Concat") {
      std::optional<int64_t> cr;
      for (ValueId v : n.inputs)
        if (!cr) cr = rank_of(g, v);
      if (cr && *cr > 0)
        if (auto fault = check_axis("axis", axis->i, -*cr, *cr - 1, "its rank-" + std::to_string(*cr) + " inputs");
            !fault.empty())
          return fault;
    }
    if (n.op_type == "OneHot" && r)  // a new axis in the rank r+1 output
      if (auto fault = check_axis("axis", axis->i, -(*r + 1), *r,
                                  "its rank-" + std::to_string(*r + 1) + " output (the indices' rank plus one)");
          !fault.empty())
        return fault;
  }
  const Attribute* axes = n.attribute("axes");
  if (axes && axes->kind == Attribute::Kind::kInts && kAxesOfInput0.count(n.op_type) && r && *r > 0)
    for (int64_t a : axes->ints)
      if (auto fault = check_axis("axes", a, -*r, *r - 1, input0()); !fault.empty()) return fault;
  const Attribute* perm = n.attribute("perm");
  if (n.op_type == "Transpose" && perm && perm->kind == Attribute::Kind::kInts && r) {
    std::vector<int64_t> sorted = perm->ints;
    std::sort(sorted.begin(), sorted.end());
    bool permutation = static_cast<int64_t>(sorted.size()) == *r;
    for (size_t k = 0; permutation && k < sorted.size(); ++k) permutation = sorted[k] == static_cast<int64_t>(k);
    if (!permutation) {
      std::string list;
      for (int64_t p : perm->ints) list += (list.empty() ? "" : ",") + std::to_string(p);
      return "attribute perm=[" + list + "] is not a permutation of the " + std::to_string(*r) + " axes of " + input0();
    }
  }
  if (n.op_type == "GatherND" && n.inputs.size() >= 2) {
    const int64_t batch_dims = n.int_attribute("batch_dims", 0);
    const std::optional<int64_t> ri = rank_of(g, n.inputs[1]);
    if (r && ri && (batch_dims < 0 || batch_dims >= std::min(*r, *ri)))
      return "attribute batch_dims=" + std::to_string(batch_dims) + " is outside " +
             range_text(0, std::min(*r, *ri) - 1) + ": it must be less than the ranks of data (" + std::to_string(*r) +
             ") and indices (" + std::to_string(*ri) + ")";
  }
  return "";
}

}  // namespace memplan::onnx_io
