#include "memplan/dtype.h"

#include <array>

namespace memplan {
namespace {

struct DTypeInfo {
  std::string_view name;
  int bits;  // 0: no fixed size
  DTypeClass kind;
};

using C = DTypeClass;
// Indexed by TensorProto.DataType.
constexpr std::array<DTypeInfo, kDTypeLast + 1> kTable = {{
    {"undefined", 0, C::kNone},        {"float", 32, C::kFloat},
    {"uint8", 8, C::kInteger},         {"int8", 8, C::kInteger},
    {"uint16", 16, C::kInteger},       {"int16", 16, C::kInteger},
    {"int32", 32, C::kInteger},        {"int64", 64, C::kInteger},
    {"string", 0, C::kString},         {"bool", 8, C::kBool},
    {"float16", 16, C::kHalfFloat},    {"double", 64, C::kFloat},
    {"uint32", 32, C::kInteger},       {"uint64", 64, C::kInteger},
    {"complex64", 64, C::kComplex},    {"complex128", 128, C::kComplex},
    {"bfloat16", 16, C::kHalfFloat},   {"float8e4m3fn", 8, C::kFloat8},
    {"float8e4m3fnuz", 8, C::kFloat8}, {"float8e5m2", 8, C::kFloat8},
    {"float8e5m2fnuz", 8, C::kFloat8}, {"uint4", 4, C::kSubByteInteger},
    {"int4", 4, C::kSubByteInteger},   {"float4e2m1", 4, C::kFloat4},
}};
static_assert(kTable[kDTypeFloat].kind == C::kFloat && kTable[kDTypeInt64].bits == 64 &&
              kTable[kDTypeString].kind == C::kString && kTable[kDTypeBool].kind == C::kBool);

// ORT keeps string tensors as arrays of std::string; 32 bytes each with libstdc++ on 64-bit.
constexpr uint64_t kStringObjectBytes = 32;

}  // namespace

bool dtype_is_known(DType t) {
  return t > 0 && t <= kDTypeLast;
}

DTypeClass dtype_class(DType t) {
  return dtype_is_known(t) ? kTable[t].kind : DTypeClass::kNone;
}

bool dtype_is_float(DType t) {
  const DTypeClass c = dtype_class(t);
  return c == DTypeClass::kFloat || c == DTypeClass::kHalfFloat || c == DTypeClass::kFloat8 || c == DTypeClass::kFloat4;
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
