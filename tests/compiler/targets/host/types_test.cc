// The host twin's element types (compiler/device/host/tl/types.h) against
// (a) the reference interpreter's numerics (interp::EncodeFloat/DecodeFloat),
// over every 16-bit and 8-bit pattern, the rounding boundaries around each,
// and random floats; and (b) when the CUDA toolkit's headers are available,
// CUDA's own conversion routines (their host implementations follow the
// device instructions bit for bit), NaN encodings included.
#include "compiler/device/host/tl/types.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "compiler/interp/numerics.h"
#include "gtest/gtest.h"

#ifdef TILEC_HAVE_CUDA_HEADERS
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#endif

namespace tilec::host {
namespace {

using ir::DType;

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }

// Encoding and decoding of one format through the host type.
struct Format {
  const char* name;
  DType dtype;
  int bits;
  uint32_t (*encode)(float);
  float (*decode)(uint32_t);
  uint32_t nan;  // the canonical NaN the GPU produces
};

const Format kFormats[] = {
    {"float16", DType::kFloat16, 16, [](float f) -> uint32_t { return tl::half_t(f).bits(); },
     [](uint32_t b) -> float { return tl::half_t::from_bits(static_cast<uint16_t>(b)); }, 0x7FFF},
    {"bfloat16", DType::kBFloat16, 16, [](float f) -> uint32_t { return tl::bfloat16_t(f).bits(); },
     [](uint32_t b) -> float { return tl::bfloat16_t::from_bits(static_cast<uint16_t>(b)); },
     0x7FFF},
    {"float8_e4m3", DType::kFloat8E4M3, 8,
     [](float f) -> uint32_t { return tl::fp8_e4m3_t(f).bits(); },
     [](uint32_t b) -> float { return tl::fp8_e4m3_t::from_bits(static_cast<uint8_t>(b)); }, 0x7F},
    {"float8_e5m2", DType::kFloat8E5M2, 8,
     [](float f) -> uint32_t { return tl::fp8_e5m2_t(f).bits(); },
     [](uint32_t b) -> float { return tl::fp8_e5m2_t::from_bits(static_cast<uint8_t>(b)); }, 0x7F},
    {"float8_e4m3fnuz", DType::kFloat8E4M3FNUZ, 8,
     [](float f) -> uint32_t { return tl::fp8_e4m3fnuz_t(f).bits(); },
     [](uint32_t b) -> float { return tl::fp8_e4m3fnuz_t::from_bits(static_cast<uint8_t>(b)); },
     0x80},
    {"float8_e5m2fnuz", DType::kFloat8E5M2FNUZ, 8,
     [](float f) -> uint32_t { return tl::fp8_e5m2fnuz_t(f).bits(); },
     [](uint32_t b) -> float { return tl::fp8_e5m2fnuz_t::from_bits(static_cast<uint8_t>(b)); },
     0x80},
};

// Every float whose rounding into `f` is decided near a representable value:
// each finite value, the midpoints to its neighbour (ties), one float ulp on
// either side of each midpoint, and beyond the largest finite value.
std::vector<float> BoundaryInputs(const Format& f) {
  std::vector<float> xs;
  const uint32_t count = uint32_t{1} << f.bits;
  const uint32_t sign = count >> 1;
  for (uint32_t b = 0; b < sign; ++b) {
    const double v = interp::DecodeFloat(b, f.dtype);
    const double next = interp::DecodeFloat(b + 1, f.dtype);
    if (std::isnan(v) || std::isinf(v)) continue;
    xs.push_back(static_cast<float>(v));
    // Past the largest finite value "next" is inf or NaN: use the value one
    // step further out (the midpoint to the first out-of-range value).
    const double step = std::isfinite(next) ? next - v : v - interp::DecodeFloat(b - 1, f.dtype);
    const float mid = static_cast<float>(v + step / 2);  // exact: one more bit than f
    xs.push_back(mid);
    xs.push_back(std::nextafter(mid, 0.0f));
    xs.push_back(std::nextafter(mid, std::numeric_limits<float>::infinity()));
  }
  for (float x :
       {1e30f, 3e38f, std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(), 1e-30f}) {
    xs.push_back(x);
  }
  const size_t n = xs.size();
  for (size_t i = 0; i < n; ++i) xs.push_back(-xs[i]);
  return xs;
}

TEST(HostTypesTest, DecodesEveryPatternLikeTheInterpreter) {
  for (const Format& f : kFormats) {
    SCOPED_TRACE(f.name);
    for (uint32_t b = 0; b < (uint32_t{1} << f.bits); ++b) {
      const float got = f.decode(b);
      const double want = interp::DecodeFloat(b, f.dtype);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << "pattern " << b;
        continue;
      }
      ASSERT_EQ(Bits(got), Bits(static_cast<float>(want))) << "pattern " << b;
    }
  }
}

TEST(HostTypesTest, RoundsAtEveryBoundaryLikeTheInterpreter) {
  for (const Format& f : kFormats) {
    SCOPED_TRACE(f.name);
    for (float x : BoundaryInputs(f)) {
      ASSERT_EQ(f.encode(x), interp::EncodeFloat(x, f.dtype))
          << "x = " << x << " (bits 0x" << std::hex << Bits(x) << ")";
    }
  }
}

TEST(HostTypesTest, RoundsRandomFloatsLikeTheInterpreter) {
  const uint32_t seed = std::random_device()();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  for (const Format& f : kFormats) {
    SCOPED_TRACE(f.name);
    for (int i = 0; i < 200000; ++i) {
      // Half the samples over all bit patterns, half near the format's range.
      float x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
      if (i % 2 == 1) x = std::ldexp(static_cast<float>(rng()) / 4294967296.0f, (i / 2) % 40 - 24);
      if (std::isnan(x)) continue;
      ASSERT_EQ(f.encode(x), interp::EncodeFloat(x, f.dtype)) << "x = " << x;
    }
  }
}

TEST(HostTypesTest, NaNBecomesTheHardwareCanonicalNaN) {
  const float nans[] = {std::numeric_limits<float>::quiet_NaN(),
                        -std::numeric_limits<float>::quiet_NaN(), std::bit_cast<float>(0x7F800001u),
                        std::bit_cast<float>(0xFFC01234u)};
  for (const Format& f : kFormats) {
    SCOPED_TRACE(f.name);
    for (float x : nans) EXPECT_EQ(f.encode(x), f.nan);
    EXPECT_EQ(Bits(f.decode(f.nan)), f.dtype == DType::kBFloat16 ? 0x7FFF0000u : 0x7FFFFFFFu);
  }
}

TEST(HostTypesTest, KnownRoundingCases) {
  EXPECT_EQ(tl::half_t(65504.0f).bits(), 0x7BFF);
  EXPECT_EQ(tl::half_t(65519.0f).bits(), 0x7BFF);
  EXPECT_EQ(tl::half_t(65520.0f).bits(), 0x7C00);  // the tie rounds to even: infinity
  EXPECT_EQ(tl::half_t(-1e9f).bits(), 0xFC00);
  EXPECT_EQ(tl::half_t(std::ldexp(1.0f, -24)).bits(), 0x0001);
  EXPECT_EQ(tl::half_t(std::ldexp(1.0f, -25)).bits(), 0x0000);  // tie to even zero
  EXPECT_EQ(tl::half_t(-std::ldexp(1.0f, -25)).bits(), 0x8000);
  EXPECT_EQ(tl::half_t(std::ldexp(1.5f, -25)).bits(), 0x0001);
  EXPECT_EQ(tl::half_t(1.0f + std::ldexp(1.0f, -11)).bits(), 0x3C00);      // tie, even
  EXPECT_EQ(tl::half_t(1.0f + 3 * std::ldexp(1.0f, -11)).bits(), 0x3C02);  // tie, odd -> up
  EXPECT_EQ(tl::bfloat16_t(1.0f + std::ldexp(1.0f, -8)).bits(), 0x3F80);
  EXPECT_EQ(tl::bfloat16_t(1.0f + 3 * std::ldexp(1.0f, -8)).bits(), 0x3F82);
  EXPECT_EQ(tl::bfloat16_t(3.4e38f).bits(), 0x7F80);
  EXPECT_EQ(tl::fp8_e4m3_t(448.0f).bits(), 0x7E);
  EXPECT_EQ(tl::fp8_e4m3_t(480.0f).bits(), 0x7E);  // would round past the max: saturates
  EXPECT_EQ(tl::fp8_e4m3_t(std::numeric_limits<float>::infinity()).bits(), 0x7E);
  EXPECT_EQ(tl::fp8_e4m3_t(-std::numeric_limits<float>::infinity()).bits(), 0xFE);
  EXPECT_EQ(tl::fp8_e4m3_t(std::ldexp(1.0f, -9)).bits(), 0x01);  // smallest subnormal
  EXPECT_EQ(tl::fp8_e4m3_t(std::ldexp(1.0f, -10)).bits(), 0x00);
  EXPECT_EQ(tl::fp8_e5m2_t(57344.0f).bits(), 0x7B);
  EXPECT_EQ(tl::fp8_e5m2_t(1e6f).bits(), 0x7B);
  EXPECT_EQ(tl::fp8_e5m2_t(-1e6f).bits(), 0xFB);
  EXPECT_EQ(float(tl::fp8_e4m3_t::from_bits(0x7E)), 448.0f);
  EXPECT_EQ(float(tl::half_t::from_bits(0x0001)), std::ldexp(1.0f, -24));
  EXPECT_EQ(float(tl::bfloat16_t::from_bits(0x0001)), std::ldexp(1.0f, -133));
  EXPECT_TRUE(std::isinf(float(tl::half_t::from_bits(0xFC00))));
}

// AMD's fnuz float8: exponent bias 8 (e4m3) / 16 (e5m2), so 1.0 is 0x40 in
// both; no infinities (saturate), no -0 (0x80 is the NaN).
TEST(HostTypesTest, FnuzFloat8Cases) {
  using E4 = tl::fp8_e4m3fnuz_t;
  using E5 = tl::fp8_e5m2fnuz_t;
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(E4(1.0f).bits(), 0x40);
  EXPECT_EQ(E5(1.0f).bits(), 0x40);
  EXPECT_EQ(E4(-1.0f).bits(), 0xC0);
  EXPECT_EQ(E4(240.0f).bits(), 0x7F);
  EXPECT_EQ(E4(250.0f).bits(), 0x7F);  // past the max: saturates
  EXPECT_EQ(E4(inf).bits(), 0x7F);
  EXPECT_EQ(E4(-inf).bits(), 0xFF);
  EXPECT_EQ(E5(57344.0f).bits(), 0x7F);
  EXPECT_EQ(E5(-1e9f).bits(), 0xFF);
  EXPECT_EQ(E4(std::ldexp(1.0f, -10)).bits(), 0x01);  // smallest subnormal
  EXPECT_EQ(E5(std::ldexp(1.0f, -17)).bits(), 0x01);
  EXPECT_EQ(E4(-0.0f).bits(), 0x00);  // no negative zero
  EXPECT_EQ(E4(-std::ldexp(1.0f, -12)).bits(), 0x00);
  EXPECT_EQ(E5(-std::ldexp(1.0f, -19)).bits(), 0x00);
  EXPECT_EQ(float(E4::from_bits(0x7F)), 240.0f);
  EXPECT_EQ(float(E5::from_bits(0x7F)), 57344.0f);
  EXPECT_EQ(float(E4::from_bits(0xFF)), -240.0f);
  EXPECT_TRUE(std::isnan(float(E4::from_bits(0x80))));
  EXPECT_TRUE(std::isnan(float(E5::from_bits(0x80))));
  EXPECT_EQ(interp::EncodeFloat(-0.0, DType::kFloat8E4M3FNUZ), 0u);
  EXPECT_EQ(interp::RoundToFloat(-1e-9, DType::kFloat8E5M2FNUZ), 0.0);
  EXPECT_FALSE(std::signbit(interp::RoundToFloat(-1e-9, DType::kFloat8E5M2FNUZ)));
  EXPECT_EQ(interp::MaxFinite(DType::kFloat8E4M3FNUZ), 240.0);
}

#ifdef TILEC_HAVE_CUDA_HEADERS
// CUDA's conversions, as the toolkit's headers implement them for the host.
uint32_t CudaEncode(const Format& f, float x) {
  switch (f.dtype) {
    case DType::kFloat16: return __half_as_ushort(__float2half_rn(x));
    case DType::kBFloat16: return __bfloat16_as_ushort(__float2bfloat16_rn(x));
    case DType::kFloat8E4M3: return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    default: return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
  }
}

float CudaDecode(const Format& f, uint32_t b) {
  switch (f.dtype) {
    case DType::kFloat16: return __half2float(__ushort_as_half(static_cast<uint16_t>(b)));
    case DType::kBFloat16: return __bfloat162float(__ushort_as_bfloat16(static_cast<uint16_t>(b)));
    case DType::kFloat8E4M3:
      return __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<uint8_t>(b), __NV_E4M3)));
    default:
      return __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<uint8_t>(b), __NV_E5M2)));
  }
}

TEST(HostTypesTest, BitExactWithCudaConversions) {
  const uint32_t seed = std::random_device()();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  for (const Format& f : kFormats) {
    if (ir::IsFnuz(f.dtype)) continue;  // AMD's formats: CUDA has no conversions for them
    SCOPED_TRACE(f.name);
    for (uint32_t b = 0; b < (uint32_t{1} << f.bits); ++b) {
      ASSERT_EQ(Bits(f.decode(b)), Bits(CudaDecode(f, b))) << "pattern " << b;
    }
    std::vector<float> xs = BoundaryInputs(f);
    for (int i = 0; i < 200000; ++i)
      xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
    xs.push_back(std::numeric_limits<float>::quiet_NaN());
    xs.push_back(-std::numeric_limits<float>::quiet_NaN());
    for (float x : xs) {
      ASSERT_EQ(f.encode(x), CudaEncode(f, x)) << "x bits 0x" << std::hex << Bits(x);
    }
  }
}
#endif

}  // namespace
}  // namespace tilec::host
