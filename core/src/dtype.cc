#include "memplan/dtype.h"

#include <array>

namespace memplan {
namespace {

struct DTypeInfo {
  std::string_view name;
  int bits;  // 0: no fixed size
};

// Indexed by TensorProto.DataType.
constexpr std::array<DTypeInfo, kDTypeLast + 1> kTable = {{
    {"undefined", 0},      {"float", 32},    {"uint8", 8},        {"int8", 8},           {"uint16", 16},
    {"int16", 16},         {"int32", 32},    {"int64", 64},       {"string", 0},         {"bool", 8},
    {"float16", 16},       {"double", 64},   {"uint32", 32},      {"uint64", 64},        {"complex64", 64},
    {"complex128", 128},   {"bfloat16", 16}, {"float8e4m3fn", 8}, {"float8e4m3fnuz", 8}, {"float8e5m2", 8},
    {"float8e5m2fnuz", 8}, {"uint4", 4},     {"int4", 4},         {"float4e2m1", 4},
}};

// ORT keeps string tensors as arrays of std::string; 32 bytes each with libstdc++ on 64-bit.
constexpr uint64_t kStringObjectBytes = 32;

}  // namespace

bool dtype_is_known(DType t) {
  return t > 0 && t <= kDTypeLast;
}

std::optional<int> dtype_bits(DType t) {
  if (!dtype_is_known(t) || kTable[t].bits == 0) return std::nullopt;
  return kTable[t].bits;
}

std::string_view dtype_name(DType t) {
  if (t >= 0 && t <= kDTypeLast) return kTable[t].name;
  return "unknown";
}

std::optional<uint64_t> dtype_bytes(DType t, uint64_t elements) {
  uint64_t bytes = 0;
  if (t == kDTypeString) {
    if (__builtin_mul_overflow(elements, kStringObjectBytes, &bytes)) return std::nullopt;
    return bytes;
  }
  auto bits = dtype_bits(t);
  if (!bits) return std::nullopt;
  if (*bits < 8) return elements / 2 + elements % 2;  // two 4-bit elements per byte
  if (__builtin_mul_overflow(elements, static_cast<uint64_t>(*bits / 8), &bytes)) return std::nullopt;
  return bytes;
}

}  // namespace memplan
