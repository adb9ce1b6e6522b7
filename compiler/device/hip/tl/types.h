// Element types for AMD GPUs: the integer types, tl::half_t and
// tl::bfloat16_t (same contract as cuda/tl/types.h: the raw encoding in
// `storage`, explicit construction from float rounding to nearest even,
// implicit conversion to float, bits() / from_bits()). half_t converts with
// the hardware's v_cvt_f16_f32 (_Float16); bfloat16_t, which gfx90a and
// gfx942 cannot convert to natively, rounds in integer arithmetic; the OCP
// float8 types (fp8_e4m3_t, fp8_e5m2_t: NVIDIA's, TileLang's float8_e4m3 /
// float8_e5m2), which neither converts natively, likewise (tl/ocp_fp8.h);
// on gfx942 also its float8 (fnuz) types.
#ifndef TILEC_DEVICE_HIP_TL_TYPES_H_
#define TILEC_DEVICE_HIP_TL_TYPES_H_

typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

#include "tl/ocp_fp8.h"

namespace tl {

// Lanes per wavefront on gfx90a and gfx942.
inline constexpr int warp_lanes = 64;
inline constexpr int wave_size = 64;

struct half_t {
  uint16_t storage;

  half_t() = default;
  __device__ __forceinline__ explicit half_t(float f)
      : storage(__builtin_bit_cast(uint16_t, static_cast<_Float16>(f))) {}
  __device__ __forceinline__ operator float() const {
    return static_cast<float>(__builtin_bit_cast(_Float16, storage));
  }
  __device__ __forceinline__ uint16_t bits() const { return storage; }
  __device__ __forceinline__ static half_t from_bits(uint16_t b) {
    half_t h;
    h.storage = b;
    return h;
  }
};

struct bfloat16_t {
  uint16_t storage;

  bfloat16_t() = default;
  __device__ __forceinline__ explicit bfloat16_t(float f) {
    const uint32_t u = __builtin_bit_cast(uint32_t, f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      storage = static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN, sign kept
    } else {
      storage = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
  }
  __device__ __forceinline__ operator float() const {
    return __builtin_bit_cast(float, static_cast<uint32_t>(storage) << 16);
  }
  __device__ __forceinline__ uint16_t bits() const { return storage; }
  __device__ __forceinline__ static bfloat16_t from_bits(uint16_t b) {
    bfloat16_t h;
    h.storage = b;
    return h;
  }
};

// The OCP float8 pair, converted in software (tl/ocp_fp8.h): saturating,
// round to nearest even, the sign of zero kept, 0x7F the NaN.
template <typename Format>
struct ocp_fp8_t {
  uint8_t storage;

  ocp_fp8_t() = default;
  __device__ __forceinline__ explicit ocp_fp8_t(float f) : storage(Format::encode(f)) {}
  __device__ __forceinline__ operator float() const { return Format::decode(storage); }
  __device__ __forceinline__ uint8_t bits() const { return storage; }
  __device__ __forceinline__ static ocp_fp8_t from_bits(uint8_t b) {
    ocp_fp8_t h;
    h.storage = b;
    return h;
  }
};

using fp8_e4m3_t = ocp_fp8_t<detail::OcpE4M3>;
using fp8_e5m2_t = ocp_fp8_t<detail::OcpE5M2>;

static_assert(sizeof(fp8_e4m3_t) == 1 && sizeof(fp8_e5m2_t) == 1, "tl fp8 types must be 1 byte");

#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
// AMD's float8 (gfx942's "fnuz" formats: no -0, no infinities, 0x80 the one
// NaN): fp8_e4m3fnuz_t (bias 8, max 240) and fp8_e5m2fnuz_t (bias 16, max
// 57344). Conversion from float saturates to +-max (HIP's __HIP_SATFINITE,
// the host twin's and the interpreter's rule), keeps NaN as 0x80, rounds to
// nearest even in v_cvt_pk_{fp8,bf8}_f32, and makes every zero +0; to float
// it is exact (v_cvt_f32_{fp8,bf8}).
namespace detail {

template <bool Bf8>
__device__ __forceinline__ uint8_t fnuz_from_float(float f) {
  constexpr float max = Bf8 ? 57344.0f : 240.0f;
  if (f != f) return 0x80;
  f = __builtin_fminf(__builtin_fmaxf(f, -max), max);
  const int packed = Bf8 ? __builtin_amdgcn_cvt_pk_bf8_f32(f, f, 0, false)
                         : __builtin_amdgcn_cvt_pk_fp8_f32(f, f, 0, false);
  const uint8_t b = static_cast<uint8_t>(packed & 0xff);
  return b == 0x80 ? 0 : b;  // a finite input never gives the NaN: a negative zero
}

}  // namespace detail

// The storage type of both formats: Bf8 picks e5m2fnuz.
template <bool Bf8>
struct fnuz8_t {
  uint8_t storage;

  fnuz8_t() = default;
  __device__ __forceinline__ explicit fnuz8_t(float f) : storage(detail::fnuz_from_float<Bf8>(f)) {}
  __device__ __forceinline__ operator float() const {
    if constexpr (Bf8) {
      return __builtin_amdgcn_cvt_f32_bf8(static_cast<int>(storage), 0);
    } else {
      return __builtin_amdgcn_cvt_f32_fp8(static_cast<int>(storage), 0);
    }
  }
  __device__ __forceinline__ uint8_t bits() const { return storage; }
  __device__ __forceinline__ static fnuz8_t from_bits(uint8_t b) {
    fnuz8_t h;
    h.storage = b;
    return h;
  }
};

using fp8_e4m3fnuz_t = fnuz8_t<false>;
using fp8_e5m2fnuz_t = fnuz8_t<true>;

static_assert(sizeof(fp8_e4m3fnuz_t) == 1 && sizeof(fp8_e5m2fnuz_t) == 1,
              "tl fp8 types must be 1 byte");
#endif

static_assert(sizeof(half_t) == 2 && alignof(half_t) == 2, "tl::half_t must be 2 bytes");
static_assert(sizeof(bfloat16_t) == 2 && alignof(bfloat16_t) == 2,
              "tl::bfloat16_t must be 2 bytes");

}  // namespace tl

#endif  // TILEC_DEVICE_HIP_TL_TYPES_H_
