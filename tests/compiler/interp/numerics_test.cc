#include "compiler/interp/numerics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace tilec::interp {
namespace {

using ir::DType;

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Float16Test, RoundsToNearestEvenIncludingTies) {
  const double ulp = std::ldexp(1.0, -10);                                     // at 1.0
  EXPECT_EQ(RoundToFloat(1.0 + ulp / 2, DType::kFloat16), 1.0);                // tie, 1.0 is even
  EXPECT_EQ(RoundToFloat(1.0 + 3 * ulp / 2, DType::kFloat16), 1.0 + 2 * ulp);  // tie, up to even
  EXPECT_EQ(RoundToFloat(1.0 + ulp / 2 + 1e-9, DType::kFloat16), 1.0 + ulp);   // above the tie
  EXPECT_EQ(RoundToFloat(-(1.0 + ulp / 2 + 1e-9), DType::kFloat16), -(1.0 + ulp));
  EXPECT_EQ(RoundToFloat(0.1, DType::kFloat16), 0.0999755859375);
}

TEST(Float16Test, SubnormalsAndOverflow) {
  const double tiny = std::ldexp(1.0, -24);  // smallest subnormal
  EXPECT_EQ(RoundToFloat(tiny, DType::kFloat16), tiny);
  EXPECT_EQ(RoundToFloat(tiny / 2, DType::kFloat16), 0.0);  // tie to even zero
  EXPECT_TRUE(std::signbit(RoundToFloat(-tiny / 2, DType::kFloat16)));
  EXPECT_EQ(RoundToFloat(tiny / 2 * 1.0001, DType::kFloat16), tiny);
  EXPECT_EQ(RoundToFloat(3 * tiny / 2, DType::kFloat16), 2 * tiny);  // tie, up to even
  EXPECT_EQ(EncodeFloat(tiny, DType::kFloat16), 0x0001u);
  EXPECT_EQ(EncodeFloat(std::ldexp(1023.0, -24), DType::kFloat16), 0x03FFu);  // largest subnormal

  EXPECT_EQ(RoundToFloat(65504.0, DType::kFloat16), 65504.0);
  EXPECT_EQ(RoundToFloat(65519.99, DType::kFloat16), 65504.0);
  EXPECT_EQ(RoundToFloat(65520.0, DType::kFloat16), kInf);  // max + half ulp ties up to inf
  EXPECT_EQ(RoundToFloat(-1e6, DType::kFloat16), -kInf);
  EXPECT_EQ(EncodeFloat(kInf, DType::kFloat16), 0x7C00u);
  EXPECT_TRUE(std::isnan(RoundToFloat(kNaN, DType::kFloat16)));
}

TEST(Float16Test, KnownEncodings) {
  EXPECT_EQ(EncodeFloat(1.0, DType::kFloat16), 0x3C00u);
  EXPECT_EQ(EncodeFloat(-2.0, DType::kFloat16), 0xC000u);
  EXPECT_EQ(EncodeFloat(65504.0, DType::kFloat16), 0x7BFFu);
  EXPECT_EQ(EncodeFloat(-0.0, DType::kFloat16), 0x8000u);
  EXPECT_EQ(DecodeFloat(0x3555, DType::kFloat16), 0.333251953125);
  EXPECT_TRUE(std::isnan(DecodeFloat(0x7E00, DType::kFloat16)));
  EXPECT_EQ(DecodeFloat(0xFC00, DType::kFloat16), -kInf);
}

TEST(BFloat16Test, RoundingOverflowAndSubnormals) {
  const double ulp = std::ldexp(1.0, -7);
  EXPECT_EQ(RoundToFloat(1.0 + ulp / 2, DType::kBFloat16), 1.0);
  EXPECT_EQ(RoundToFloat(1.0 + 3 * ulp / 2, DType::kBFloat16), 1.0 + 2 * ulp);
  EXPECT_EQ(EncodeFloat(1.0, DType::kBFloat16), 0x3F80u);
  EXPECT_EQ(RoundToFloat(M_PI, DType::kBFloat16), 3.140625);
  EXPECT_EQ(RoundToFloat(3.4e38, DType::kBFloat16), kInf);
  EXPECT_EQ(RoundToFloat(3.39e38, DType::kBFloat16), MaxFinite(DType::kBFloat16));
  const double tiny = std::ldexp(1.0, -133);
  EXPECT_EQ(RoundToFloat(tiny / 2, DType::kBFloat16), 0.0);
  EXPECT_EQ(RoundToFloat(1.5 * tiny, DType::kBFloat16), 2 * tiny);
  EXPECT_EQ(EncodeFloat(tiny, DType::kBFloat16), 0x0001u);
}

TEST(Float8E4M3Test, SatfiniteEdges) {
  const DType t = DType::kFloat8E4M3;
  EXPECT_EQ(MaxFinite(t), 448.0);
  EXPECT_EQ(EncodeFloat(448.0, t), 0x7Eu);
  EXPECT_EQ(RoundToFloat(449.0, t), 448.0);
  EXPECT_EQ(RoundToFloat(464.0, t), 448.0);  // max + half ulp
  EXPECT_EQ(RoundToFloat(1e6, t), 448.0);
  EXPECT_EQ(RoundToFloat(-1e6, t), -448.0);
  EXPECT_EQ(RoundToFloat(kInf, t), 448.0);  // satfinite: inf saturates too
  EXPECT_EQ(EncodeFloat(-kInf, t), 0xFEu);
  EXPECT_TRUE(std::isnan(RoundToFloat(kNaN, t)));
  EXPECT_EQ(EncodeFloat(kNaN, t) & 0x7F, 0x7Fu);
  EXPECT_TRUE(std::isnan(DecodeFloat(0x7F, t)));
  EXPECT_TRUE(std::isnan(DecodeFloat(0xFF, t)));
  EXPECT_EQ(DecodeFloat(0x08, t), std::ldexp(1.0, -6));  // smallest normal
  EXPECT_EQ(DecodeFloat(0x07, t), 7 * std::ldexp(1.0, -9));
  // Ties to even: 1 + 1/16 lies between 1 (even) and 1.125.
  EXPECT_EQ(RoundToFloat(1.0625, t), 1.0);
  EXPECT_EQ(RoundToFloat(1.1875, t), 1.25);
  // Subnormals: the smallest is 2^-9.
  const double tiny = std::ldexp(1.0, -9);
  EXPECT_EQ(RoundToFloat(tiny, t), tiny);
  EXPECT_EQ(RoundToFloat(tiny / 2, t), 0.0);
  EXPECT_EQ(RoundToFloat(1.5 * tiny, t), 2 * tiny);
}

TEST(Float8E5M2Test, SatfiniteEdges) {
  const DType t = DType::kFloat8E5M2;
  EXPECT_EQ(MaxFinite(t), 57344.0);
  EXPECT_EQ(EncodeFloat(57344.0, t), 0x7Bu);
  EXPECT_EQ(RoundToFloat(60000.0, t), 57344.0);
  EXPECT_EQ(RoundToFloat(61440.0, t), 57344.0);
  EXPECT_EQ(RoundToFloat(1e9, t), 57344.0);
  EXPECT_EQ(RoundToFloat(kInf, t), 57344.0);
  EXPECT_EQ(RoundToFloat(-kInf, t), -57344.0);
  EXPECT_EQ(DecodeFloat(0x7C, t), kInf);  // representable, never produced by conversion
  EXPECT_TRUE(std::isnan(RoundToFloat(kNaN, t)));
  EXPECT_TRUE(std::isnan(DecodeFloat(EncodeFloat(kNaN, t), t)));
  EXPECT_EQ(RoundToFloat(1.125, t), 1.0);
  EXPECT_EQ(RoundToFloat(1.375, t), 1.5);
  const double tiny = std::ldexp(1.0, -16);
  EXPECT_EQ(EncodeFloat(tiny, t), 0x01u);
  EXPECT_EQ(RoundToFloat(tiny / 2, t), 0.0);
}

// AMD's fnuz float8: bias 8 / 16, max 240 / 57344, no infinities, no -0
// (0x80 is the only NaN).
TEST(Float8FnuzTest, Edges) {
  const double kInf = std::numeric_limits<double>::infinity();
  const double kNaN = std::numeric_limits<double>::quiet_NaN();
  for (DType t : {DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2FNUZ}) {
    SCOPED_TRACE(ir::DTypeName(t));
    const double max = t == DType::kFloat8E4M3FNUZ ? 240.0 : 57344.0;
    EXPECT_EQ(MaxFinite(t), max);
    EXPECT_EQ(EncodeFloat(1.0, t), 0x40u);
    EXPECT_EQ(DecodeFloat(0x7F, t), max);
    EXPECT_EQ(DecodeFloat(0xFF, t), -max);
    EXPECT_EQ(RoundToFloat(kInf, t), max);
    EXPECT_EQ(RoundToFloat(-kInf, t), -max);
    EXPECT_EQ(RoundToFloat(max * 1.1, t), max);
    EXPECT_EQ(EncodeFloat(kNaN, t), 0x80u);
    EXPECT_EQ(EncodeFloat(-kNaN, t), 0x80u);
    EXPECT_TRUE(std::isnan(DecodeFloat(0x80, t)));
    EXPECT_EQ(EncodeFloat(-0.0, t), 0x00u);
    EXPECT_FALSE(std::signbit(RoundToFloat(-0.0, t)));
    EXPECT_FALSE(std::signbit(RoundToFloat(-1e-30, t)));
  }
  EXPECT_EQ(EncodeFloat(std::ldexp(1.0, -10), DType::kFloat8E4M3FNUZ), 0x01u);
  EXPECT_EQ(EncodeFloat(std::ldexp(1.0, -17), DType::kFloat8E5M2FNUZ), 0x01u);
  EXPECT_EQ(RoundToFloat(1.0625, DType::kFloat8E4M3FNUZ), 1.0);  // tie to even
  EXPECT_EQ(RoundToFloat(1.1875, DType::kFloat8E4M3FNUZ), 1.25);
}

// Every non-NaN storage pattern decodes and re-encodes to itself.
TEST(FloatFormatsTest, EveryPatternRoundTrips) {
  for (DType t : {DType::kFloat16, DType::kBFloat16, DType::kFloat8E4M3, DType::kFloat8E5M2,
                  DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2FNUZ}) {
    const uint64_t n = uint64_t{1} << ir::DTypeBits(t);
    for (uint64_t bits = 0; bits < n; ++bits) {
      const double v = DecodeFloat(bits, t);
      if (std::isnan(v)) continue;
      if (std::isinf(v) && (t == DType::kFloat8E5M2)) continue;  // satfinite clamps inf
      ASSERT_EQ(EncodeFloat(v, t), bits) << ir::DTypeName(t) << " " << std::hex << bits;
    }
  }
}

// RoundToFloat agrees with a brute-force nearest-value search over every
// finite value of the format (ties to the even pattern, beyond max: inf or,
// for fp8, max).
TEST(FloatFormatsTest, MatchesBruteForceNearest) {
  const uint64_t seed = 20240611;
  std::mt19937_64 rng(seed);
  for (DType t : {DType::kFloat16, DType::kBFloat16, DType::kFloat8E4M3, DType::kFloat8E5M2,
                  DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2FNUZ}) {
    std::vector<std::pair<double, uint64_t>> values;
    for (uint64_t bits = 0; bits < (uint64_t{1} << ir::DTypeBits(t)); ++bits) {
      const double v = DecodeFloat(bits, t);
      if (std::isfinite(v) && !(v == 0 && std::signbit(v))) values.emplace_back(v, bits);
    }
    std::sort(values.begin(), values.end());
    const double max = values.back().first;
    for (int i = 0; i < 20000; ++i) {
      // Magnitudes spread over the format's whole range, subnormals included.
      const int lo = t == DType::kBFloat16 ? -136 : -26;
      const int hi = t == DType::kBFloat16 ? 128 : 17;
      const double mag = std::ldexp(1.0 + static_cast<double>(rng() >> 11) * 0x1.0p-53,
                                    lo + static_cast<int>(rng() % (hi - lo)));
      const double x = (rng() & 1) ? mag : -mag;
      auto it = std::lower_bound(values.begin(), values.end(), std::make_pair(x, uint64_t{0}));
      double expected;
      if (std::fabs(x) > max) {
        const bool fp8 = ir::IsFloat8(t);
        const double half_ulp_above_max = (max - std::prev(values.end(), 2)->first) / 2;
        if (fp8) {
          expected = std::copysign(max, x);
        } else if (std::fabs(x) >= max + half_ulp_above_max) {
          expected = std::copysign(std::numeric_limits<double>::infinity(), x);
        } else {
          expected = std::copysign(max, x);
        }
      } else {
        const auto& above = *it;
        const auto& below = *std::prev(it);
        const double da = above.first - x, db = x - below.first;
        if (da < db || (da == db && above.second % 2 == 0)) {
          expected = above.first;
        } else {
          expected = below.first;
        }
      }
      ASSERT_EQ(RoundToFloat(x, t), expected) << ir::DTypeName(t) << " x=" << x << " seed=" << seed;
    }
  }
}

#if defined(__FLT16_MAX__)
// The compiler's own _Float16 conversion is a second, independent reference.
TEST(Float16Test, MatchesCompilerFloat16) {
  const uint64_t seed = 7;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 100000; ++i) {
    const double x = std::ldexp(static_cast<double>(rng() >> 11) * 0x1.0p-53 - 0.5,
                                static_cast<int>(rng() % 44) - 26);
    ASSERT_EQ(RoundToFloat(x, DType::kFloat16), static_cast<double>(static_cast<_Float16>(x)))
        << "x=" << x << " seed=" << seed;
  }
}
#endif

TEST(IntegerTest, WrapsLikeC) {
  EXPECT_EQ(WrapInt(128, DType::kInt8), -128);
  EXPECT_EQ(WrapInt(-129, DType::kInt8), 127);
  EXPECT_EQ(WrapInt(261, DType::kUInt8), 5);
  EXPECT_EQ(WrapInt(-1, DType::kUInt8), 255);
  EXPECT_EQ(WrapInt(int64_t{1} << 31, DType::kInt32), INT32_MIN);
  EXPECT_EQ(WrapInt(40000, DType::kInt16), 40000 - 65536);
  EXPECT_EQ(WrapInt(8, DType::kInt4), -8);
  EXPECT_EQ(WrapInt(-9, DType::kInt4), 7);
  EXPECT_EQ(WrapInt(15, DType::kInt4), -1);
  EXPECT_EQ(WrapInt(42, DType::kBool), 1);
}

TEST(IntegerTest, FloatConversionTruncatesAndSaturates) {
  EXPECT_EQ(FloatToInt(3.9, DType::kInt32), 3);
  EXPECT_EQ(FloatToInt(-3.9, DType::kInt32), -3);
  EXPECT_EQ(FloatToInt(1e10, DType::kInt32), INT32_MAX);
  EXPECT_EQ(FloatToInt(-1e30, DType::kInt64), INT64_MIN);
  EXPECT_EQ(FloatToInt(200.5, DType::kInt8), 127);
  EXPECT_EQ(FloatToInt(-1.0, DType::kUInt8), 0);
  EXPECT_EQ(FloatToInt(kNaN, DType::kInt32), 0);
  EXPECT_EQ(FloatToInt(0.25, DType::kBool), 1);
  EXPECT_EQ(IntToFloat(2049, DType::kFloat16), 2048.0);  // tie to even
  EXPECT_EQ(IntToFloat(16777217, DType::kFloat32), 16777216.0);
}

TEST(UnsignedTest, WrapsModuloTheirWidth) {
  EXPECT_EQ(WrapInt(65536 + 7, DType::kUInt16), 7);
  EXPECT_EQ(WrapInt(-1, DType::kUInt16), 65535);
  EXPECT_EQ(WrapInt(-1, DType::kUInt32), 4294967295);
  EXPECT_EQ(WrapInt((int64_t{1} << 32) + 9, DType::kUInt32), 9);
  EXPECT_EQ(WrapInt(int64_t{1} << 31, DType::kUInt32), int64_t{1} << 31);  // stays positive
  EXPECT_EQ(WrapInt(-1, DType::kUInt64), -1);                              // the bits of 2^64 - 1
  EXPECT_EQ(IntMax(DType::kUInt16), 65535);
  EXPECT_EQ(IntMax(DType::kUInt32), 4294967295);
  EXPECT_EQ(static_cast<uint64_t>(IntMax(DType::kUInt64)), UINT64_MAX);
  EXPECT_EQ(IntMin(DType::kUInt64), 0);
}

TEST(UnsignedTest, Uint64ComparesAndConvertsAsUnsigned) {
  const int64_t big = static_cast<int64_t>(uint64_t{1} << 63);  // 2^63
  EXPECT_TRUE(IntLess(1, big, DType::kUInt64));
  EXPECT_FALSE(IntLess(1, big, DType::kInt64));
  EXPECT_TRUE(IntLess(big, -1, DType::kUInt64));  // 2^63 < 2^64 - 1
  EXPECT_EQ(IntAsDouble(big, DType::kUInt64), 9223372036854775808.0);
  EXPECT_EQ(IntAsDouble(-1, DType::kUInt64), 18446744073709551616.0);  // rounded up
  EXPECT_EQ(IntToFloat(big, DType::kFloat64, DType::kUInt64), 9223372036854775808.0);
  EXPECT_EQ(IntToFloat(big, DType::kFloat64), -9223372036854775808.0);  // read as int64
  EXPECT_EQ(IntToFloat(-1, DType::kFloat32, DType::kUInt64), 18446744073709551616.0);
  EXPECT_EQ(IntToFloat(big + 3, DType::kFloat16, DType::kUInt64), kInf);  // beyond 65504
  EXPECT_EQ(IntToFloat(4294967295, DType::kFloat32, DType::kUInt32), 4294967296.0);
  EXPECT_EQ(IntToFloat(65535, DType::kFloat16, DType::kUInt16), kInf);  // rounds to 65536
  // float -> unsigned truncates and saturates at [0, 2^bits - 1].
  EXPECT_EQ(FloatToInt(1e19, DType::kUInt64),
            static_cast<int64_t>(uint64_t{10000000000000000000u}));
  EXPECT_EQ(FloatToInt(9223372036854775808.0, DType::kUInt64), big);
  EXPECT_EQ(FloatToInt(1e30, DType::kUInt64), -1);  // 2^64 - 1
  EXPECT_EQ(FloatToInt(-5.5, DType::kUInt64), 0);
  EXPECT_EQ(FloatToInt(kNaN, DType::kUInt64), 0);
  EXPECT_EQ(FloatToInt(3e9 + 0.75, DType::kUInt32), 3000000000);
  EXPECT_EQ(FloatToInt(5e9, DType::kUInt32), 4294967295);
  EXPECT_EQ(FloatToInt(70000.0, DType::kUInt16), 65535);
  EXPECT_EQ(FloatToInt(-1.0, DType::kUInt16), 0);
}

TEST(MaxMinTest, FollowFmaxfNaNRules) {
  EXPECT_EQ(FloatMax(kNaN, 1.0), 1.0);
  EXPECT_EQ(FloatMax(-3.0, kNaN), -3.0);
  EXPECT_EQ(FloatMin(kNaN, 2.0), 2.0);
  EXPECT_TRUE(std::isnan(FloatMax(kNaN, kNaN)));
  EXPECT_EQ(FloatMax(-kInf, 5.0), 5.0);
}

}  // namespace
// NaNs keep their sign and payload through double (bit casts and views read
// arbitrary bits), signalling ones included; a NaN made by arithmetic
// (payload 0 in the format's bits) encodes as a quiet NaN.
TEST(NumericsNaN, PayloadsRoundTripBitForBit) {
  const std::pair<DType, std::vector<uint64_t>> cases[] = {
      {DType::kFloat32, {0x7FC00000u, 0x7F800001u, 0xFFA5A5A5u, 0x7FBFFFFFu}},
      {DType::kFloat16, {0x7E00u, 0x7C01u, 0xFE5Au, 0x7DFFu}},
      {DType::kBFloat16, {0x7FC0u, 0x7F81u, 0xFFA5u}},
      {DType::kFloat8E5M2, {0x7Du, 0x7Eu, 0xFFu}},
  };
  for (const auto& [t, patterns] : cases) {
    for (uint64_t bits : patterns) {
      double d = DecodeFloat(bits, t);
      EXPECT_TRUE(std::isnan(d)) << DTypeName(t) << " " << bits;
      EXPECT_EQ(EncodeFloat(d, t), bits) << DTypeName(t) << " " << bits;
    }
  }
  EXPECT_EQ(EncodeFloat(std::numeric_limits<double>::quiet_NaN(), DType::kFloat16), 0x7E00u);
}

}  // namespace tilec::interp
