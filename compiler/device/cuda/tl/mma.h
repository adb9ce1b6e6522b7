// Tensor-core matrix multiply-accumulate for CUDA: D = A * B + C for one
// 16x8x16 (16-bit operands, sm_80 and later) or 16x8x32 (8-bit float
// operands, sm_89 and later) tile per warp, f32 accumulators.
//
//   mma_m16n8k16_f16f32   mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
//   mma_m16n8k16_bf16f32  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
//   mma_m16n8k32_<A><B>f32, A and B each e4m3 or e5m2:
//                         mma.sync.aligned.m16n8k32.row.col.f32.<A>.<B>.f32
//
// Every lane of the warp must execute the call. Per-lane fragments (lane id
// l, g = l >> 2, q = l & 3; two 16-bit values per register, lower column in
// the low half):
//   a[0] (g, 2q..2q+1)   a[1] (g+8, 2q..2q+1)   a[2] (g, 2q+8..)   a[3] (g+8, 2q+8..)
//   b[0] (k=2q..2q+1, n=g)   b[1] (k=2q+8..2q+9, n=g)
//   c/d[0..1] (g, 2q), (g, 2q+1)   c/d[2..3] (g+8, 2q), (g+8, 2q+1)
// d may be the same array as c.
//
// m16n8k32 with 8-bit operands (four values per register, the lowest k in
// the lowest byte): a[0] (g, 4q..4q+3)  a[1] (g+8, 4q..4q+3)
// a[2] (g, 16+4q..16+4q+3)  a[3] (g+8, 16+4q..);  b[0] (k=4q..4q+3, n=g)
// b[1] (k=16+4q..16+4q+3, n=g);  c/d as for m16n8k16.
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

template <int ND, int NA, int NB, int NC>
__device__ __forceinline__ void check_mma_m16n8k32_fragments() {
  static_assert(ND == 4 && NC == 4,
                "mma m16n8k32: the f32 accumulator fragment is float[4] per lane (c and d)");
  static_assert(NA == 4, "mma m16n8k32: the A fragment (16x32, 8-bit) is uint32_t[4] per lane");
  static_assert(NB == 2, "mma m16n8k32: the B fragment (32x8, 8-bit) is uint32_t[2] per lane");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 890
  static_assert(ND == 0,
                "mma m16n8k32 with float8 operands needs sm_89 or later; on sm_80 convert the "
                "operands to f16 and use mma_m16n8k16_f16f32");
#endif
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

template <int ND, int NA, int NB, int NC>
__device__ __forceinline__ void mma_m16n8k32_e4m3e4m3f32(float (&d)[ND], const uint32_t (&a)[NA],
                                                         const uint32_t (&b)[NB],
                                                         const float (&c)[NC]) {
  detail::check_mma_m16n8k32_fragments<ND, NA, NB, NC>();
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}

template <int ND, int NA, int NB, int NC>
__device__ __forceinline__ void mma_m16n8k32_e4m3e5m2f32(float (&d)[ND], const uint32_t (&a)[NA],
                                                         const uint32_t (&b)[NB],
                                                         const float (&c)[NC]) {
  detail::check_mma_m16n8k32_fragments<ND, NA, NB, NC>();
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}

template <int ND, int NA, int NB, int NC>
__device__ __forceinline__ void mma_m16n8k32_e5m2e4m3f32(float (&d)[ND], const uint32_t (&a)[NA],
                                                         const uint32_t (&b)[NB],
                                                         const float (&c)[NC]) {
  detail::check_mma_m16n8k32_fragments<ND, NA, NB, NC>();
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}

template <int ND, int NA, int NB, int NC>
__device__ __forceinline__ void mma_m16n8k32_e5m2e5m2f32(float (&d)[ND], const uint32_t (&a)[NA],
                                                         const uint32_t (&b)[NB],
                                                         const float (&c)[NC]) {
  detail::check_mma_m16n8k32_fragments<ND, NA, NB, NC>();
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
}

}  // namespace tl

#endif  // TILEC_DEVICE_CUDA_TL_MMA_H_
