#include "runtime/tensor_data.h"

#include <cmath>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tilec::runtime {
namespace {

Artifact TwoParams(const std::string& dtype) {
  absl::StatusOr<Artifact> a = Artifact::Parse(R"({"schema": "tilec.cuda.artifact.v1",
    "program": "p", "target": "sm_80", "dyn_dims": ["N"],
    "params": [{"name": "X", "kind": "tensor", "dtype": ")" + dtype + R"(", "shape": ["N", "6"]},
               {"name": "s", "kind": "scalar", "dtype": "float32"}],
    "workspaces": [], "kernels": [{"name": "k", "grid": ["1"], "block": [32], "smem_bytes": 0,
    "params": ["X", "s", "N"]}]})");
  EXPECT_TRUE(a.ok()) << a.status();
  return *a;
}

TEST(TensorData, FillIsDeterministicPerSeedAndInRange) {
  for (const char* dtype : {"float32", "float16", "bfloat16", "float8_e4m3", "float8_e5m2",
                            "float8_e4m3fnuz", "float8_e5m2fnuz", "int8", "uint8", "int32", "int4",
                            "bool"}) {
    Artifact a = TwoParams(dtype);
    auto x = FillInputs(a, {{"N", 5}}, 7), y = FillInputs(a, {{"N", 5}}, 7),
         z = FillInputs(a, {{"N", 5}}, 8);
    ASSERT_TRUE(x.ok() && y.ok() && z.ok()) << dtype;
    EXPECT_EQ((*x)[0].bytes, (*y)[0].bytes) << dtype;
    EXPECT_NE((*x)[0].bytes, (*z)[0].bytes) << dtype;
    EXPECT_EQ((*x)[0].shape, (std::vector<int64_t>{5, 6}));
    const DTypeInfo t = *LookupDType(dtype);
    EXPECT_EQ((*x)[0].bytes.size(), static_cast<size_t>(5 * ((6 * t.bits + 7) / 8))) << dtype;
    std::set<double> distinct;
    for (int64_t i = 0; i < 30; ++i) {
      const double v = ReadElement(t, (*x)[0].bytes.data(), i);
      ASSERT_TRUE(std::isfinite(v)) << dtype;
      ASSERT_LE(std::fabs(v), 8) << dtype;
      distinct.insert(v);
    }
    EXPECT_GT(distinct.size(), 1u) << dtype << ": never all one value";
    EXPECT_FALSE((*x)[1].is_tensor);
    EXPECT_GE((*x)[1].f, 0.5);
  }
}

TEST(TensorData, ConversionsRoundToNearestEven) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(1e6f), 0x7C00);
  EXPECT_EQ(FloatToHalf(1.0f + 1.0f / 2048), 0x3C00);  // halfway: to even
  EXPECT_EQ(FloatToHalf(1.0f + 3.0f / 2048), 0x3C02);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3F80);
  for (int h = 0; h < 0x7C00; h += 7) EXPECT_EQ(FloatToHalf(HalfToFloat(h)), h);
}

// AMD's fnuz float8: bias 8 / 16, so 1.0 is 0x40; 0x80 is the NaN, never -0.
TEST(TensorData, FnuzFloat8Elements) {
  for (const char* dtype : {"float8_e4m3fnuz", "float8_e5m2fnuz"}) {
    SCOPED_TRACE(dtype);
    const DTypeInfo t = *LookupDType(dtype);
    const uint8_t one = 0x40, nan = 0x80, max = 0x7F;
    EXPECT_EQ(ReadElement(t, &one, 0), 1.0);
    EXPECT_TRUE(std::isnan(ReadElement(t, &nan, 0)));
    EXPECT_EQ(ReadElement(t, &max, 0), std::string(dtype) == "float8_e4m3fnuz" ? 240.0 : 57344.0);
  }
}

TEST(TensorData, SamplePositionsAreDistinctSortedAndSeeded) {
  std::vector<int64_t> all = SamplePositions(1, 10, 64);
  EXPECT_EQ(all.size(), 10u);
  std::vector<int64_t> some = SamplePositions(1, 1000000, 64), again = SamplePositions(1, 1000000, 64);
  EXPECT_EQ(some, again);
  ASSERT_EQ(some.size(), 64u);
  EXPECT_TRUE(std::is_sorted(some.begin(), some.end()));
  EXPECT_EQ(std::set<int64_t>(some.begin(), some.end()).size(), 64u);
  EXPECT_NE(SamplePositions(2, 1000000, 64), some);
}

}  // namespace
}  // namespace tilec::runtime
