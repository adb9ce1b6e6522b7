// Host twin of cuda/tl/types.h: the 16- and 8-bit float storage types,
// holding the raw bits and converting exactly as the GPU converts them.
//
// - Construction (explicit, from float) rounds to nearest even from the exact
//   value. float16/bfloat16: magnitudes that round beyond the largest finite
//   value become +-inf; fp8 e4m3/e5m2 saturate to +-max (cvt.rn.satfinite),
//   +-inf included. Subnormals are kept; tiny values round to a zero of their
//   sign.
// - NaN converts to the canonical NaN the hardware produces: 0x7FFF for
//   float16 and bfloat16, 0x7F for both fp8 formats (the sign is dropped),
//   0x80 for AMD's fnuz pair (fp8_e4m3fnuz_t: bias 8, max 240;
//   fp8_e5m2fnuz_t: bias 16, max 57344), which saturate as the OCP ones do,
//   have no infinities, and make every zero +0 (0x80 is their only NaN).
// - Conversion to float (implicit) is exact; a NaN becomes float's canonical
//   0x7FFFFFFF (bfloat16 keeps its payload: the conversion is a shift, as on
//   the GPU).
// - Each type is exactly its storage (sizeof 2 or 1), so arrays of them alias
//   the bytes the GPU would hold.
// The fixed-width integer types are at global scope, as on CUDA.
#ifndef TILEC_DEVICE_HOST_TL_TYPES_H_
#define TILEC_DEVICE_HOST_TL_TYPES_H_

#include <bit>
#include <cstdint>

namespace tl {

// Lanes per warp: generated AMD code (which defines TL_AMDGPU before
// including tl/tl.h) runs with 64-lane wavefronts.
#if defined(TL_AMDGPU)
inline constexpr int warp_lanes = 64;
#else
inline constexpr int warp_lanes = 32;
#endif
namespace detail {

// A binary float format narrower than float32.
struct FloatFormat {
  int man_bits;         // explicit mantissa bits
  int min_exp;          // unbiased exponent of the smallest normal
  uint32_t max_finite;  // magnitude bits of the largest finite value
  uint32_t inf;         // magnitude bits of +inf; 0 when the format has none (e4m3)
  bool satfinite;       // conversions clamp to +-max_finite (fp8: cvt.rn.satfinite)
  uint32_t nan;         // canonical NaN bits (no sign)
  int bits;             // storage width
  bool fnuz = false;    // AMD's float8: no -0 (0x80 is the NaN), no infinities
};

inline constexpr FloatFormat kHalfFormat{10, -14, 0x7BFF, 0x7C00, false, 0x7FFF, 16};
inline constexpr FloatFormat kBf16Format{7, -126, 0x7F7F, 0x7F80, false, 0x7FFF, 16};
inline constexpr FloatFormat kE4M3Format{3, -6, 0x7E, 0, true, 0x7F, 8};
inline constexpr FloatFormat kE5M2Format{2, -14, 0x7B, 0x7C, true, 0x7F, 8};
inline constexpr FloatFormat kE4M3FnuzFormat{3, -7, 0x7F, 0, true, 0x80, 8, true};
inline constexpr FloatFormat kE5M2FnuzFormat{2, -15, 0x7F, 0, true, 0x80, 8, true};

// Round-to-nearest-even encoding of the double x into format f.
constexpr uint32_t EncodeFloat(double x, const FloatFormat& f) {
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  const uint32_t sign = static_cast<uint32_t>(bits >> 63) << (f.bits - 1);
  const uint64_t abs = bits & 0x7FFFFFFFFFFFFFFFull;
  if (abs > 0x7FF0000000000000ull) return f.nan;
  const uint32_t overflow = f.satfinite ? f.max_finite : f.inf;
  if (abs == 0x7FF0000000000000ull) return sign | overflow;
  if (abs == 0) return f.fnuz ? 0 : sign;
  int e = static_cast<int>(abs >> 52) - 1023;
  uint64_t sig = abs & 0xFFFFFFFFFFFFFull;
  if (e == -1023) {
    e = -1022;  // a double subnormal: far below every format's range
  } else {
    sig |= uint64_t{1} << 52;
  }
  // value = sig * 2^(e - 52); the target's quantum at this magnitude is
  // 2^(max(e, min_exp) - man_bits).
  const int top = e > f.min_exp ? e : f.min_exp;
  const int shift = (top - f.man_bits) - (e - 52);  // >= 52 - man_bits
  if (shift >= 54) return f.fnuz ? 0 : sign;        // below half the smallest subnormal
  uint64_t kept = sig >> shift;
  const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (kept & 1))) ++kept;
  // kept counts quanta; a carry into the next binade lands in the exponent.
  const uint64_t mag = (static_cast<uint64_t>(top - f.min_exp) << f.man_bits) + kept;
  if (mag > f.max_finite) return sign | overflow;
  if (mag == 0 && f.fnuz) return 0;  // rounded to zero: fnuz has only +0
  return sign | static_cast<uint32_t>(mag);
}

// The exact value of the storage bits of format f, as a float.
constexpr float DecodeFloat(uint32_t bits, const FloatFormat& f) {
  // bfloat16 is the upper half of a float32 (same exponent range): a shift.
  if (f.min_exp == -126) return std::bit_cast<float>(bits << 16);
  if (f.fnuz && bits == f.nan) return std::bit_cast<float>(0x7FFFFFFFu);
  const uint32_t mag_mask = (uint32_t{1} << (f.bits - 1)) - 1;
  const uint32_t mag = bits & mag_mask;
  const bool negative = (bits >> (f.bits - 1)) & 1;
  const uint32_t man_mask = (uint32_t{1} << f.man_bits) - 1;
  const uint32_t exp_field = mag >> f.man_bits;
  const uint32_t exp_max = mag_mask >> f.man_bits;
  if (f.inf != 0 && exp_field == exp_max) {
    if ((mag & man_mask) != 0) return std::bit_cast<float>(0x7FFFFFFFu);
    return std::bit_cast<float>(negative ? 0xFF800000u : 0x7F800000u);
  }
  if (f.inf == 0 && mag == f.nan) return std::bit_cast<float>(0x7FFFFFFFu);
  uint32_t man = mag & man_mask;
  int exp = static_cast<int>(exp_field) - 1 + f.min_exp;  // unbiased, normal case
  if (exp_field == 0) {
    if (man == 0) return std::bit_cast<float>(negative ? 0x80000000u : 0u);
    // Normalise the subnormal (inside float32's normal range for these formats).
    exp = f.min_exp;
    while ((man & (man_mask + 1)) == 0) {
      man <<= 1;
      --exp;
    }
    man &= man_mask;
  }
  const uint32_t out = (negative ? 0x80000000u : 0u) | (static_cast<uint32_t>(exp + 127) << 23) |
                       (man << (23 - f.man_bits));
  return std::bit_cast<float>(out);
}

}  // namespace detail

// The storage types. Same contract as cuda/tl/types.h: the raw encoding in
// `storage`, explicit construction from float, implicit conversion to float,
// bits() / from_bits() for the raw encoding.
#define TILEC_HOST_SMALL_FLOAT(Name, Bits, Format)                                           \
  struct Name {                                                                              \
    Bits storage;                                                                            \
                                                                                             \
    Name() = default;                                                                        \
    constexpr explicit Name(float f)                                                         \
        : storage(static_cast<Bits>(detail::EncodeFloat(static_cast<double>(f), Format))) {} \
    constexpr operator float() const { return detail::DecodeFloat(storage, Format); }        \
    constexpr Bits bits() const { return storage; }                                          \
    static constexpr Name from_bits(Bits b) {                                                \
      Name r;                                                                                \
      r.storage = b;                                                                         \
      return r;                                                                              \
    }                                                                                        \
  };

TILEC_HOST_SMALL_FLOAT(half_t, uint16_t, detail::kHalfFormat)
TILEC_HOST_SMALL_FLOAT(bfloat16_t, uint16_t, detail::kBf16Format)
TILEC_HOST_SMALL_FLOAT(fp8_e4m3_t, uint8_t, detail::kE4M3Format)
TILEC_HOST_SMALL_FLOAT(fp8_e5m2_t, uint8_t, detail::kE5M2Format)
TILEC_HOST_SMALL_FLOAT(fp8_e4m3fnuz_t, uint8_t, detail::kE4M3FnuzFormat)
TILEC_HOST_SMALL_FLOAT(fp8_e5m2fnuz_t, uint8_t, detail::kE5M2FnuzFormat)

#undef TILEC_HOST_SMALL_FLOAT

static_assert(sizeof(half_t) == 2 && alignof(half_t) == 2, "tl::half_t must be 2 bytes");
static_assert(sizeof(bfloat16_t) == 2 && alignof(bfloat16_t) == 2,
              "tl::bfloat16_t must be 2 bytes");
static_assert(sizeof(fp8_e4m3_t) == 1 && sizeof(fp8_e5m2_t) == 1, "tl fp8 types must be 1 byte");
static_assert(sizeof(fp8_e4m3fnuz_t) == 1 && sizeof(fp8_e5m2fnuz_t) == 1,
              "tl fp8 types must be 1 byte");

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_TYPES_H_
