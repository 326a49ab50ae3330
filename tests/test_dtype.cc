#include <catch2/catch.hpp>
#include <map>
#include <vector>

#include "memplan/dtype.h"
#include "memplan/graph.h"

using namespace memplan;

TEST_CASE("element sizes follow ONNX's data types", "[dtype]") {
  CHECK(dtype_bytes(1, 10) == 40u);              // float
  CHECK(dtype_bytes(7, 3) == 24u);               // int64
  CHECK(dtype_bytes(9, 5) == 5u);                // bool
  CHECK(dtype_bytes(16, 4) == 8u);               // bfloat16
  CHECK(dtype_bytes(15, 1) == 16u);              // complex128
  CHECK(dtype_bytes(22, 5) == 3u);               // int4 packs two per byte
  CHECK(dtype_bytes(8, 2) == 64u);               // strings: one std::string object each
  CHECK_FALSE(dtype_bytes(0, 1));                // undefined
  CHECK_FALSE(dtype_bytes(99, 1));               // not an ONNX type
  CHECK_FALSE(dtype_bytes(11, UINT64_MAX / 4));  // overflow
  CHECK(dtype_name(1) == "float");
  CHECK(dtype_name(99) == "unknown");
}

TEST_CASE("value byte sizes need every dim", "[dtype]") {
  Value v;
  v.type_kind = TypeKind::kTensor;
  v.dtype = 1;
  v.has_shape = true;
  v.dims = {Dim{2, {}}, Dim{3, {}}};
  REQUIRE(compute_value_bytes(v));
  CHECK(v.bytes == 24u);
  v.dims[1] = Dim{-1, "N"};
  REQUIRE(compute_value_bytes(v));
  CHECK_FALSE(v.bytes);
  v.dims = {Dim{int64_t(1) << 40, {}}, Dim{int64_t(1) << 30, {}}};
  CHECK_FALSE(compute_value_bytes(v));
  v.dims.clear();  // a scalar
  REQUIRE(compute_value_bytes(v));
  CHECK(v.bytes == 4u);
}

TEST_CASE("each element type's class: the groups ORT's rules and the evaluators tell apart", "[dtype]") {
  std::map<DTypeClass, std::vector<DType>> members;
  for (DType t = -1; t <= kDTypeLast + 1; ++t) members[dtype_class(t)].push_back(t);
  CHECK(members[DTypeClass::kNone] == std::vector<DType>{-1, 0, kDTypeLast + 1});
  CHECK(members[DTypeClass::kBool] == std::vector<DType>{kDTypeBool});
  CHECK(members[DTypeClass::kInteger] == std::vector<DType>{2, 3, 4, 5, 6, kDTypeInt64, 12, 13});
  CHECK(members[DTypeClass::kSubByteInteger] == std::vector<DType>{21, 22});
  CHECK(members[DTypeClass::kFloat] == std::vector<DType>{kDTypeFloat, 11});
  CHECK(members[DTypeClass::kHalfFloat] == std::vector<DType>{10, 16});
  CHECK(members[DTypeClass::kFloat8] == std::vector<DType>{17, 18, 19, 20});
  CHECK(members[DTypeClass::kFloat4] == std::vector<DType>{23});
  CHECK(members[DTypeClass::kComplex] == std::vector<DType>{14, 15});
  CHECK(members[DTypeClass::kString] == std::vector<DType>{kDTypeString});
  std::vector<DType> floats;
  for (DType t = -1; t <= kDTypeLast + 1; ++t)
    if (dtype_is_float(t)) floats.push_back(t);
  CHECK(floats == std::vector<DType>{1, 10, 11, 16, 17, 18, 19, 20, 23});
  CHECK(dtype_name(kDTypeInt64) == "int64");
  CHECK(dtype_name(kDTypeBool) == "bool");
}
