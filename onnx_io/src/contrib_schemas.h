// ONNX Runtime's own operators (com.microsoft, com.microsoft.nchwc, and the ONNX-domain ops it adds at opset 1)
// as schemas in libonnx's registry, so that ONNX's shape inference sizes the graphs ORT's optimizers write. Each
// rule gives the shapes ORT's CPU kernels produce (checked op by op against ORT: tests/interop/make_contrib_models.py).
#pragma once

#include <onnx/onnx_pb.h>

namespace memplan::onnx_io {

// Registers the schemas once per process; later calls do nothing. Call before anything looks up a schema.
void register_ort_contrib_schemas();

// The channel block of ORT's NCHWc layout (ReorderInput pads channels to it): 16 where ORT ran on AVX-512, 8 on
// AVX2. `requested` > 0 is used as given; 0 reads it from the model: 16 when every NCHWc Conv's (padded) output
// channel count is a multiple of 16, else 8.
int nchwc_block_size_for(const onnx::ModelProto& model, int requested);

// The block size ReorderInput's shape rule uses from now on (in this process and children forked later).
void set_nchwc_block_size(int block);

}  // namespace memplan::onnx_io
