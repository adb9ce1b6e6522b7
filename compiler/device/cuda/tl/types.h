// tl element types for CUDA (compiled by NVRTC).
//
// Contract (docs/cuda_backend.md, "Element types"): the fixed-width integer
// types at global scope, and the 16/8-bit storage types tl::half_t,
// tl::bfloat16_t, tl::fp8_e4m3_t and tl::fp8_e5m2_t. Each storage type holds
// the CUDA type it wraps bit-for-bit (member `storage`), is constructed from
// float only explicitly (round-to-nearest-even; fp8 saturates to the largest
// finite value), and converts to float implicitly. Arithmetic goes through
// float: `tl::half_t(float(a) + float(b))`, or for + - * of float16 and
// bfloat16 their own instructions (tl::hadd, tl::hsub, tl::hmul in
// tl/arith.h), which give the same value. `bits()` / `from_bits()` give the
// raw encoding.
#ifndef TILEC_DEVICE_CUDA_TL_TYPES_H_
#define TILEC_DEVICE_CUDA_TL_TYPES_H_

#if defined(__CUDACC_RTC__)
// NVRTC ships no <cstdint>; these are the LP64 definitions the host uses.
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#else
#include <cstdint>
#endif

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

static_assert(sizeof(int64_t) == 8 && sizeof(int32_t) == 4 && sizeof(int16_t) == 2 &&
                  sizeof(int8_t) == 1,
              "tl: unexpected integer type sizes");

namespace tl {

// Lanes per warp.
inline constexpr int warp_lanes = 32;

struct half_t {
  __half storage;

  half_t() = default;
  __device__ __forceinline__ explicit half_t(float f) : storage(__float2half_rn(f)) {}
  __device__ __forceinline__ operator float() const { return __half2float(storage); }
  __device__ __forceinline__ uint16_t bits() const { return __half_as_ushort(storage); }
  __device__ __forceinline__ static half_t from_bits(uint16_t b) {
    half_t h;
    h.storage = __ushort_as_half(b);
    return h;
  }
};

struct bfloat16_t {
  __nv_bfloat16 storage;

  bfloat16_t() = default;
  __device__ __forceinline__ explicit bfloat16_t(float f) : storage(__float2bfloat16_rn(f)) {}
  __device__ __forceinline__ operator float() const { return __bfloat162float(storage); }
  __device__ __forceinline__ uint16_t bits() const { return __bfloat16_as_ushort(storage); }
  __device__ __forceinline__ static bfloat16_t from_bits(uint16_t b) {
    bfloat16_t h;
    h.storage = __ushort_as_bfloat16(b);
    return h;
  }
};

namespace detail {

// fp8 -> float is exact through half.
__device__ __forceinline__ float fp8_to_float(__nv_fp8_storage_t x, __nv_fp8_interpretation_t k) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(x, k)));
}

}  // namespace detail

struct fp8_e4m3_t {
  __nv_fp8_e4m3 storage;

  fp8_e4m3_t() = default;
  __device__ __forceinline__ explicit fp8_e4m3_t(float f) {
    storage.__x = __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3);
  }
  __device__ __forceinline__ operator float() const {
    return detail::fp8_to_float(storage.__x, __NV_E4M3);
  }
  __device__ __forceinline__ uint8_t bits() const { return storage.__x; }
  __device__ __forceinline__ static fp8_e4m3_t from_bits(uint8_t b) {
    fp8_e4m3_t h;
    h.storage.__x = b;
    return h;
  }
};

struct fp8_e5m2_t {
  __nv_fp8_e5m2 storage;

  fp8_e5m2_t() = default;
  __device__ __forceinline__ explicit fp8_e5m2_t(float f) {
    storage.__x = __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2);
  }
  __device__ __forceinline__ operator float() const {
    return detail::fp8_to_float(storage.__x, __NV_E5M2);
  }
  __device__ __forceinline__ uint8_t bits() const { return storage.__x; }
  __device__ __forceinline__ static fp8_e5m2_t from_bits(uint8_t b) {
    fp8_e5m2_t h;
    h.storage.__x = b;
    return h;
  }
};

static_assert(sizeof(half_t) == 2 && alignof(half_t) == 2, "tl::half_t must be 2 bytes");
static_assert(sizeof(bfloat16_t) == 2 && alignof(bfloat16_t) == 2,
              "tl::bfloat16_t must be 2 bytes");
static_assert(sizeof(fp8_e4m3_t) == 1 && sizeof(fp8_e5m2_t) == 1, "tl fp8 types must be 1 byte");

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_TYPES_H_
