// Host twin of the tensor-core mma wrappers:
//   mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32
// d = a @ b + c over the warp. The emulator gathers every lane's fragments and
// places each register's elements where the PTX ISA's m16n8k16 figures put
// them (docs/cuda_backend.md "Primitives"), so a fragment filled in the wrong
// layout computes the wrong product. Products are exact in float; the sum
// accumulates k = 0..15 in order onto c, rounding each step to float.
//
// mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2}.{e4m3,e5m2}.f32 (the
// sm_89+ float8 mma) is emulated here on top of the warp shuffle: each lane
// fetches, from the lanes the PTX ISA's m16n8k32 figures assign them to, the
// two rows of A (g, g + 8) and the two columns of B (2q, 2q + 1) its four
// results need, then sums k = 0..31 in order onto c (products of float8
// values are exact in float). Fragment tables (lane l, g = l >> 2, q = l & 3,
// four 8-bit values per register, the lowest k in the lowest byte):
//   a[0] (g, 4q..4q+3)  a[1] (g+8, 4q..4q+3)  a[2] (g, 16+4q..)  a[3] (g+8, 16+4q..)
//   b[0] (k=4q..4q+3, n=g)  b[1] (k=16+4q..16+4q+3, n=g)
//   c/d[0..1] (g, 2q..2q+1)  c/d[2..3] (g+8, 2q..2q+1)
#ifndef TILEC_DEVICE_HOST_TL_MMA_H_
#define TILEC_DEVICE_HOST_TL_MMA_H_

#include "tl/shfl.h"
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

// The float8 m16n8k32 mma, AT and BT the operand types (tl::fp8_e4m3_t or
// tl::fp8_e5m2_t). Every lane of the warp must call it (it shuffles).
template <typename AT, typename BT>
inline void mma_m16n8k32_f8(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                            const float (&c)[4]) {
  const int lane = static_cast<int>(self()->lane);
  const int g = lane >> 2, q = lane & 3;
  // rows[h][w]: bytes k = 4w..4w+3 of A's row g + 8h. Lane 4g + t holds
  // k = 4t.. in a[h] and k = 16 + 4t.. in a[2 + h].
  uint32_t rows[2][8];
  for (int j = 0; j < 4; ++j) {
    for (int t = 0; t < 4; ++t) {
      rows[j & 1][(j >> 1) * 4 + t] = shfl(kWarpShflIdx, a[j], 4 * g + t);
    }
  }
  // cols[e][w]: bytes k = 4w..4w+3 of B's column 2q + e. Lane 4n + t holds
  // k = 4t.. of column n in b[0] and k = 16 + 4t.. in b[1].
  uint32_t cols[2][8];
  for (int r = 0; r < 2; ++r) {
    for (int e = 0; e < 2; ++e) {
      for (int t = 0; t < 4; ++t) {
        cols[e][r * 4 + t] = shfl(kWarpShflIdx, b[r], 4 * (2 * q + e) + t);
      }
    }
  }
  float out[4];
  for (int h = 0; h < 2; ++h) {
    for (int e = 0; e < 2; ++e) {
      float acc = c[h * 2 + e];
      for (int k = 0; k < 32; ++k) {
        const auto ab = static_cast<uint8_t>(rows[h][k / 4] >> (8 * (k % 4)));
        const auto bb = static_cast<uint8_t>(cols[e][k / 4] >> (8 * (k % 4)));
        acc += float(AT::from_bits(ab)) * float(BT::from_bits(bb));  // exact product
      }
      out[h * 2 + e] = acc;
    }
  }
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

template <int ND, int NA, int NB, int NC>
inline void check_mma_m16n8k32_fragments() {
  static_assert(ND == 4 && NC == 4,
                "mma m16n8k32: the f32 accumulator fragment is float[4] per lane (c and d)");
  static_assert(NA == 4, "mma m16n8k32: the A fragment (16x32, 8-bit) is uint32_t[4] per lane");
  static_assert(NB == 2, "mma m16n8k32: the B fragment (32x8, 8-bit) is uint32_t[2] per lane");
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

template <int ND, int NA, int NB, int NC>
inline void mma_m16n8k32_e4m3e4m3f32(float (&d)[ND], const uint32_t (&a)[NA],
                                     const uint32_t (&b)[NB], const float (&c)[NC]) {
  detail::check_mma_m16n8k32_fragments<ND, NA, NB, NC>();
  host::mma_m16n8k32_f8<fp8_e4m3_t, fp8_e4m3_t>(d, a, b, c);
}

template <int ND, int NA, int NB, int NC>
inline void mma_m16n8k32_e4m3e5m2f32(float (&d)[ND], const uint32_t (&a)[NA],
                                     const uint32_t (&b)[NB], const float (&c)[NC]) {
  detail::check_mma_m16n8k32_fragments<ND, NA, NB, NC>();
  host::mma_m16n8k32_f8<fp8_e4m3_t, fp8_e5m2_t>(d, a, b, c);
}

template <int ND, int NA, int NB, int NC>
inline void mma_m16n8k32_e5m2e4m3f32(float (&d)[ND], const uint32_t (&a)[NA],
                                     const uint32_t (&b)[NB], const float (&c)[NC]) {
  detail::check_mma_m16n8k32_fragments<ND, NA, NB, NC>();
  host::mma_m16n8k32_f8<fp8_e5m2_t, fp8_e4m3_t>(d, a, b, c);
}

template <int ND, int NA, int NB, int NC>
inline void mma_m16n8k32_e5m2e5m2f32(float (&d)[ND], const uint32_t (&a)[NA],
                                     const uint32_t (&b)[NB], const float (&c)[NC]) {
  detail::check_mma_m16n8k32_fragments<ND, NA, NB, NC>();
  host::mma_m16n8k32_f8<fp8_e5m2_t, fp8_e5m2_t>(d, a, b, c);
}

}  // namespace tl

#endif  // TILEC_DEVICE_HOST_TL_MMA_H_
