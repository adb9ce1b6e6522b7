// Block-level tensor-core gemm (docs/cuda_backend.md, "Gemm"). Target-neutral:
// built only on tl::ldmatrix_*, tl::mma_m16n8k16_*, the tl element types and
// threadIdx, so the emulator runs this very code. Included by the target's
// tl/tl.h after those primitives.
//
//   gemm_ss<M, N, K, WarpsM, WarpsN, TransA, TransB, LayoutA, LayoutB>(A_smem, B_smem, C_frag)
//   gemm_rs<...same...>(A_frag, B_smem, C_frag)
//
// C += op(A) @ op(B) for the block tile, f32 accumulation, k-steps of 16 in
// ascending order. A in shared memory is stored [M, K] ([K, M] when TransA),
// B is stored [K, N] ([N, K] when TransB); each is addressed through its
// layout type (tl::RowMajor or tl::Swizzled), whose kCols must be the stored
// column count (kRows may be larger: further rows are not read). Operands
// are tl::half_t or tl::bfloat16_t, C is float.
//
// Preconditions: the block has a multiple of 32 * WarpsM * WarpsN threads,
// all calling; M % (16 * WarpsM) == 0, N % (8 * WarpsN) == 0, K % 16 == 0
// (checked at compile time). When the block has more warps than the
// partition, each further group of WarpsM * WarpsN warps computes the same
// tile again (the replicated warp groups of layout inference).
//
// Warp w = (threadIdx.x / 32) % (WarpsM * WarpsN) owns rows wm * WM .. (wm + 1) * WM - 1 and
// columns wn * WN .. of C, wm = w % WarpsM, wn = w / WarpsM, WM = M / WarpsM, WN = N / WarpsN
// (detail::WarpTile). C_frag (MI * NI * 4 floats, MI = WM / 16, NI = WN / 8) is in the
// accumulator layout: local ((mi * NI + ni) * 2 + h) * 2 + e holds
//   C(wm * WM + mi * 16 + h * 8 + lane / 4, wn * WN + ni * 8 + 2 * (lane % 4) + e).
// gemm_rs takes A (stored [M, K]; TransA must be false) from registers in
// the accumulator layout of an [M, K] tile with WarpsN = 1: local
// ((mi * (K / 8) + kk) * 2 + h) * 2 + e holds
//   A(wm * WM + mi * 16 + h * 8 + lane / 4, kk * 8 + 2 * (lane % 4) + e).
#ifndef TILEC_DEVICE_COMMON_TL_GEMM_H_
#define TILEC_DEVICE_COMMON_TL_GEMM_H_

#include "tl/layout.h"

namespace tl {
namespace detail {

template <typename A, typename B>
struct same_type {
  static constexpr bool value = false;
};
template <typename A>
struct same_type<A, A> {
  static constexpr bool value = true;
};

// The m16n8k16 instruction for an operand type.
template <typename AT>
struct Mma16816 {
  static_assert(sizeof(AT) == 0, "tl::gemm: operands must be tl::half_t or tl::bfloat16_t");
};
template <>
struct Mma16816<half_t> {
  __device__ __forceinline__ static void run(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    mma_m16n8k16_f16f32(d, a, b, d);
  }
};
template <>
struct Mma16816<bfloat16_t> {
  __device__ __forceinline__ static void run(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    mma_m16n8k16_bf16f32(d, a, b, d);
  }
};

// Two 16-bit values in one register, lo in the low half (mma operand order).
template <typename T>
__device__ __forceinline__ uint32_t pack_b16x2(const T& lo, const T& hi) {
  static_assert(sizeof(T) == 2, "tl::gemm: operands must be 16-bit types");
  uint16_t l = 0;
  uint16_t h = 0;
#if defined(__CUDACC__)
  memcpy(&l, &lo, 2);
  memcpy(&h, &hi, 2);
#else
  __builtin_memcpy(&l, &lo, 2);
  __builtin_memcpy(&h, &hi, 2);
#endif
  return static_cast<uint32_t>(l) | (static_cast<uint32_t>(h) << 16);
}

template <int M, int N, int K, int WarpsM, int WarpsN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, typename AT, typename CT>
__device__ __forceinline__ void check_gemm() {
  static_assert(WarpsM >= 1 && WarpsN >= 1, "tl::gemm: WarpsM and WarpsN must be at least 1");
  static_assert(M % (16 * WarpsM) == 0,
                "tl::gemm: M must be a multiple of 16 * WarpsM (each warp computes whole "
                "16-row mma tiles)");
  static_assert(N % (8 * WarpsN) == 0,
                "tl::gemm: N must be a multiple of 8 * WarpsN (each warp computes whole "
                "8-column mma tiles)");
  static_assert(K % 16 == 0, "tl::gemm: K must be a multiple of 16 (the mma k-step)");
  static_assert(same_type<CT, float>::value, "tl::gemm: the accumulator C must be float");
  static_assert(same_type<AT, half_t>::value || same_type<AT, bfloat16_t>::value,
                "tl::gemm: operands must be tl::half_t or tl::bfloat16_t");
  static_assert(LayoutB::kCols == (TransB ? K : N),
                "tl::gemm: LayoutB's column count must be B's stored column count "
                "(N, or K when TransB)");
  static_assert(LayoutB::kRows >= (TransB ? N : K),
                "tl::gemm: LayoutB has fewer rows than B stores (K, or N when TransB)");
}

// This thread's place in a WarpsM x WarpsN warp partition of an M x N tile
// (the rule at the top of this file, shared by every gemm template and by
// layout inference): its lane and the first row and column of its warp's
// WM x WN tile, made of MI x NI mma tiles of 16 x 8.
template <int M, int N, int WarpsM, int WarpsN>
struct WarpTile {
  static constexpr int WM = M / WarpsM;
  static constexpr int WN = N / WarpsN;
  static constexpr int MI = WM / 16;
  static constexpr int NI = WN / 8;
  int lane, m_base, n_base;
  __device__ __forceinline__ WarpTile() {
    const int warp = static_cast<int>(threadIdx.x) / 32 % (WarpsM * WarpsN);
    lane = static_cast<int>(threadIdx.x) % 32;
    m_base = (warp % WarpsM) * WM;
    n_base = (warp / WarpsM) * WN;
  }
};

// B fragments of k-step k0 for the 8-column tiles n0 and n0 + 8 (b0, b1), or
// n0 only when Pair is false. Stored [N, K] (TransB) rows are n and feed the
// mma's column-major B directly; stored [K, N] needs the transposing load.
template <bool TransB, bool Pair, typename LayoutB, typename AT>
__device__ __forceinline__ void load_b(const AT* B, int n0, int k0, int lane, uint32_t (&b0)[2],
                                       uint32_t (&b1)[2]) {
  const int r = lane % 8;
  const int m = lane / 8;  // matrix this lane addresses: (k half, n half)
  const int k_half = m & 1;
  const int n_half = Pair ? (m >> 1) : 0;
  if constexpr (TransB) {
    const AT* p = B + LayoutB::offset(n0 + n_half * 8 + r, k0 + k_half * 8);
    if constexpr (Pair) {
      uint32_t t[4];
      ldmatrix_x4(t, p);
      b0[0] = t[0], b0[1] = t[1], b1[0] = t[2], b1[1] = t[3];
    } else {
      ldmatrix_x2(b0, p);
    }
  } else {
    const AT* p = B + LayoutB::offset(k0 + k_half * 8 + r, n0 + n_half * 8);
    if constexpr (Pair) {
      uint32_t t[4];
      ldmatrix_x4_trans(t, p);
      b0[0] = t[0], b0[1] = t[1], b1[0] = t[2], b1[1] = t[3];
    } else {
      ldmatrix_x2_trans(b0, p);
    }
  }
}

// All B fragments of one warp for k-step k0.
template <int NI, bool TransB, typename LayoutB, typename AT>
__device__ __forceinline__ void load_b_row(const AT* B, int n_base, int k0, int lane,
                                           uint32_t (&b)[NI][2]) {
#pragma unroll
  for (int ni = 0; ni + 1 < NI; ni += 2) {
    load_b<TransB, true, LayoutB>(B, n_base + ni * 8, k0, lane, b[ni], b[ni + 1]);
  }
  if constexpr (NI % 2 == 1) {
    load_b<TransB, false, LayoutB>(B, n_base + (NI - 1) * 8, k0, lane, b[NI - 1], b[NI - 1]);
  }
}

template <int MI, int NI, typename AT, typename CT>
__device__ __forceinline__ void mma_tile(const uint32_t (&a)[MI][4], const uint32_t (&b)[NI][2],
                                         CT* C_frag) {
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
      CT* c = C_frag + (mi * NI + ni) * 4;
      float d[4] = {c[0], c[1], c[2], c[3]};
      Mma16816<AT>::run(d, a[mi], b[ni]);
      c[0] = d[0], c[1] = d[1], c[2] = d[2], c[3] = d[3];
    }
  }
}

}  // namespace detail

template <int M, int N, int K, int WarpsM, int WarpsN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, typename AT, typename CT>
__device__ __forceinline__ void gemm_ss(const AT* A_smem, const AT* B_smem, CT* C_frag) {
  detail::check_gemm<M, N, K, WarpsM, WarpsN, TransA, TransB, LayoutA, LayoutB, AT, CT>();
  static_assert(LayoutA::kCols == (TransA ? M : K),
                "tl::gemm_ss: LayoutA's column count must be A's stored column count "
                "(K, or M when TransA)");
  static_assert(LayoutA::kRows >= (TransA ? K : M),
                "tl::gemm_ss: LayoutA has fewer rows than A stores (M, or K when TransA)");
  using Tile = detail::WarpTile<M, N, WarpsM, WarpsN>;
  constexpr int MI = Tile::MI;
  constexpr int NI = Tile::NI;
  const Tile tile;
  const int lane = tile.lane, m_base = tile.m_base, n_base = tile.n_base;
  // ldmatrix x4 of a 16x16 A tile: lane supplies row (lane % 8) of matrix
  // (lane / 8); matrices 0..3 are a[0..3]: (m 0-7, k 0-7), (m 8-15, k 0-7),
  // (m 0-7, k 8-15), (m 8-15, k 8-15).
  const int r = lane % 8;
  const int m_half = (lane / 8) & 1;
  const int k_half = (lane / 8) >> 1;
  // One k-step of 16 from A and B (each at its k-block's start).
  auto step = [&](const AT* A, const AT* B, int k0) {
    uint32_t a[MI][4];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const int m0 = m_base + mi * 16;
      if constexpr (TransA) {
        ldmatrix_x4_trans(a[mi], A + LayoutA::offset(k0 + k_half * 8 + r, m0 + m_half * 8));
      } else {
        ldmatrix_x4(a[mi], A + LayoutA::offset(m0 + m_half * 8 + r, k0 + k_half * 8));
      }
    }
    uint32_t b[NI][2];
    detail::load_b_row<NI, TransB, LayoutB>(B, n_base, k0, lane, b);
    detail::mma_tile<MI, NI, AT>(a, b, C_frag);
  };
  // A long k (more than 16 steps: MLA's 512-deep scores) unrolled whole
  // keeps every step's fragments in flight and spills; where both operands
  // run along k in their columns and repeat with a column period, the steps
  // go one period block at a time (the block unrolled, its start advanced by
  // the period's constant shift).
  using PA = ColumnPeriod<LayoutA>;
  using PB = ColumnPeriod<LayoutB>;
  constexpr int kBlockK =
      PA::kCols > PB::kCols ? (PA::kCols > 16 ? PA::kCols : 16) : (PB::kCols > 16 ? PB::kCols : 16);
  if constexpr (!TransA && TransB && PA::kCols > 0 && PB::kCols > 0 && K > 256 &&
                K % kBlockK == 0 && kBlockK % PA::kCols == 0 && kBlockK % PB::kCols == 0) {
#pragma unroll 1
    for (int kb = 0; kb < K / kBlockK; ++kb) {
      const AT* A = A_smem + kb * (kBlockK / PA::kCols) * PA::kShift;
      const AT* B = B_smem + kb * (kBlockK / PB::kCols) * PB::kShift;
#pragma unroll
      for (int k0 = 0; k0 < kBlockK; k0 += 16) step(A, B, k0);
    }
  } else {
#pragma unroll
    for (int k0 = 0; k0 < K; k0 += 16) step(A_smem, B_smem, k0);
  }
}

template <int M, int N, int K, int WarpsM, int WarpsN, bool TransA, bool TransB, typename LayoutA,
          typename LayoutB, typename AT, typename CT>
__device__ __forceinline__ void gemm_rs(const AT* A_frag, const AT* B_smem, CT* C_frag) {
  detail::check_gemm<M, N, K, WarpsM, WarpsN, TransA, TransB, LayoutA, LayoutB, AT, CT>();
  static_assert(!TransA,
                "tl::gemm_rs: a register A operand is [M, K]; transpose_A is not supported "
                "with A in registers");
  using Tile = detail::WarpTile<M, N, WarpsM, WarpsN>;
  constexpr int MI = Tile::MI;
  constexpr int NI = Tile::NI;
  constexpr int KI = K / 8;  // 8-column groups of the A fragment
  const Tile tile;
  const int lane = tile.lane, n_base = tile.n_base;
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 16) {
    const int kk = k0 / 8;
    uint32_t a[MI][4];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      // a[0] (g, k 0-7), a[1] (g+8, k 0-7), a[2] (g, k 8-15), a[3] (g+8, k 8-15)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int h = j & 1;
        const int idx = ((mi * KI + kk + (j >> 1)) * 2 + h) * 2;
        a[mi][j] = detail::pack_b16x2(A_frag[idx], A_frag[idx + 1]);
      }
    }
    uint32_t b[NI][2];
    detail::load_b_row<NI, TransB, LayoutB>(B_smem, n_base, k0, lane, b);
    detail::mma_tile<MI, NI, AT>(a, b, C_frag);
  }
}

}  // namespace tl

#endif  // TILEC_DEVICE_COMMON_TL_GEMM_H_
