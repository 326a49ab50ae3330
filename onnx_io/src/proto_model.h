// Internal to onnx_io/: the protobuf-facing steps of loading, kept apart so each can be tested.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_set>
#include <vector>

#include "memplan/graph.h"
#include "memplan/onnx_io/load.h"

namespace memplan::onnx_io {

// Parses and checks the container: non-empty, a valid ModelProto with a graph.
onnx::ModelProto parse_model(const std::string& path, const std::string& bytes);

// The declared types apply_overrides changed, as they were written: the loader applies the user's overrides before it
// forks the child that infers ORT's view (which must not see them), and that child puts the originals back. Each
// original is a fresh object swapped into its list: writing the changed ones back would copy every page they lie on,
// which the parent shares with the child (0.6 s for 100k graph outputs). Points into the model it was made on.
class OverriddenTypes {
 public:
  // Notes `field[index]` as it is now, before its first change.
  void note(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* field, int index);
  // Swaps the originals in (the changed ones kept aside) ...
  void put_back();
  // ... and the changed ones back again (a copy of the model as written was made in between).
  void restore_changes();

 private:
  struct Entry {
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* field;
    int index;
    std::string original;  // serialised
    onnx::ValueInfoProto* aside = nullptr;
  };
  std::vector<Entry> entries_;
  std::unordered_set<const onnx::ValueInfoProto*> noted_;  // each is noted once
};

// Applies --dim and --input-shape to the model's declared types (main graph and subgraphs). Returns warnings (e.g. a
// --dim name that no value uses). `changed`: where the types it changes are noted first.
std::vector<std::string> apply_overrides(onnx::ModelProto& model, const ShapeOverrides& overrides,
                                         const std::string& path, OverriddenTypes* changed = nullptr);

// "node 'NAME' (OpType)", or "node #POSITION (OpType)" for a node without a name; names escaped for a terminal.
std::string describe_node(const onnx::NodeProto& n, int position);

// Builds the graph view from a (shape-inferred) model. Throws Error(kBadInput) for structural faults.
Model build_model(const onnx::ModelProto& proto, const std::string& path);

}  // namespace memplan::onnx_io
