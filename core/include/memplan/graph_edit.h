// Edits of a graph view that keep its invariants: value indices in ONNX Runtime's order, producers and
// consumers up to date. Stages that change the graph (ORT's load-time rewrites, copy-node insertion)
// work on a copy and call these.
#pragma once

#include <vector>

#include "memplan/graph.h"

namespace memplan {

// Recomputes value indices in ORT's OrtValue order, Value::producer, consumers and implicit consumers,
// and value_by_name. Values nothing references any more are dropped.
void renumber_values(Graph& graph);

// Removes the marked nodes, renumbers the remaining ones (keeping their relative order) and the values.
void remove_nodes(Graph& graph, const std::vector<bool>& removed);

// Appends a value (not yet referenced) and returns its id; call renumber_values() after the edit.
ValueId add_value(Graph& graph, Value value);

// ONNX Runtime's RemoveDuplicateCastTransformer, which runs at load at every optimization level: a Cast
// followed by Cast(s) back to its input type is removed with them when no precision is lost and no graph
// output is involved. Returns how many nodes were removed.
int remove_duplicate_casts(Graph& graph);

}  // namespace memplan
