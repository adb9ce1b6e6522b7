#include "compiler/interp/tensor.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tilec::interp {
namespace {

using ir::DType;

TEST(TensorTest, StorageSizes) {
  EXPECT_EQ(Tensor(DType::kFloat16, {3, 4}).bytes().size(), 24u);
  EXPECT_EQ(Tensor(DType::kFloat8E4M3, {5}).bytes().size(), 5u);
  EXPECT_EQ(Tensor(DType::kInt4, {5}).bytes().size(), 3u);
  EXPECT_EQ(Tensor(DType::kInt4, {2, 4}).bytes().size(), 4u);
  EXPECT_EQ(Tensor(DType::kFloat64, {}).bytes().size(), 8u);
  EXPECT_EQ(Tensor(DType::kFloat32, {0, 7}).num_elements(), 0);
}

TEST(TensorTest, StoresTheDeviceFormat) {
  Tensor h(DType::kFloat16, {2});
  h.SetDouble(0, 1.0);
  h.SetDouble(1, -2.0);
  EXPECT_EQ(h.bytes(), (std::vector<uint8_t>{0x00, 0x3C, 0x00, 0xC0}));

  Tensor b(DType::kBFloat16, {1});
  b.SetDouble(0, 1.0);
  EXPECT_EQ(b.bytes(), (std::vector<uint8_t>{0x80, 0x3F}));

  Tensor i(DType::kInt32, {1});
  i.SetInt(0, -2);
  EXPECT_EQ(i.bytes(), (std::vector<uint8_t>{0xFE, 0xFF, 0xFF, 0xFF}));
}

TEST(TensorTest, WritesRoundAndWrap) {
  Tensor h(DType::kFloat16, {1});
  h.SetDouble(0, 0.1);
  EXPECT_EQ(h.GetDouble(0), 0.0999755859375);
  Tensor i8(DType::kInt8, {1});
  i8.SetInt(0, 300);
  EXPECT_EQ(i8.GetInt(0), 44);
  i8.SetDouble(0, -7.9);
  EXPECT_EQ(i8.GetInt(0), -7);
  Tensor u8(DType::kUInt8, {1});
  u8.SetInt(0, -1);
  EXPECT_EQ(u8.GetInt(0), 255);
  Tensor e4(DType::kFloat8E4M3, {1});
  e4.SetDouble(0, 1000.0);
  EXPECT_EQ(e4.GetDouble(0), 448.0);
  EXPECT_EQ(e4.GetBits(0), 0x7Eu);
}

TEST(TensorTest, Int4PacksLowNibbleFirst) {
  Tensor t(DType::kInt4, {3});
  t.SetInt(0, -1);  // 0xF
  t.SetInt(1, 7);
  t.SetInt(2, -8);
  EXPECT_EQ(t.bytes(), (std::vector<uint8_t>{0x7F, 0x08}));
  EXPECT_EQ(t.GetInt(0), -1);
  EXPECT_EQ(t.GetInt(1), 7);
  EXPECT_EQ(t.GetInt(2), -8);
  t.SetInt(1, 9);  // wraps to -7 (0x9) and leaves the low nibble alone
  EXPECT_EQ(t.bytes()[0], 0x9F);
  EXPECT_EQ(t.GetInt(1), -7);
  EXPECT_EQ(t.GetDouble(0), -1.0);
}

TEST(TensorTest, FlatIndexRoundTrips) {
  Tensor t(DType::kFloat32, {2, 3, 4});
  EXPECT_EQ(t.FlatIndex({1, 2, 3}), 23);
  EXPECT_EQ(t.FlatIndex({0, 1, 2}), 6);
  EXPECT_EQ(t.Unflatten(23), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(t.Unflatten(6), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(t.TypeString(), "float32[2, 3, 4]");
  EXPECT_EQ(Tensor::Scalar(DType::kFloat16, 1.5).TypeString(), "float16[]");
}

TEST(RandomTensorTest, ReproducibleFromTheSeed) {
  const uint64_t seed = 99;
  Tensor a = RandomTensor(DType::kFloat32, {64}, seed);
  Tensor b = RandomTensor(DType::kFloat32, {64}, seed);
  Tensor c = RandomTensor(DType::kFloat32, {64}, seed + 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(RandomTensorTest, RangesPerDType) {
  const uint64_t seed = 1234;
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat8E4M3,
                  DType::kFloat8E5M2, DType::kFloat64}) {
    Tensor x = RandomTensor(t, {1000}, seed);
    double lo = 1, hi = -1;
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      lo = std::min(lo, x.GetDouble(i));
      hi = std::max(hi, x.GetDouble(i));
    }
    EXPECT_GE(lo, -1.0) << ir::DTypeName(t) << " seed " << seed;
    EXPECT_LE(hi, 1.0) << ir::DTypeName(t) << " seed " << seed;
    EXPECT_LT(lo, -0.9) << ir::DTypeName(t) << " seed " << seed;
    EXPECT_GT(hi, 0.9) << ir::DTypeName(t) << " seed " << seed;
  }
  struct Range {
    DType t;
    int64_t lo, hi;
  };
  for (Range r :
       {Range{DType::kInt4, -8, 7}, Range{DType::kInt8, -8, 8}, Range{DType::kUInt8, 0, 15},
        Range{DType::kInt32, -8, 8}, Range{DType::kBool, 0, 1}}) {
    Tensor x = RandomTensor(r.t, {1000}, seed);
    int64_t lo = 100, hi = -100;
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      lo = std::min(lo, x.GetInt(i));
      hi = std::max(hi, x.GetInt(i));
    }
    EXPECT_EQ(lo, r.lo) << ir::DTypeName(r.t) << " seed " << seed;
    EXPECT_EQ(hi, r.hi) << ir::DTypeName(r.t) << " seed " << seed;
  }
}

TEST(RandomTensorTest, NormalHasUnitMoments) {
  const uint64_t seed = 42;
  Tensor x = RandomTensor(DType::kFloat64, {20000}, seed, Distribution::kNormal);
  double sum = 0, sum2 = 0;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    sum += x.GetDouble(i);
    sum2 += x.GetDouble(i) * x.GetDouble(i);
  }
  const double mean = sum / 20000, var = sum2 / 20000 - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.05) << "seed " << seed;
  EXPECT_NEAR(var, 1.0, 0.05) << "seed " << seed;
}

TEST(RandomTensorTest, NeverAllZeros) {
  // A one-element bool tensor is zero for about half the seeds.
  for (uint64_t seed = 0; seed < 32; ++seed) {
    Tensor x = RandomTensor(DType::kBool, {1}, seed);
    EXPECT_EQ(x.GetInt(0), 1) << "seed " << seed;
  }
}

}  // namespace
}  // namespace tilec::interp
