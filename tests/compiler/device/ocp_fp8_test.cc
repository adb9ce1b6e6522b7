// The software OCP float8 codec of the AMD device library
// (compiler/device/common/tl/ocp_fp8.h) against the host twin's conversions
// (host/tl/types.h, which the emulator and the interpreter share): every
// encoding decodes to the same value, and floats convert to the same bits at
// every rounding boundary, around every representable value, at the
// specials, and on random floats.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>

#include "gtest/gtest.h"

#define __device__
#define __forceinline__ inline
#include "tl/ocp_fp8.h"
#include "tl/types.h"

namespace {

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

template <typename Codec, typename Twin>
void ExpectSameDecoding() {
  for (int b = 0; b < 256; ++b) {
    const float ours = Codec::decode(static_cast<unsigned char>(b));
    const float twin = static_cast<float>(Twin::from_bits(static_cast<uint8_t>(b)));
    if (std::isnan(twin)) {
      EXPECT_TRUE(std::isnan(ours)) << "bits " << b;
    } else {
      EXPECT_EQ(Bits(ours), Bits(twin)) << "bits " << b << ": " << ours << " vs " << twin;
    }
  }
}

template <typename Codec, typename Twin>
void ExpectSameEncoding(float x) {
  const unsigned ours = Codec::encode(x);
  const unsigned twin = Twin(x).bits();
  ASSERT_EQ(ours, twin) << "float " << x << " (bits 0x" << std::hex << Bits(x) << ")";
}

template <typename Codec, typename Twin>
void ExpectSameEncodings() {
  // Around every representable value and every midpoint between neighbours:
  // the value, and one and two float ulps either side.
  std::vector<float> points;
  for (int b = 0; b < 256; ++b) {
    const float v = static_cast<float>(Twin::from_bits(static_cast<uint8_t>(b)));
    if (std::isnan(v)) continue;
    points.push_back(v);
    const float next = static_cast<float>(Twin::from_bits(static_cast<uint8_t>(b + 1)));
    if (b + 1 < 256 && !std::isnan(next) && !std::isinf(next) && !std::isinf(v)) {
      points.push_back((v + next) / 2);  // exact in float
    }
  }
  for (float p : points) {
    for (float x : {p, -p}) {
      float lo = x, hi = x;
      ExpectSameEncoding<Codec, Twin>(x);
      for (int i = 0; i < 2; ++i) {
        lo = std::nextafter(lo, -INFINITY);
        hi = std::nextafter(hi, INFINITY);
        ExpectSameEncoding<Codec, Twin>(lo);
        ExpectSameEncoding<Codec, Twin>(hi);
      }
    }
  }
  for (uint32_t special : {0x0u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u,
                           0x7f7fffffu, 0x00000001u, 0x807fffffu, 0x00800000u}) {
    ExpectSameEncoding<Codec, Twin>(FromBits(special));
  }
  // Random floats: all bit patterns, and magnitudes within the format.
  const unsigned seed = std::random_device{}();
  std::printf("ocp_fp8_test seed %u\n", seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> exponent(-20.0f, 18.0f);
  for (int i = 0; i < 200000; ++i) {
    ExpectSameEncoding<Codec, Twin>(FromBits(static_cast<uint32_t>(rng())));
    const float m = std::exp2(exponent(rng)) * ((rng() & 1) ? 1.0f : -1.0f);
    ExpectSameEncoding<Codec, Twin>(m);
  }
}

TEST(OcpFp8, E4M3DecodesAsTheHostTwin) {
  ExpectSameDecoding<tl::detail::OcpE4M3, tl::fp8_e4m3_t>();
}
TEST(OcpFp8, E5M2DecodesAsTheHostTwin) {
  ExpectSameDecoding<tl::detail::OcpE5M2, tl::fp8_e5m2_t>();
}
TEST(OcpFp8, E4M3EncodesAsTheHostTwin) {
  ExpectSameEncodings<tl::detail::OcpE4M3, tl::fp8_e4m3_t>();
}
TEST(OcpFp8, E5M2EncodesAsTheHostTwin) {
  ExpectSameEncodings<tl::detail::OcpE5M2, tl::fp8_e5m2_t>();
}

}  // namespace
