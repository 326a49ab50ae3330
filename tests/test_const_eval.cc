// The shape-computation evaluators against hand-computed cases.
#include <catch2/catch.hpp>

#include "memplan/onnx_io/const_eval.h"

using namespace memplan::onnx_io;
using T = Tensor;

namespace {

Tensor eval1(const std::string& op, std::vector<const Tensor*> in, EvalAttributes attrs = {}, int opset = 14) {
  auto out = evaluate(op, opset, attrs, in);
  REQUIRE(out);
  REQUIRE(out->size() == 1);
  return (*out)[0];
}

EvalAttributes ints(std::map<std::string, int64_t> m) {
  EvalAttributes a;
  a.ints = std::move(m);
  return a;
}

}  // namespace

TEST_CASE("Shape with start and end, negative bounds", "[eval]") {
  std::vector<int64_t> dims{2, 3, 5, 7};
  CHECK(evaluate_shape(dims, {}) == T::int64_vector({2, 3, 5, 7}));
  CHECK(evaluate_shape(dims, ints({{"start", 1}})) == T::int64_vector({3, 5, 7}));
  CHECK(evaluate_shape(dims, ints({{"start", -2}})) == T::int64_vector({5, 7}));
  CHECK(evaluate_shape(dims, ints({{"end", -1}})) == T::int64_vector({2, 3, 5}));
  CHECK(evaluate_shape(dims, ints({{"start", 3}, {"end", 1}})) == T::int64_vector({}));  // empty
  CHECK(evaluate_shape({}, {}) == T::int64_vector({}));                                  // scalar input
}

TEST_CASE("Gather: scalar and vector indices, negative indices, axis", "[eval]") {
  T shape = T::int64_vector({1, 128, 768});
  T minus_one = T::int64_scalar(-1);
  CHECK(eval1("Gather", {&shape, &minus_one}) == T::int64_scalar(768));
  T idx = T::int64_vector({0, -2});
  CHECK(eval1("Gather", {&shape, &idx}) == T::int64_vector({1, 128}));
  T m = T::int64s({1, 2, 3, 4, 5, 6}, {2, 3});
  T col = T::int64_scalar(2);
  CHECK(eval1("Gather", {&m, &col}, ints({{"axis", 1}})) == T::int64_vector({3, 6}));
  CHECK(eval1("Gather", {&m, &col}, ints({{"axis", -1}})) == T::int64_vector({3, 6}));
  T out_of_range = T::int64_scalar(3);
  CHECK_THROWS_AS(evaluate("Gather", 14, {}, {&shape, &out_of_range}), EvalError);
}

TEST_CASE("Unsqueeze, Squeeze, Concat, Reshape", "[eval]") {
  T s = T::int64_scalar(7);
  T axes0 = T::int64_vector({0});
  CHECK(eval1("Unsqueeze", {&s, &axes0}, {}, 13) == T::int64_vector({7}));
  EvalAttributes old_axes;
  old_axes.int_lists["axes"] = {0};
  CHECK(eval1("Unsqueeze", {&s}, old_axes, 11) == T::int64_vector({7}));  // axes as an attribute before 13
  T v = T::int64s({4}, {1, 1});
  CHECK(eval1("Squeeze", {&v}, {}, 13) == T::int64_scalar(4));
  T a = T::int64_vector({1, 128}), b = T::int64_vector({12, 64}), empty = T::int64_vector({});
  CHECK(eval1("Concat", {&a, &empty, &b}) == T::int64_vector({1, 128, 12, 64}));
  T grid = T::int64s({1, 2, 3, 4, 5, 6}, {2, 3});
  T target = T::int64_vector({3, -1});
  CHECK(eval1("Reshape", {&grid, &target}) == T::int64s({1, 2, 3, 4, 5, 6}, {3, 2}));
  T copy0 = T::int64_vector({0, 3});
  CHECK(eval1("Reshape", {&grid, &copy0}).dims == std::vector<int64_t>{2, 3});
  T bad = T::int64_vector({4, -1});
  CHECK_THROWS_AS(evaluate("Reshape", 14, {}, {&grid, &bad}), EvalError);
}

TEST_CASE("Slice: negative starts, huge ends, negative steps, axes", "[eval]") {
  T v = T::int64_vector({10, 20, 30, 40, 50});
  T s = T::int64_vector({-2}), e = T::int64_vector({INT64_MAX});
  CHECK(eval1("Slice", {&v, &s, &e}, {}, 13) == T::int64_vector({40, 50}));
  T s2 = T::int64_vector({-1}), e2 = T::int64_vector({INT64_MIN}), axes = T::int64_vector({0}),
    step = T::int64_vector({-2});
  CHECK(eval1("Slice", {&v, &s2, &e2, &axes, &step}, {}, 13) == T::int64_vector({50, 30, 10}));
  T s3 = T::int64_vector({3}), e3 = T::int64_vector({1});
  CHECK(eval1("Slice", {&v, &s3, &e3}, {}, 13) == T::int64_vector({}));  // empty result
  T m = T::int64s({1, 2, 3, 4, 5, 6}, {2, 3});
  T s4 = T::int64_vector({1}), e4 = T::int64_vector({3}), ax1 = T::int64_vector({1});
  CHECK(eval1("Slice", {&m, &s4, &e4, &ax1}, {}, 13) == T::int64s({2, 3, 5, 6}, {2, 2}));
  T zero_step = T::int64_vector({0});
  CHECK_THROWS_AS(evaluate("Slice", 13, {}, {&v, &s, &e, &axes, &zero_step}), EvalError);
}

TEST_CASE("arithmetic with broadcasting, and its faults", "[eval]") {
  T shape = T::int64_vector({1, 128, 768});
  T heads = T::int64_scalar(12);
  CHECK(eval1("Div", {&shape, &heads}) == T::int64_vector({0, 10, 64}));  // truncation, as ORT
  CHECK(eval1("Mul", {&shape, &heads}) == T::int64_vector({12, 1536, 9216}));
  T col = T::int64s({1, 2}, {2, 1}), row = T::int64s({10, 20, 30}, {1, 3});
  CHECK(eval1("Add", {&col, &row}) == T::int64s({11, 21, 31, 12, 22, 32}, {2, 3}));
  CHECK(eval1("Sub", {&row, &col}).dims == std::vector<int64_t>{2, 3});
  T neg = T::int64_scalar(-7), three = T::int64_scalar(3);
  CHECK(eval1("Mod", {&neg, &three}) == T::int64_scalar(2));                        // sign of the divisor
  CHECK(eval1("Mod", {&neg, &three}, ints({{"fmod", 1}})) == T::int64_scalar(-1));  // C fmod
  CHECK(eval1("Neg", {&three}) == T::int64_scalar(-3));
  CHECK(eval1("Abs", {&neg}) == T::int64_scalar(7));
  T zero = T::int64_scalar(0);
  CHECK_THROWS_WITH(evaluate("Div", 14, {}, {&three, &zero}), Catch::Contains("division by zero"));
  CHECK_THROWS_AS(evaluate("Mod", 14, {}, {&three, &zero}), EvalError);
  T big = T::int64_scalar(INT64_MAX);
  CHECK_THROWS_WITH(evaluate("Add", 14, {}, {&big, &three}), Catch::Contains("overflow"));
  CHECK_THROWS_WITH(evaluate("Mul", 14, {}, {&big, &three}), Catch::Contains("overflow"));
  T bad_a = T::int64_vector({1, 2}), bad_b = T::int64_vector({1, 2, 3});
  CHECK_THROWS_WITH(evaluate("Add", 14, {}, {&bad_a, &bad_b}), Catch::Contains("broadcast"));
  CHECK(eval1("Min", {&shape, &heads}) == T::int64_vector({1, 12, 12}));
  CHECK(eval1("Max", {&shape, &heads, &zero}) == T::int64_vector({12, 128, 768}));
}

TEST_CASE("floats: Cast, Floor, Ceil, Sqrt", "[eval]") {
  T f = T::floats_of(1, {2.5, -2.5, 7.9}, {3});
  CHECK(eval1("Floor", {&f}) == T::floats_of(1, {2, -3, 7}, {3}));
  CHECK(eval1("Ceil", {&f}) == T::floats_of(1, {3, -2, 8}, {3}));
  CHECK(eval1("Cast", {&f}, ints({{"to", 7}})) == T::int64_vector({2, -2, 7}));  // truncation toward zero
  T i = T::int64_vector({0, 3});
  T as_bool = eval1("Cast", {&i}, ints({{"to", 9}}));
  CHECK(as_bool.dtype == 9);
  CHECK(as_bool.ints == std::vector<int64_t>{0, 1});
  T sixty_four = T::floats_of(1, {64}, {});
  CHECK(eval1("Sqrt", {&sixty_four}) == T::floats_of(1, {8}, {}));
  T inf = T::floats_of(1, {1.0 / 0.0}, {});
  CHECK_THROWS_AS(evaluate("Cast", 14, ints({{"to", 7}}), {&inf}), EvalError);
  T as_int32 = eval1("Cast", {&sixty_four}, ints({{"to", 6}}));
  CHECK(as_int32.dtype == 6);
  CHECK(as_int32.ints == std::vector<int64_t>{64});
  T huge = T::int64_scalar(int64_t(1) << 40);
  CHECK_THROWS_WITH(evaluate("Cast", 14, ints({{"to", 6}}), {&huge}), Catch::Contains("int32 overflow"));
}

TEST_CASE("Range, Expand, ConstantOfShape, Where, comparisons, reductions", "[eval]") {
  T s = T::int64_scalar(0), l = T::int64_scalar(10), d = T::int64_scalar(3);
  CHECK(eval1("Range", {&s, &l, &d}) == T::int64_vector({0, 3, 6, 9}));
  T dn = T::int64_scalar(-4);
  CHECK(eval1("Range", {&l, &s, &dn}) == T::int64_vector({10, 6, 2}));
  CHECK(eval1("Range", {&l, &s, &d}) == T::int64_vector({}));  // empty
  T d0 = T::int64_scalar(0);
  CHECK_THROWS_AS(evaluate("Range", 14, {}, {&s, &l, &d0}), EvalError);

  T one = T::int64s({5}, {1});
  T target = T::int64_vector({2, 3});
  CHECK(eval1("Expand", {&one, &target}) == T::int64s({5, 5, 5, 5, 5, 5}, {2, 3}));
  T shape = T::int64_vector({2, 2});
  EvalAttributes fill;
  fill.tensors["value"] = T::int64s({1}, {1});
  CHECK(eval1("ConstantOfShape", {&shape}, fill) == T::int64s({1, 1, 1, 1}, {2, 2}));
  T empty_shape = T::int64_vector({0, 3});
  CHECK(eval1("ConstantOfShape", {&empty_shape}).size() == 0);
  T default_fill = eval1("ConstantOfShape", {&shape});
  CHECK(default_fill.dtype == 1);
  CHECK(default_fill.floats == std::vector<double>{0, 0, 0, 0});

  T v = T::int64_vector({1, -1, 3}), minus = T::int64_scalar(-1), ones = T::int64_vector({1, 1, 1});
  T eq = eval1("Equal", {&v, &minus});
  CHECK(eq.dtype == 9);
  CHECK(eq.ints == std::vector<int64_t>{0, 1, 0});
  CHECK(eval1("Where", {&eq, &ones, &v}) == T::int64_vector({1, 1, 3}));
  CHECK(eval1("Not", {&eq}).ints == std::vector<int64_t>{1, 0, 1});
  T dims = T::int64_vector({2, 3, 4});
  CHECK(eval1("ReduceProd", {&dims}, ints({{"keepdims", 0}})) == T::int64_scalar(24));
  CHECK(eval1("ReduceSum", {&dims}, {}, 13) == T::int64_vector({9}));
  T m = T::int64s({1, 2, 3, 4}, {2, 2}), ax = T::int64_vector({1});
  CHECK(eval1("ReduceSum", {&m, &ax}, ints({{"keepdims", 0}}), 13) == T::int64_vector({3, 7}));
}

TEST_CASE("results over the element limit are not materialised", "[eval]") {
  T shape = T::int64_vector({10000, 10000});  // 10^8 elements
  CHECK_FALSE(evaluate("ConstantOfShape", 14, {}, {&shape}));
  T one = T::int64s({1}, {1});
  CHECK_FALSE(evaluate("Expand", 14, {}, {&one, &shape}));
  T s = T::int64_scalar(0), l = T::int64_scalar(int64_t(1) << 40), d = T::int64_scalar(1);
  CHECK_FALSE(evaluate("Range", 14, {}, {&s, &l, &d}));
  EvalLimits tiny{4};
  T small = T::int64_vector({1, 2, 3, 4, 5});
  T idx = T::int64_vector({0, 1, 2, 3, 4});
  CHECK_FALSE(evaluate("Gather", 14, {}, {&small, &idx}, tiny));
  CHECK_FALSE(evaluate("ConstantOfShape", 14, {}, {&shape}, tiny));
}

TEST_CASE("faults in the new evaluators are EvalErrors, never undefined behaviour", "[eval]") {
  T scalar = T::int64_scalar(3);
  CHECK_THROWS_AS(evaluate("ArgMax", 13, {}, {&scalar}), EvalError);  // a scalar has no axis
  T nan_index = T::floats_of(1, {NAN}, {1});
  T data = T::int64_vector({1, 2, 3});
  CHECK_THROWS_AS(evaluate("Gather", 13, {}, {&data, &nan_index}), EvalError);  // not an integer
  T huge_repeat = T::int64_vector({int64_t{1} << 40});
  CHECK_FALSE(evaluate("Tile", 13, {}, {&data, &huge_repeat}));  // over the element limit: not materialised
  T overflowing = T::int64_vector({int64_t{1} << 62});
  CHECK_THROWS_AS(evaluate("Tile", 13, {}, {&data, &overflowing}), EvalError);  // 3 * 2^62 elements
  T start = T::int64_scalar(INT64_MIN), limit = T::int64_scalar(INT64_MAX), delta = T::int64_scalar(1);
  CHECK_FALSE(evaluate("Range", 13, {}, {&start, &limit, &delta}));  // 2^64 elements: counted exactly, declined
  T min_delta = T::int64_scalar(INT64_MIN);
  CHECK(evaluate("Range", 13, {}, {&limit, &start, &min_delta})->at(0).dims == std::vector<int64_t>{2});
  EvalAttributes eq;
  eq.strings["equation"] = "ij,jk->ik";
  T a = T::int64s({1, 2, 3, 4}, {2, 2}), b = T::int64s({1, 0, 0, 1}, {2, 2});
  CHECK(evaluate("Einsum", 12, eq, {&a, &b})->at(0) == a);  // times the identity
  eq.strings["equation"] = "ij,jk->iz";
  CHECK_THROWS_AS(evaluate("Einsum", 12, eq, {&a, &b}), EvalError);  // an output label no input has
}
