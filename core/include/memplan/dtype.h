// Element types, numbered as ONNX's TensorProto.DataType so values read from a model need no mapping.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace memplan {

using DType = int32_t;  // ONNX TensorProto.DataType; 0 = not known

inline constexpr DType kDTypeUndefined = 0;
inline constexpr DType kDTypeFloat = 1;
inline constexpr DType kDTypeInt64 = 7;
inline constexpr DType kDTypeString = 8;
inline constexpr DType kDTypeBool = 9;
inline constexpr DType kDTypeLast = 23;  // FLOAT4E2M1, the newest type ONNX defines

// What kind of number an element type holds: the groups ORT's rules and memplan's evaluators tell apart.
enum class DTypeClass {
  kNone,            // undefined, or past the table
  kBool,            // bool
  kInteger,         // int8 to int64, uint8 to uint64
  kSubByteInteger,  // int4, uint4 (two per byte)
  kFloat,           // float, double
  kHalfFloat,       // float16, bfloat16
  kFloat8,          // the four float8 types
  kFloat4,          // float4e2m1
  kComplex,         // complex64, complex128
  kString,          // string
};

bool dtype_is_known(DType t);
DTypeClass dtype_class(DType t);
// Any floating-point type: kFloat, kHalfFloat, kFloat8 or kFloat4.
bool dtype_is_float(DType t);
// Bits per element; 4 for the packed sub-byte types. std::nullopt for strings and unknown types.
std::optional<int> dtype_bits(DType t);
std::string_view dtype_name(DType t);  // "float", "int64", ... ; "undefined" for 0, "unknown" past the table

// Bytes needed for `elements` elements of type t (sub-byte types pack two per byte).
// Strings count as ORT allocates them: one std::string object (32 bytes) per element.
// std::nullopt when the type has no fixed size or the product overflows 64 bits.
std::optional<uint64_t> dtype_bytes(DType t, uint64_t elements);

}  // namespace memplan
