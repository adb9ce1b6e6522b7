#include "compiler/interp/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tilec::interp {
namespace {

using ir::DType;

Tensor Values(DType t, std::initializer_list<double> v) {
  Tensor x(t, {static_cast<int64_t>(v.size())});
  int64_t i = 0;
  for (double d : v) x.SetDouble(i++, d);
  return x;
}

TEST(CompareTest, IdenticalTensorsMatch) {
  Tensor a = RandomTensor(DType::kFloat32, {4, 5}, 17);
  auto r = CompareTensors(a, a, DefaultTolerance(DType::kFloat32));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ok);
  EXPECT_EQ(r->max_abs_error, 0.0);
  EXPECT_EQ(r->rel_l2_error, 0.0);
  EXPECT_EQ(r->num_mismatches, 0);
}

TEST(CompareTest, ReportsFirstMismatchAndErrors) {
  Tensor e(DType::kFloat64, {2, 3});
  Tensor a(DType::kFloat64, {2, 3});
  for (int i = 0; i < 6; ++i) {
    e.SetDouble(i, 1.0);
    a.SetDouble(i, 1.0);
  }
  a.SetDouble(4, 1.5);   // [1, 1]
  a.SetDouble(5, 0.75);  // [1, 2]
  auto r = CompareTensors(a, e, Tolerance{0.1, 0.0});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ok);
  EXPECT_EQ(r->num_mismatches, 2);
  EXPECT_EQ(r->first_mismatch_index, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(r->first_actual, 1.5);
  EXPECT_EQ(r->first_expected, 1.0);
  EXPECT_EQ(r->max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(r->rel_l2_error, std::sqrt((0.25 + 0.0625) / 6));
  EXPECT_NE(r->Summary().find("2 of 6 elements differ; first at [1, 1]"), std::string::npos)
      << r->Summary();
}

TEST(CompareTest, ToleranceIsAtolPlusRtolTimesExpected) {
  Tensor e = Values(DType::kFloat64, {100.0, 0.0});
  auto within = CompareTensors(Values(DType::kFloat64, {101.0, 0.01}), e, Tolerance{0.01, 0.01});
  EXPECT_TRUE(within->ok) << within->Summary();
  EXPECT_DOUBLE_EQ(within->max_abs_error, 1.0);
  auto beyond = CompareTensors(Values(DType::kFloat64, {101.02, 0.0}), e, Tolerance{0.01, 0.01});
  EXPECT_FALSE(beyond->ok);
}

TEST(CompareTest, NaNAndInfinities) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Tensor e = Values(DType::kFloat32, {nan, inf, -inf});
  EXPECT_TRUE(CompareTensors(Values(DType::kFloat32, {nan, inf, -inf}), e, {})->ok);
  EXPECT_FALSE(CompareTensors(Values(DType::kFloat32, {1.0, inf, -inf}), e, {})->ok);
  EXPECT_FALSE(CompareTensors(Values(DType::kFloat32, {nan, -inf, -inf}), e, {})->ok);
  EXPECT_FALSE(CompareTensors(Values(DType::kFloat32, {nan, 1e30, -inf}), e, Tolerance{1, 1})->ok);
  // Mismatches on NaN are counted and said: the finite errors alone read 0.
  auto r = CompareTensors(Values(DType::kFloat32, {1.0, 2.0, 3.0}),
                          Values(DType::kFloat32, {nan, 2.0, nan}), {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->nonfinite_mismatches, 2);
  EXPECT_NE(r->Summary().find("2 of 3 elements differ"), std::string::npos) << r->Summary();
  EXPECT_NE(r->Summary().find("2 mismatches are NaN or infinite"), std::string::npos)
      << r->Summary();
}

TEST(CompareTest, MixedDTypesCompareAsValues) {
  Tensor ref = Values(DType::kFloat64, {0.1, 0.2});
  Tensor half = Values(DType::kFloat16, {0.1, 0.2});
  EXPECT_FALSE(CompareTensors(half, ref, DefaultTolerance(DType::kFloat64))->ok);
  EXPECT_TRUE(CompareTensors(half, ref, DefaultTolerance(DType::kFloat16))->ok);
}

TEST(CompareTest, ShapeMismatchIsAnError) {
  auto r = CompareTensors(Tensor(DType::kFloat32, {2, 3}), Tensor(DType::kFloat32, {3, 2}), {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("float32[2, 3]"), std::string::npos);
}

TEST(CompareTest, DefaultTolerancesFollowPrecision) {
  EXPECT_LT(DefaultTolerance(DType::kFloat64).rtol, DefaultTolerance(DType::kFloat32).rtol);
  EXPECT_LT(DefaultTolerance(DType::kFloat32).rtol, DefaultTolerance(DType::kFloat16).rtol);
  EXPECT_LT(DefaultTolerance(DType::kFloat16).rtol, DefaultTolerance(DType::kBFloat16).rtol);
  EXPECT_LT(DefaultTolerance(DType::kBFloat16).rtol, DefaultTolerance(DType::kFloat8E4M3).rtol);
  EXPECT_LT(DefaultTolerance(DType::kFloat8E4M3).rtol, DefaultTolerance(DType::kFloat8E5M2).rtol);
  EXPECT_EQ(DefaultTolerance(DType::kInt32).atol, 0.0);
  EXPECT_EQ(DefaultTolerance(DType::kInt8).rtol, 0.0);
  // A one-ulp float16 difference near 1 passes float16's default.
  Tensor a = Values(DType::kFloat16, {1.0});
  Tensor b = Values(DType::kFloat16, {1.0 + std::ldexp(1.0, -10)});
  EXPECT_TRUE(CompareTensors(a, b, DefaultTolerance(DType::kFloat16))->ok);
}

}  // namespace
}  // namespace tilec::interp
