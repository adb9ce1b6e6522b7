// Tensor-core matrix multiply-accumulate for CUDA (sm_80 and later):
// D = A * B + C for one 16x8x16 tile per warp, f32 accumulators.
//
//   mma_m16n8k16_f16f32   mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
//   mma_m16n8k16_bf16f32  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
//
// Every lane of the warp must execute the call. Per-lane fragments (lane id
// l, g = l >> 2, q = l & 3; two 16-bit values per register, lower column in
// the low half):
//   a[0] (g, 2q..2q+1)   a[1] (g+8, 2q..2q+1)   a[2] (g, 2q+8..)   a[3] (g+8, 2q+8..)
//   b[0] (k=2q..2q+1, n=g)   b[1] (k=2q+8..2q+9, n=g)
//   c/d[0..1] (g, 2q), (g, 2q+1)   c/d[2..3] (g+8, 2q), (g+8, 2q+1)
// d may be the same array as c.
#ifndef TILEC_DEVICE_CUDA_TL_MMA_H_
#define TILEC_DEVICE_CUDA_TL_MMA_H_

#include "tl/types.h"

namespace tl {
namespace detail {

template <int ND, int NA, int NB, int NC>
__device__ __forceinline__ void check_mma_m16n8k16_fragments() {
  static_assert(ND == 4 && NC == 4,
                "mma m16n8k16: the f32 accumulator fragment is float[4] per lane (c and d)");
  static_assert(NA == 4, "mma m16n8k16: the A fragment (16x16, 16-bit) is uint32_t[4] per lane");
  static_assert(NB == 2, "mma m16n8k16: the B fragment (16x8, 16-bit) is uint32_t[2] per lane");
}

}  // namespace detail

template <int ND, int NA, int NB, int NC>
__device__ __forceinline__ void mma_m16n8k16_f16f32(float (&d)[ND], const uint32_t (&a)[NA],
                                                    const uint32_t (&b)[NB], const float (&c)[NC]) {
  detail::check_mma_m16n8k16_fragments<ND, NA, NB, NC>();
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}

template <int ND, int NA, int NB, int NC>
__device__ __forceinline__ void mma_m16n8k16_bf16f32(float (&d)[ND], const uint32_t (&a)[NA],
                                                     const uint32_t (&b)[NB],
                                                     const float (&c)[NC]) {
  detail::check_mma_m16n8k16_fragments<ND, NA, NB, NC>();
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_MMA_H_
