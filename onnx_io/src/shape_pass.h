// Internal to onnx_io/: completes static shapes after ONNX's own inference by evaluating the constant
// integer subgraphs that compute shapes at run time, feeding the results back and re-running inference
// until nothing changes.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>

#include "memplan/onnx_io/const_eval.h"

namespace memplan::onnx_io {

struct ShapePassReport {
  int rounds = 0;           // inference runs
  int evaluated_nodes = 0;  // nodes whose outputs memplan computed as constants
  // Values whose size cannot be static, with the reason (data-dependent ops and their kin).
  std::map<std::string, std::string> dynamic;
  std::vector<std::string> warnings;
};

// On return the model's value_info (main graph and subgraphs) holds every shape found. Node, initializer
// and weight data are left as they are. Throws Error(kBadInput) for a fault in the shape arithmetic.
// `trip_counts`: iterations of main-graph Loop nodes by name (--trip-count), where the model does not fix them.
ShapePassReport complete_shapes(onnx::ModelProto& model, const std::string& path, const EvalLimits& limits = {},
                                const std::map<std::string, int64_t>& trip_counts = {});

// Ops whose output size depends on the values flowing through them (NonZero, NonMaxSuppression, ..., and ONNX
// Runtime's Unique and RemovePadding).
bool data_dependent_op(const std::string& domain, const std::string& op_type);

// Node indices of a graph in a topological order, lowest index first among ready nodes; a node with a body comes
// after the producers of the outer values its body reads. Nodes on a cycle are left out (the graph builder reports
// the cycle). `listed`, where given, is set to listed_in_order(g), which this finds on the way.
std::vector<int> topological_order(const onnx::GraphProto& g, bool* listed = nullptr);

// Whether g's nodes are listed in a topological order (each read after its writer), found without a table of every
// node's outputs: most names are read by one of the few nodes after their writer (a chain, a block's residual) or are
// a graph input or an initializer; only the others are looked up. False for a node with a body (topological_order
// then decides). Exact for a file whose node outputs are each written once, the only kind the graph builder accepts.
bool listed_in_order(const onnx::GraphProto& g);

}  // namespace memplan::onnx_io
