// Loading an .onnx file into memplan's graph view. Weight bytes are never read: initializers in
// external data load fine when the data file is absent, and sizes come from dims and element types.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "memplan/graph.h"
#include "memplan/shape_view.h"

namespace memplan::onnx_io {

struct ShapeOverrides {
  std::map<std::string, int64_t> dims;                       // --dim NAME=VALUE (dim_param name)
  std::map<std::string, std::vector<int64_t>> input_shapes;  // --input-shape NAME=1x3x224x224
  // --trip-count NODE=N: the iterations to plan a Loop for where its count is known only at run time (an input, or
  // a condition that can end it early), so that its scan outputs (N slices) get a size.
  std::map<std::string, int64_t> trip_counts = {};
  // A dim name the model does not have is a usage error (a typo would leave the dim free). Set for defaults
  // applied across many models (test fixtures, sweeps over a zoo): then it is a warning.
  bool allow_unmatched_dims = false;
};

struct LoadOptions {
  ShapeOverrides overrides;
  bool infer_shapes = true;      // ONNX shape inference
  bool data_propagation = true;  // ... with ONNX's data propagation (ORT's load does less: ort_view_options)
  // ONNX's graph-level inference names the unknown dims it creates (unk__0, ...), so later values share them;
  // ORT's per-node inference leaves them anonymous, and an anonymous dim equals no other (ort_view_options).
  bool name_invented_dims = true;
  // memplan's shape pass on top: evaluate constant shape subgraphs and re-run inference to a fixed point.
  bool complete_shapes = true;
  // ONNX Runtime's load-time rewrites that run at every optimization level (duplicate Cast removal),
  // so the graph view is the graph ORT executes.
  bool ort_rewrites = true;
  // The channel block of ORT's NCHWc layout ops (16 on AVX-512 machines, 8 on AVX2); 0 reads it from the model.
  int nchwc_block_size = 0;
};

// Reads and parses the file and runs ONNX's shape inference (no data propagation), and nothing of memplan's: the
// floor the scale benchmark (scripts/bench-scale) judges a whole `memplan plan` against.
void parse_and_infer_only(const std::string& path);

// Tensor payloads (weights) larger than this are skipped unread while loading (default 512 KiB: more than the shape
// pass ever evaluates). The fuzzers lower it so that small inputs take the skipping path too.
void set_largest_payload_kept(uint64_t bytes);

// Throws Error(kBadInput) naming the file and what is wrong.
Model load_model(const std::string& path, const LoadOptions& options = {});

// ORT's view of a model's shapes (what load_model with ort_view_options would give its main graph's values), which
// a second child infers beside the one that loads the model: get() waits for it the first time. A failure of
// ORT's view is not an error: get() returns nullptr and error() says why.
class OrtShapes {
 public:
  // `infer` stops (throws) once the flag it is given is set.
  explicit OrtShapes(std::function<ShapeView(const std::atomic<bool>& cancel)> infer) : infer_(std::move(infer)) {}
  OrtShapes(const OrtShapes&) = delete;
  OrtShapes& operator=(const OrtShapes&) = delete;
  ~OrtShapes();
  // Starts get() on a thread of its own, so that the view is read while this thread goes on; dropped unfinished,
  // it is cancelled (the child killed), not waited for.
  void prefetch();
  const ShapeView* get();  // (any thread)
  std::string error();     // "" unless get() returned nullptr
  // The warning for a plan of `model` whose ORT figures had to use memplan's shapes ("" unless get() failed).
  std::string unread_warning(const std::string& model);

 private:
  std::mutex mutex_;
  std::function<ShapeView(const std::atomic<bool>&)> infer_;  // until it has run
  std::optional<ShapeView> shapes_;
  std::string error_;
  std::atomic<bool> cancel_{false};
  std::future<void> prefetched_;  // (last: destroyed, so waited for, first)
};

// The model (load_model) and ORT's view of its shapes, from one read of the file and two children side by side: the
// model comes back as soon as the first has it, ORT's view when the second has it, while this process goes on.
struct ModelAndOrtView {
  Model model;
  std::shared_ptr<OrtShapes> ort_shapes;  // never null
};
ModelAndOrtView load_model_and_ort_view(const std::string& path, const LoadOptions& options);

// The shapes ONNX Runtime knows when it loads the model, which decide its reuse and in-place choices: no --dim
// or --input-shape (dims given at run time are unknown then), ONNX inference without data propagation, no
// memplan shape pass, the dims inference invents left anonymous; ORT's load-time rewrites as in `user`.
LoadOptions ort_view_options(const LoadOptions& user);

// Loads the model, completes its shapes as load_model() does, and writes it to `out_path` with every
// inferred shape recorded as value_info (and the graph outputs' types completed). Initializers, and so
// external data references, are written exactly as read; weight data is never loaded.
void write_model_with_shapes(const std::string& path, const std::string& out_path, const LoadOptions& options);

// Writes the model with its main graph's nodes listed in a new order and nothing else changed (the same nodes, names,
// values, weights and their references, subgraphs, byte for byte): each node takes the place `position_by_output`
// gives the name of one of its outputs (the lowest). Constant nodes (initializers to ORT) go first; a node it names no
// output of (a Cast ORT removes at load) goes just before its first consumer. Weights are copied, not interpreted.
void write_model_with_node_order(const std::string& path, const std::string& out_path,
                                 const std::map<std::string, size_t>& position_by_output);

// Parse "NAME=VALUE" and "NAME=1x3x224x224" (also "NAME=1,3,224,224"); throw Error(kUsage).
std::pair<std::string, int64_t> parse_dim_override(const std::string& text);
std::pair<std::string, int64_t> parse_trip_count(const std::string& text);  // "NODE=N"
std::pair<std::string, std::vector<int64_t>> parse_input_shape(const std::string& text);

}  // namespace memplan::onnx_io
