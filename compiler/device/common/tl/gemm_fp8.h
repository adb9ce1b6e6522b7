// Block-level tensor-core gemm with float8 operands (docs/cuda_backend.md,
// "Gemm", float8). Target-neutral like tl/gemm.h, whose warp partition and
// accumulator layout it shares:
//
//   gemm_ss_fp8<M, N, K, WarpsM, WarpsN, TransA, TransB, LayoutA, LayoutB, Native>(A, B, C)
//
// C += op(A) @ op(B), A and B in shared memory (stored [M, K] / [K, M] when
// TransA, [K, N] / [N, K] when TransB) of tl::fp8_e4m3_t or tl::fp8_e5m2_t
// (mixed allowed), C float in the accumulator layout. k-steps of 32.
//
// Operand fragments are those of mma.m16n8k32 with 8-bit operands (tl/mma.h):
// a K-major operand (A stored [M, K], B stored [N, K]) is loaded with
// ldmatrix, whose b16 rows of 16 bytes hand lane l the bytes 4 (l % 4) ..
// 4 (l % 4) + 3 of row l / 4, exactly the 8-bit fragment; an M- or N-major
// operand (A stored [K, M], B stored [K, N]) has the four k values of a
// register in four different rows, which ldmatrix's .trans (a b16
// transpose) cannot gather, so each lane reads its bytes with four scalar
// shared loads through the layout type.
//
// Native = true (sm_89 and later): one mma.sync.m16n8k32.f32.<A>.<B>.f32 per
// tile. Native = false (sm_80): each 8-bit register is converted in
// registers to two f16x2 registers and the k-step runs as two
// mma.sync.m16n8k16.f32.f16.f16.f32. Exact: every e4m3 and e5m2 value is an
// f16 value and f16 products are exact in f32. The k order inside the m16n8k16
// steps is a permutation (the same for A and B), which changes only the f32
// summation order.
//
// Preconditions: as tl::gemm_ss, with K % 32 == 0.
#ifndef TILEC_DEVICE_COMMON_TL_GEMM_FP8_H_
#define TILEC_DEVICE_COMMON_TL_GEMM_FP8_H_

#include "tl/gemm.h"

namespace tl {
namespace detail {

template <typename T>
struct is_fp8 {
  static constexpr bool value = false;
};
template <>
struct is_fp8<fp8_e4m3_t> {
  static constexpr bool value = true;
};
template <>
struct is_fp8<fp8_e5m2_t> {
  static constexpr bool value = true;
};

// Bytes `byte` and `byte + 1` of w (float8 values of type T) as an f16x2
// register, the first in the low half. Exact.
template <typename T>
__device__ __forceinline__ uint32_t fp8x2_to_f16x2(uint32_t w, int byte) {
  const auto lo = static_cast<uint8_t>(w >> (8 * byte));
  const auto hi = static_cast<uint8_t>(w >> (8 * byte + 8));
  if constexpr (same_type<T, fp8_e5m2_t>::value) {
    // e5m2 is the upper byte of f16 (same exponent bias, infinities, NaNs).
    return (static_cast<uint32_t>(lo) << 8) | (static_cast<uint32_t>(hi) << 24);
  } else {
    const uint32_t l = half_t(float(T::from_bits(lo))).bits();
    const uint32_t h = half_t(float(T::from_bits(hi))).bits();
    return l | (h << 16);
  }
}

// One 16x8x32 tile: d += a @ b with 8-bit fragments.
template <bool Native, typename AT, typename BT>
__device__ __forceinline__ void mma_fp8(float (&d)[4], const uint32_t (&a)[4],
                                        const uint32_t (&b)[2]) {
  // Chosen with if constexpr so that sm_80 code never instantiates the
  // float8 mma (which does not exist there).
  constexpr bool a_e4m3 = same_type<AT, fp8_e4m3_t>::value;
  constexpr bool b_e4m3 = same_type<BT, fp8_e4m3_t>::value;
  if constexpr (Native && a_e4m3 && b_e4m3) {
    mma_m16n8k32_e4m3e4m3f32(d, a, b, d);
  } else if constexpr (Native && a_e4m3) {
    mma_m16n8k32_e4m3e5m2f32(d, a, b, d);
  } else if constexpr (Native && b_e4m3) {
    mma_m16n8k32_e5m2e4m3f32(d, a, b, d);
  } else if constexpr (Native) {
    mma_m16n8k32_e5m2e5m2f32(d, a, b, d);
  } else {
    // m16n8k16 step s covers k = 16 s .. 16 s + 15 (registers a[2 s], a[2 s + 1], b[s]):
    // its k index 2q + e is k 4q + e, and 2q + 8 + e is k 4q + 2 + e.
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      const uint32_t a16[4] = {fp8x2_to_f16x2<AT>(a[2 * s], 0), fp8x2_to_f16x2<AT>(a[2 * s + 1], 0),
                               fp8x2_to_f16x2<AT>(a[2 * s], 2),
                               fp8x2_to_f16x2<AT>(a[2 * s + 1], 2)};
      const uint32_t b16[2] = {fp8x2_to_f16x2<BT>(b[s], 0), fp8x2_to_f16x2<BT>(b[s], 2)};
      mma_m16n8k16_f16f32(d, a16, b16, d);
    }
  }
}

// Four consecutive-k bytes of an 8-bit operand whose k runs down the stored
// rows: element (k0 + i, c) for i = 0..3, the first in the low byte.
template <typename Layout, typename T>
__device__ __forceinline__ uint32_t gather_k4(const T* base, int k0, int c) {
  const auto* p = reinterpret_cast<const uint8_t*>(base);
  uint32_t w = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) w |= static_cast<uint32_t>(p[Layout::offset(k0 + i, c)]) << (8 * i);
  return w;
}

}  // namespace detail

template <int M, int N, int K, int WarpsM, int WarpsN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, bool Native, typename AT, typename BT, typename CT>
__device__ __forceinline__ void gemm_ss_fp8(const AT* A_smem, const BT* B_smem, CT* C_frag) {
  static_assert(detail::is_fp8<AT>::value && detail::is_fp8<BT>::value,
                "tl::gemm_ss_fp8: operands must be tl::fp8_e4m3_t or tl::fp8_e5m2_t");
  static_assert(detail::same_type<CT, float>::value,
                "tl::gemm_ss_fp8: the accumulator C must be float");
  static_assert(WarpsM >= 1 && WarpsN >= 1, "tl::gemm_ss_fp8: WarpsM and WarpsN must be >= 1");
  static_assert(M % (16 * WarpsM) == 0, "tl::gemm_ss_fp8: M must be a multiple of 16 * WarpsM");
  static_assert(N % (8 * WarpsN) == 0, "tl::gemm_ss_fp8: N must be a multiple of 8 * WarpsN");
  static_assert(K % 32 == 0, "tl::gemm_ss_fp8: K must be a multiple of 32 (the float8 k-step)");
  static_assert(LayoutA::kCols == (TransA ? M : K),
                "tl::gemm_ss_fp8: LayoutA's column count must be A's stored column count");
  static_assert(LayoutA::kRows >= (TransA ? K : M),
                "tl::gemm_ss_fp8: LayoutA has fewer rows than A stores");
  static_assert(LayoutB::kCols == (TransB ? K : N),
                "tl::gemm_ss_fp8: LayoutB's column count must be B's stored column count");
  static_assert(LayoutB::kRows >= (TransB ? N : K),
                "tl::gemm_ss_fp8: LayoutB has fewer rows than B stores");
  using Tile = detail::WarpTile<M, N, WarpsM, WarpsN>;
  constexpr int MI = Tile::MI;
  constexpr int NI = Tile::NI;
  const Tile tile;
  const int lane = tile.lane, m_base = tile.m_base, n_base = tile.n_base;
  const int g = lane / 4, q = lane % 4;
  // ldmatrix addressing: lane supplies row (lane % 8) of matrix (lane / 8).
  const int r = lane % 8;
  const int mat = lane / 8;
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 32) {
    uint32_t a[MI][4];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const int m0 = m_base + mi * 16;
      if constexpr (TransA) {
        // a[j]: row m0 + g + 8 (j & 1), k = k0 + 16 (j >> 1) + 4q .. + 3.
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          a[mi][j] =
              detail::gather_k4<LayoutA>(A_smem, k0 + (j >> 1) * 16 + 4 * q, m0 + g + (j & 1) * 8);
        }
      } else {
        // matrices 0..3 = a[0..3]: (m 0-7, k 0-15), (m 8-15, k 0-15),
        // (m 0-7, k 16-31), (m 8-15, k 16-31); a row is 16 bytes.
        ldmatrix_x4(a[mi], A_smem + LayoutA::offset(m0 + (mat & 1) * 8 + r, k0 + (mat >> 1) * 16));
      }
    }
    uint32_t b[NI][2];
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
      const int n0 = n_base + ni * 8;
      if constexpr (TransB) {
        if (ni % 2 == 0 && ni + 1 < NI) {
          // matrices: (n 0-7, k 0-15), (n 0-7, k 16-31), (n 8-15, k 0-15), (n 8-15, k 16-31)
          uint32_t t[4];
          ldmatrix_x4(t, B_smem + LayoutB::offset(n0 + (mat >> 1) * 8 + r, k0 + (mat & 1) * 16));
          b[ni][0] = t[0], b[ni][1] = t[1], b[ni + 1][0] = t[2], b[ni + 1][1] = t[3];
        } else if (ni % 2 == 0) {
          ldmatrix_x2(b[ni], B_smem + LayoutB::offset(n0 + r, k0 + (mat & 1) * 16));
        }
      } else {
        // b[s]: k = k0 + 16 s + 4q .. + 3, column n0 + g.
        b[ni][0] = detail::gather_k4<LayoutB>(B_smem, k0 + 4 * q, n0 + g);
        b[ni][1] = detail::gather_k4<LayoutB>(B_smem, k0 + 16 + 4 * q, n0 + g);
      }
    }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) {
        CT* c = C_frag + (mi * NI + ni) * 4;
        float d[4] = {c[0], c[1], c[2], c[3]};
        detail::mma_fp8<Native, AT, BT>(d, a[mi], b[ni]);
        c[0] = d[0], c[1] = d[1], c[2] = d[2], c[3] = d[3];
      }
    }
  }
}

#if defined(TILEC_DEVICE_HOST_TL_BUFFER_H_)
// The emulator's checked shared pointers (host/tl/buffer.h, as the
// overloads of host/tl/buffer_ops.h do for tl::gemm_ss): the rows of each
// operand the gemm reads are checked once per call, then the plain version
// runs on the raw pointers.
template <int M, int N, int K, int WarpsM, int WarpsN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, bool Native, typename AP, typename BP, typename CT>
  requires(host::Checked<AP> || host::Checked<BP>)
inline void gemm_ss_fp8(const AP& A_smem, const BP& B_smem, CT* C_frag) {
  using AT = std::remove_cv_t<std::remove_pointer_t<decltype(host::raw(A_smem))>>;
  using BT = std::remove_cv_t<std::remove_pointer_t<decltype(host::raw(B_smem))>>;
  host::check_range(A_smem, uint64_t{TransA ? K : M} * LayoutA::kCols * sizeof(AT), false);
  host::check_range(B_smem, uint64_t{TransB ? N : K} * LayoutB::kCols * sizeof(BT), false);
  gemm_ss_fp8<M, N, K, WarpsM, WarpsN, TransA, TransB, LayoutA, LayoutB, Native>(
      static_cast<const AT*>(host::raw(A_smem)), static_cast<const BT*>(host::raw(B_smem)),
      C_frag);
}
#endif

}  // namespace tl

#endif  // TILEC_DEVICE_COMMON_TL_GEMM_FP8_H_
