// AMD's matrix instructions over the 64-lane wavefront (gfx90a, gfx942),
// from clang's amdgcn builtins; the host twin is host/tl/mfma.h.
//
//   mfma_32x32x8(d, a, b)    v_mfma_f32_32x32x8_{f16,bf16}: d (16 floats) += A @ B
//   mfma_16x16x16(d, a, b)   v_mfma_f32_16x16x16_{f16,bf16}: d (4 floats) += A @ B
//
// a and b are this lane's four operand values: A(i, k) is a[k % 4] of lane
// i + T * (k / 4), B(k, j) is b[k % 4] of lane j + T * (k / 4). D register r
// of lane l is row 8 * (r / 4) + 4 * (l / 32) + r % 4 (T = 32) or 4 * (l /
// 16) + r (T = 16), column l % T. bfloat16 uses the _1k forms (four values
// per lane), which both targets have.
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
  V v;
#pragma unroll
  for (int r = 0; r < R; ++r) v[r] = d[r];
  return v;
}

template <int R, typename V>
__device__ __forceinline__ void store_acc(float (&d)[R], const V& v) {
#pragma unroll
  for (int r = 0; r < R; ++r) d[r] = v[r];
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

}  // namespace tl

#endif  // TILEC_DEVICE_HIP_TL_MFMA_H_
