// Host twin of the tensor-core mma wrappers:
//   mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32
// d = a @ b + c over the warp. The emulator gathers every lane's fragments and
// places each register's elements where the PTX ISA's m16n8k16 figures put
// them (docs/cuda_backend.md "Primitives"), so a fragment filled in the wrong
// layout computes the wrong product. Products are exact in float; the sum
// accumulates k = 0..15 in order onto c, rounding each step to float.
#ifndef TILEC_DEVICE_HOST_TL_MMA_H_
#define TILEC_DEVICE_HOST_TL_MMA_H_

#include "tl/thread.h"
#include "tl/types.h"

namespace tl {
namespace host {

inline void mma(int32_t kind, float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                const float (&c)[4]) {
  MmaIn in{kind, {a[0], a[1], a[2], a[3]}, {b[0], b[1]}, {c[0], c[1], c[2], c[3]}};
  float out[4];
  collective(kWarpMma, &in, out);
  for (int i = 0; i < 4; ++i) d[i] = out[i];
}

}  // namespace host

namespace detail {

template <int ND, int NA, int NB, int NC>
inline void check_mma_m16n8k16_fragments() {
  static_assert(ND == 4 && NC == 4,
                "mma m16n8k16: the f32 accumulator fragment is float[4] per lane (c and d)");
  static_assert(NA == 4, "mma m16n8k16: the A fragment (16x16, 16-bit) is uint32_t[4] per lane");
  static_assert(NB == 2, "mma m16n8k16: the B fragment (16x8, 16-bit) is uint32_t[2] per lane");
}

}  // namespace detail

// d may be the same array as c (c is read before d is written).
template <int ND, int NA, int NB, int NC>
inline void mma_m16n8k16_f16f32(float (&d)[ND], const uint32_t (&a)[NA], const uint32_t (&b)[NB],
                                const float (&c)[NC]) {
  detail::check_mma_m16n8k16_fragments<ND, NA, NB, NC>();
  host::mma(host::kMmaM16N8K16F16F32, d, a, b, c);
}

template <int ND, int NA, int NB, int NC>
inline void mma_m16n8k16_bf16f32(float (&d)[ND], const uint32_t (&a)[NA], const uint32_t (&b)[NB],
                                 const float (&c)[NC]) {
  detail::check_mma_m16n8k16_fragments<ND, NA, NB, NC>();
  host::mma(host::kMmaM16N8K16Bf16F32, d, a, b, c);
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_MMA_H_
