// The OCP float8 formats (float8_e4m3 "fn": bias 7, max 448, no infinities,
// S.1111.111 the NaN; float8_e5m2: bias 15, max 57344, IEEE-like) in integer
// and float arithmetic only, for targets without conversion instructions
// for them (AMD: gfx942 converts only the fnuz formats, gfx90a none).
// Target-neutral; the same rules as the host twin (host/tl/types.h) and
// NVIDIA's cvt.rn.satfinite: round to nearest even from the exact float,
// saturate to +-max (infinities included), keep the sign of zero, and make
// every NaN the canonical 0x7F. Decoding is exact; a NaN decodes to float's
// canonical 0x7FFFFFFF.
#ifndef TILEC_DEVICE_COMMON_TL_OCP_FP8_H_
#define TILEC_DEVICE_COMMON_TL_OCP_FP8_H_

namespace tl {
namespace detail {

// One OCP float8 format: explicit mantissa bits, unbiased exponent of the
// smallest normal, magnitude bits of the largest finite value, and whether
// the all-ones exponent holds infinities and NaNs (e5m2) or only values and
// the one NaN S.1111.111 (e4m3).
template <int ManBits, int MinExp, unsigned MaxFinite, bool IeeeSpecials>
struct OcpFp8 {
  __device__ __forceinline__ static unsigned char encode(float x) {
    const unsigned bits = __builtin_bit_cast(unsigned, x);
    const unsigned sign = (bits >> 31) << 7;
    const unsigned abs = bits & 0x7fffffffu;
    if (abs > 0x7f800000u) return 0x7f;  // NaN
    int e = static_cast<int>(abs >> 23) - 127;
    unsigned sig = abs & 0x7fffffu;
    if (e == -127) {
      if (sig == 0) return static_cast<unsigned char>(sign);
      e = -126;  // a float subnormal: far below either format's range
    } else {
      sig |= 0x800000u;
    }
    // value = sig * 2^(e - 23); the format's quantum here is
    // 2^(max(e, MinExp) - ManBits).
    const int top = e > MinExp ? e : MinExp;
    const int shift = (top - ManBits) - (e - 23);              // >= 23 - ManBits
    if (shift >= 25) return static_cast<unsigned char>(sign);  // below half a quantum
    unsigned kept = sig >> shift;
    const unsigned rem = sig & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (kept & 1u))) ++kept;
    // kept counts quanta; a carry into the next binade lands in the exponent.
    const unsigned mag = (static_cast<unsigned>(top - MinExp) << ManBits) + kept;
    return static_cast<unsigned char>(sign | (mag > MaxFinite ? MaxFinite : mag));
  }

  // The magnitude bits placed as a float's exponent and mantissa give the
  // value times 2^(Bias - 127), subnormals included (as float subnormals,
  // exact); one multiplication by a power of two rescales it exactly.
  __device__ __forceinline__ static float decode(unsigned char b) {
    constexpr int kBias = 1 - MinExp;
    const unsigned mag = b & 0x7fu;
    const float scale = __builtin_bit_cast(float, static_cast<unsigned>(254 - kBias) << 23);
    float v = __builtin_bit_cast(float, mag << (23 - ManBits)) * scale;
    if (IeeeSpecials) {
      constexpr unsigned kInf = 0x7fu >> ManBits << ManBits;
      if (mag >= kInf) v = __builtin_bit_cast(float, mag == kInf ? 0x7f800000u : 0x7fffffffu);
    } else if (mag == 0x7fu) {
      return __builtin_bit_cast(float, 0x7fffffffu);
    }
    return (b & 0x80u) != 0 ? -v : v;
  }
};

using OcpE4M3 = OcpFp8<3, -6, 0x7eu, false>;
using OcpE5M2 = OcpFp8<2, -14, 0x7bu, true>;

}  // namespace detail
}  // namespace tl

#endif  // TILEC_DEVICE_COMMON_TL_OCP_FP8_H_
