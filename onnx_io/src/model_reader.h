// Internal to onnx_io/: reading a model file without its weights. memplan needs a tensor's dims and element type,
// never its contents beyond small shape constants, so the payload of every large tensor (initializers, Constant
// values, sparse tensors, in the graph, its subgraphs and functions) is skipped while reading — a model with 1.5 GiB
// of inline weights costs what its graph costs.
#pragma once

#include <cstdint>
#include <string>

namespace memplan::onnx_io {

// Payloads up to largest_payload_kept() bytes are kept (default: the shape pass evaluates tensors of at most 2^16
// elements, const_eval.h, which never take more than 8 bytes each); load.h can lower it for the fuzzers.
uint64_t largest_payload_kept();

struct ModelBytes {
  std::string bytes;             // a ModelProto: the file's fields in order, large payloads left out
  int64_t tensors_left_out = 0;  // their tensors are marked as external data (data_location EXTERNAL)
  uint64_t bytes_left_out = 0;
};

// Reads `path` ("-": stdin) with read_file()'s checks, skipping large payloads without reading them. Throws
// Error(kBadInput) naming the file when it is not an ONNX model (protobuf wire format broken or truncated).
ModelBytes read_model_without_weights(const std::string& path);

// The same on bytes in memory (`path` names them in errors).
ModelBytes strip_weights(const std::string& bytes, const std::string& path);

// Whether `bytes`, which protobuf refused, is a model whose messages nest deeper than protobuf's limit (100 levels,
// which ONNX Runtime's loader keeps too), rather than a broken one.
bool nests_too_deep(const std::string& bytes);
// The error for such a model.
[[noreturn]] void fail_too_deep(const std::string& path);

}  // namespace memplan::onnx_io
