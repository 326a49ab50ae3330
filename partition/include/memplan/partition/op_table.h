// Per-op memory facts (alias, in-place, CPU-memory inputs and outputs) by provider and opset range:
// one data table shipped with memplan (data/op_properties.json), extendable by the user. The
// placement, the copy insertion and the planner all read it.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memplan::partition {

struct OpFacts {
  std::vector<std::pair<int, int>> alias;             // (input, output): output must share input's buffer
  std::optional<std::pair<int, int>> variadic_alias;  // (input offset, output offset)
  std::vector<std::pair<int, int>> may_inplace;       // (input, output): output may take input's buffer
  std::vector<int> may_inplace_types;                 // empty: any element type
  std::vector<int> cpu_inputs;                        // inputs read from CPU memory on this provider
  std::vector<int> cpu_outputs;                       // outputs written to CPU memory
  bool external_outputs = false;
  bool has_kernel = true;

  bool is_cpu_input(int k) const;
  bool is_cpu_output(int k) const;
};

struct OpEntry {
  std::string op;
  std::string domain;  // "" = ai.onnx
  std::vector<std::string> providers;
  int since = 1;
  int until = 1 << 30;
  // Each field set only if the entry names it.
  std::optional<std::vector<std::pair<int, int>>> alias, may_inplace;
  std::optional<std::pair<int, int>> variadic_alias;
  std::optional<std::vector<int>> may_inplace_types, cpu_inputs, cpu_outputs;
  std::optional<bool> external_outputs, kernel;
};

class OpTable {
 public:
  // The table shipped with memplan.
  static OpTable builtin();
  // Appends the entries of a user file (same format); they override earlier facts. Throws
  // Error(kBadInput) naming the file and the entry on a malformed file.
  void extend_from_json(const std::string& text, const std::string& source);
  // Facts for an op at an opset on a provider ("cpu", "cuda").
  OpFacts lookup(const std::string& op, const std::string& domain, int opset, const std::string& provider) const;
  size_t size() const { return entries_.size(); }

 private:
  std::vector<OpEntry> entries_;
  // Entry indices by op name, ascending (the order lookup applies them in): a lookup per node of a 1M-node graph
  // reads only its op's few entries.
  std::unordered_map<std::string, std::vector<size_t>> by_op_;
};

}  // namespace memplan::partition
