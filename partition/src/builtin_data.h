#pragma once

namespace memplan::partition {
extern const char* const kBuiltinOpProperties;   // data/op_properties.json
extern const char* const kBuiltinCudaPlacement;  // data/placement/cuda.json
}  // namespace memplan::partition
