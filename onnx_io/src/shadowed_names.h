// Internal to onnx_io/: names a subgraph defines that an enclosing graph defines too. ONNX forbids them, but ONNX
// Runtime's function inlining makes them (a function inlined in the main graph and in an If branch gets the same
// prefix in each, since each graph names its own nodes), and ONNX 1.12's inference then types the outer value for
// the subgraph's and leaves the subgraph's unknown. Inference runs with such names made unique, put back after.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <vector>

namespace memplan::onnx_io {

// Renames every subgraph value whose name an enclosing graph defines (with its uses inside that subgraph) to a name
// no model has; returns whether any was renamed. Models without such names are left untouched.
bool make_shadowed_names_unique(onnx::GraphProto& main);

// Puts the names back everywhere in the subgraphs (inputs, outputs, value_info, nodes), and in `by_name`'s keys.
void restore_shadowed_names(onnx::GraphProto& main, std::map<std::string, std::string>& by_name);

// A name as it was before make_shadowed_names_unique; a text (a warning) with every such name in it put back.
std::string original_name(const std::string& name);
std::string without_unique_marks(std::string text);

}  // namespace memplan::onnx_io
