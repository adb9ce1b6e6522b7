// AMD's matrix instructions over the 64-lane wavefront (gfx90a, gfx942),
// from clang's amdgcn builtins; the host twin is host/tl/mfma.h.
//
//   mfma_32x32x8(d, a, b)    v_mfma_f32_32x32x8_{f16,bf16}: d (16 floats) += A @ B
//   mfma_16x16x16(d, a, b)   v_mfma_f32_16x16x16_{f16,bf16}: d (4 floats) += A @ B
//   mfma_32x32x16(d, a, b)   v_mfma_f32_32x32x16_{fp8,bf8}_{fp8,bf8} (gfx942)
//   mfma_16x16x32(d, a, b)   v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8} (gfx942)
//
// a and b are this lane's four operand values: A(i, k) is a[k % 4] of lane
// i + T * (k / 4), B(k, j) is b[k % 4] of lane j + T * (k / 4). D register r
// of lane l is row 8 * (r / 4) + 4 * (l / 32) + r % 4 (T = 32) or 4 * (l /
// 16) + r (T = 16), column l % T. bfloat16 uses the _1k forms (four values
// per lane), which both targets have. The float8 forms take eight values
// per lane (byte j of the 64-bit operand is a[j]: A(i, k) is a[k % 8] of
// lane i + T * (k / 8)); fp8 is tl::fp8_e4m3fnuz_t, bf8 tl::fp8_e5m2fnuz_t.
#ifndef TILEC_DEVICE_HIP_TL_MFMA_H_
#define TILEC_DEVICE_HIP_TL_MFMA_H_

#include "tl/types.h"

namespace tl {
namespace detail {

typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef short short4 __attribute__((ext_vector_type(4)));
typedef float float4 __attribute__((ext_vector_type(4)));
typedef float float16 __attribute__((ext_vector_type(16)));

// Four 16-bit operand values as the builtin's vector (element type E).
template <typename V, typename E, typename T>
__device__ __forceinline__ V pack4(const T (&x)[4]) {
  V v;
#pragma unroll
  for (int j = 0; j < 4; ++j) v[j] = __builtin_bit_cast(E, x[j].bits());
  return v;
}

template <int R, typename V>
__device__ __forceinline__ V load_acc(const float (&d)[R]) {
  static_assert(sizeof(V) == sizeof(d));
  V v;
  __builtin_memcpy(&v, d, sizeof(v));
  return v;
}

template <int R, typename V>
__device__ __forceinline__ void store_acc(float (&d)[R], const V& v) {
  static_assert(sizeof(V) == sizeof(d));
  __builtin_memcpy(d, &v, sizeof(v));
}

}  // namespace detail

__device__ __forceinline__ void mfma_32x32x8(float (&d)[16], const half_t (&a)[4],
                                             const half_t (&b)[4]) {
  using namespace detail;
  detail::store_acc<16>(d, __builtin_amdgcn_mfma_f32_32x32x8f16(
                               pack4<half4, _Float16>(a), pack4<half4, _Float16>(b), load_acc<16, float16>(d), 0, 0, 0));
}
__device__ __forceinline__ void mfma_32x32x8(float (&d)[16], const bfloat16_t (&a)[4],
                                             const bfloat16_t (&b)[4]) {
  using namespace detail;
  detail::store_acc<16>(d, __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(
                               pack4<short4, short>(a), pack4<short4, short>(b), load_acc<16, float16>(d), 0, 0,
                               0));
}
__device__ __forceinline__ void mfma_16x16x16(float (&d)[4], const half_t (&a)[4],
                                              const half_t (&b)[4]) {
  using namespace detail;
  detail::store_acc<4>(d, __builtin_amdgcn_mfma_f32_16x16x16f16(
                              pack4<half4, _Float16>(a), pack4<half4, _Float16>(b), load_acc<4, float4>(d), 0, 0, 0));
}
__device__ __forceinline__ void mfma_16x16x16(float (&d)[4], const bfloat16_t (&a)[4],
                                              const bfloat16_t (&b)[4]) {
  using namespace detail;
  detail::store_acc<4>(d, __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(
                              pack4<short4, short>(a), pack4<short4, short>(b), load_acc<4, float4>(d), 0, 0, 0));
}

#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
namespace detail {

// Eight float8 operand values as the instruction's 64-bit register.
template <typename T>
__device__ __forceinline__ long pack8(const T (&x)[8]) {
  unsigned long v = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) v |= static_cast<unsigned long>(x[j].bits()) << (8 * j);
  return static_cast<long>(v);
}

template <typename T>
inline constexpr bool is_bf8 = false;
template <>
inline constexpr bool is_bf8<fp8_e5m2fnuz_t> = true;

}  // namespace detail

template <typename AT, typename BT>
__device__ __forceinline__ void mfma_32x32x16(float (&d)[16], const AT (&a)[8], const BT (&b)[8]) {
  using namespace detail;
  const long x = pack8(a), y = pack8(b);
  const float16 c = load_acc<16, float16>(d);
  float16 r;
  if constexpr (!is_bf8<AT> && !is_bf8<BT>) {
    r = __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(x, y, c, 0, 0, 0);
  } else if constexpr (!is_bf8<AT>) {
    r = __builtin_amdgcn_mfma_f32_32x32x16_fp8_bf8(x, y, c, 0, 0, 0);
  } else if constexpr (!is_bf8<BT>) {
    r = __builtin_amdgcn_mfma_f32_32x32x16_bf8_fp8(x, y, c, 0, 0, 0);
  } else {
    r = __builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8(x, y, c, 0, 0, 0);
  }
  store_acc<16>(d, r);
}

template <typename AT, typename BT>
__device__ __forceinline__ void mfma_16x16x32(float (&d)[4], const AT (&a)[8], const BT (&b)[8]) {
  using namespace detail;
  const long x = pack8(a), y = pack8(b);
  const float4 c = load_acc<4, float4>(d);
  float4 r;
  if constexpr (!is_bf8<AT> && !is_bf8<BT>) {
    r = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(x, y, c, 0, 0, 0);
  } else if constexpr (!is_bf8<AT>) {
    r = __builtin_amdgcn_mfma_f32_16x16x32_fp8_bf8(x, y, c, 0, 0, 0);
  } else if constexpr (!is_bf8<BT>) {
    r = __builtin_amdgcn_mfma_f32_16x16x32_bf8_fp8(x, y, c, 0, 0, 0);
  } else {
    r = __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(x, y, c, 0, 0, 0);
  }
  store_acc<4>(d, r);
}
#endif

}  // namespace tl

#endif  // TILEC_DEVICE_HIP_TL_MFMA_H_
