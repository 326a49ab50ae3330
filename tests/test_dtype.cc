#include <catch2/catch.hpp>

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
